// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * entry_cost_arm64 FUNC N: calls FUNC (or "all" of them) N times and prints
 * "FUNC ns-per-call".  Run in the emulated-PMU guest (-icount shift=0: one
 * ns of guest time per instruction retired, at every level), with a uprobe
 * and a uretprobe on a function's first or second instruction, it measures
 * what a probed call costs by the class of the probed instruction
 * (bench/arm64-entry-cost.py).  Every function has the same body after one
 * or two leading instructions: the ones that open arm64 functions built with
 * branch protection (bti c, paciasp), a nop, and instructions the kernel
 * simulates (b, adrp) or steps out of line (stp, mov).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define F(name, body) __asm__(".text\n.globl " #name "\n.type " #name ",%function\n.p2align 4\n" #name ":\n" \
			      body "\n.size " #name ", .-" #name "\n")
#define TAIL "stp x29, x30, [sp, #-16]!\nmov x29, sp\nadd w0, w0, #1\nldp x29, x30, [sp], #16\n"
F(f_stp, TAIL "ret");
F(f_bti, "bti c\n" TAIL "ret");
F(f_bti_nop, "bti c\nnop\n" TAIL "ret");
F(f_bti_adrp, "bti c\nadrp x1, f_stp\n" TAIL "ret");
F(f_bti_b, "bti c\nb 1f\n1:\n" TAIL "ret");
F(f_bti_mov, "bti c\nmov x1, x0\n" TAIL "ret");
F(f_nop, "nop\n" TAIL "ret");
F(f_pac, "paciasp\n" TAIL "autiasp\nret");
int f_stp(int), f_bti(int), f_bti_nop(int), f_bti_adrp(int), f_bti_b(int), f_bti_mov(int), f_nop(int), f_pac(int);

static const struct {
	const char *name;
	int (*fn)(int);
} funcs[] = {
	{ "f_stp", f_stp }, { "f_bti", f_bti }, { "f_bti_nop", f_bti_nop }, { "f_bti_adrp", f_bti_adrp },
	{ "f_bti_b", f_bti_b }, { "f_bti_mov", f_bti_mov }, { "f_nop", f_nop }, { "f_pac", f_pac },
};

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 0;
	volatile int s = 0;

	if (n <= 0) {
		fprintf(stderr, "usage: entry_cost_arm64 FUNC|all N\n");
		return 2;
	}
	for (unsigned i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		struct timespec a, b;

		if (strcmp(argv[1], "all") && strcmp(argv[1], funcs[i].name))
			continue;
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (int k = 0; k < n; k++)
			s += funcs[i].fn(k);
		clock_gettime(CLOCK_MONOTONIC, &b);
		printf("%s %.1f\n", funcs[i].name, ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	}
	return 0;
}
