// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * placement - functions with known first instructions, called a known number
 * of times, for the entry probe's placement (user/sym/probe_place.h).
 *
 *   placement N      calls each function N times (pl_endbr_fault every 100th time, 16
 *                    pages); prints {"calls": N, "sum": S}
 *
 *   pl_endbr_push    endbr64; push %rbp: probed past endbr64 (emulated push)
 *   pl_push          push %rbp: the emulated class at the symbol
 *   pl_endbr_sub     endbr64; sub $8,%rsp: single-stepped wherever probed
 *   pl_endbr_mov(p)  endbr64; mov (%rdi),%eax; cmp $1,%eax; je (llama.cpp's ggml_barrier): probed
 *                    past endbr64 and 2 instructions, on the je
 *   pl_endbr_fault(p)  endbr64; push %rbp; calls pl_touch(p), which faults p fresh pages
 *   pl_loop_back(k, 0)  endbr64; then a loop of k turns whose branch jumps back to
 *                    the instruction after endbr64 (push %rbp): a probe there
 *                    would count k calls a call, so it keeps the symbol's address
 *
 * x86-64 only (assembly).  S: the sum of pl_loop_back's results (k each), so a
 * corrupted return or a skipped turn shows in the output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "asm_func.h"

#if defined(__x86_64__)
ASM_FUNC_ENDBR_PUSH(pl_endbr_push);
ASM_FUNC_PUSH(pl_push);
ASM_FUNC(pl_endbr_sub, "endbr64\nsub $8,%rsp\nadd $8,%rsp\nret\n");
/* rsi counts the turns from 0 (the caller's) to k, returned */
ASM_FUNC(pl_loop_back, "endbr64\n.Lpl_again:\npush %rbp\ninc %rsi\npop %rbp\n"
		      "cmp %rdi,%rsi\njb .Lpl_again\nmov %rsi,%rax\nret\n");

ASM_FUNC(pl_endbr_mov, "endbr64\nmov (%rdi),%eax\ncmp $1,%eax\nje .Lpl_one\nadd $1,%eax\n.Lpl_one:\nret\n");
ASM_FUNC(pl_endbr_fault, "endbr64\npush %rbp\nmov %rsp,%rbp\ncall pl_touch\npop %rbp\nret\n");

/* p fresh pages, each written once: p page faults */
__attribute__((noinline, used)) void pl_touch(long p)
{
	volatile char *m = mmap(NULL, p * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		abort();
	for (long i = 0; i < p; i++)
		m[i * 4096] = 1;
	munmap((void *)m, p * 4096);
}

int pl_endbr_push(int x);
void pl_endbr_fault(long pages);
int pl_push(int x);
int pl_endbr_mov(const int *p);
void pl_endbr_sub(void);
long pl_loop_back(long k, long zero);

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, sum = 0;
	static const int one = 1;

	for (long i = 0; i < n; i++) {
		sum += pl_endbr_push(0) - 1;
		sum += pl_push(0) - 1;
		sum += pl_endbr_mov(&one) - 1;
		pl_endbr_sub();
		sum += pl_loop_back(3, 0);
		if (i % 100 == 0)
			pl_endbr_fault(16);
	}
	printf("{\"calls\": %ld, \"sum\": %ld}\n", n, sum);
	return 0;
}
#else
int main(void)
{
	fprintf(stderr, "placement: x86-64 only\n");
	return 2;
}
#endif
