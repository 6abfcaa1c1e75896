// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Unit tests for uprobe_insn.c: entry-instruction classes as the x86 kernel decides them
 * (emulated, single-stepped, refused), from instruction bytes of real libraries.  Every
 * accepted/refused expectation here was checked against kernel 6.18 (a uprobe perf event
 * on the bytes in a file mapped exec: 0 or error 524). */
#include <string.h>
#include "check.h"
#include "sym/uprobe_insn.h"

static void expect(const char *what, const unsigned char *b, size_t n, enum uprobe_insn_class cls, const char *why)
{
	struct uprobe_insn u;

	uprobe_insn_classify(b, n, &u);
	check(u.cls == cls && (!why || strstr(u.why, why)), "%s: %s (%s)", what, uprobe_insn_class_name(u.cls), u.why);
}

int main(void)
{
#if defined(__x86_64__)
	/* llama.cpp's zen4 tinyBLAS gemm: vmovq %rcx,%xmm18, EVEX opcode 0x6e (outs in the one-byte table) */
	expect("EVEX vmovq", (const unsigned char[]){ 0x62, 0xe1, 0xfd, 0x08, 0x6e, 0xd1 }, 6, UINSN_REFUSED, "EVEX");
	/* EVEX vmovups (opcode 0x10): the kernel takes it, single-stepped */
	expect("EVEX vmovups", (const unsigned char[]){ 0x62, 0xf1, 0x7c, 0x48, 0x10, 0x06 }, 6, UINSN_SSTEP, "EVEX");
	/* VEX vzeroupper c5 f8 77: opcode 0x77 (ja) is in the table */
	expect("VEX vzeroupper", (const unsigned char[]){ 0xc5, 0xf8, 0x77 }, 3, UINSN_SSTEP, "VEX");
	/* glibc pthread_spin_lock: lock decl (%rdi) */
	expect("lock prefix", (const unsigned char[]){ 0xf0, 0xff, 0x0f }, 3, UINSN_REFUSED, "lock");
	expect("fs segment is fine", (const unsigned char[]){ 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0 }, 9,
	       UINSN_SSTEP, NULL);
	expect("cs segment override", (const unsigned char[]){ 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 }, 9,
	       UINSN_REFUSED, "segment");
	expect("push %rbp", (const unsigned char[]){ 0x55, 0x48, 0x89, 0xe5 }, 4, UINSN_EMULATED, "push %rbp");
	expect("push %r15", (const unsigned char[]){ 0x41, 0x57 }, 2, UINSN_EMULATED, "push %r15");
	expect("jmp rel32", (const unsigned char[]){ 0xe9, 1, 2, 3, 4 }, 5, UINSN_EMULATED, "jmp");
	expect("nop", (const unsigned char[]){ 0x90 }, 1, UINSN_EMULATED, "nop");
	expect("endbr64", (const unsigned char[]){ 0xf3, 0x0f, 0x1e, 0xfa }, 4, UINSN_SSTEP, "endbr64");
	expect("sub $8,%rsp", (const unsigned char[]){ 0x48, 0x83, 0xec, 0x08 }, 4, UINSN_SSTEP, NULL);
	expect("int3", (const unsigned char[]){ 0xcc }, 1, UINSN_REFUSED, NULL);
	expect("syscall", (const unsigned char[]){ 0x0f, 0x05 }, 2, UINSN_SSTEP, NULL);
	expect("0x82", (const unsigned char[]){ 0x82, 0xc0, 0 }, 3, UINSN_REFUSED, NULL);
	expect("pshufb (3-byte opcode)", (const unsigned char[]){ 0x66, 0x0f, 0x38, 0x00, 0xc1 }, 5, UINSN_SSTEP, NULL);
	expect("truncated", (const unsigned char[]){ 0x66 }, 1, UINSN_REFUSED, "unreadable");
#else
	skip("uprobe_insn: x86 decoding", "not an x86-64 build");
#endif
	/* arm64, as kernel 6.12 decides: the emulated-PMU guest measured b and adrp simulated (3,147 and
	 * 3,160 instructions a probed call), stp, mov, nop, bti c and paciasp stepped (3,622-3,826), and
	 * the encodings below are from aarch64-linux-gnu-objdump */
	static const struct { const char *what; unsigned int insn; enum uprobe_insn_class cls; const char *why; } a64[] = {
		{ "stp x29, x30, [sp, #-16]!", 0xa9bf7bfd, UINSN_SSTEP, NULL },
		{ "mov x29, sp", 0x910003fd, UINSN_SSTEP, NULL },
		{ "bti c", 0xd503245f, UINSN_SSTEP, "bti c" },
		{ "paciasp", 0xd503233f, UINSN_SSTEP, "paciasp" },
		{ "nop", 0xd503201f, UINSN_SSTEP, "nop" },
		{ "b .+8", 0x14000002, UINSN_EMULATED, "b" },
		{ "bl .+8", 0x94000002, UINSN_EMULATED, "bl" },
		{ "adrp x1, 0x400000", 0x90000001, UINSN_EMULATED, "adrp" },
		{ "adr x0, .+8", 0x10000040, UINSN_EMULATED, "adr" },
		{ "cbz x0, .+8", 0xb4000040, UINSN_EMULATED, "cbz" },
		{ "tbnz w0, #3, .+8", 0x37180040, UINSN_EMULATED, "tbz" },
		{ "b.ne .+8", 0x54000041, UINSN_EMULATED, "b.cond" },
		{ "ret", 0xd65f03c0, UINSN_EMULATED, "ret" },
		{ "br x16", 0xd61f0200, UINSN_EMULATED, "br" },
		{ "ldr x0, literal", 0x58000040, UINSN_EMULATED, "literal" },
		{ "ldxr x0, [x1]", 0xc85f7c20, UINSN_REFUSED, "exclusive" },
		{ "svc #0", 0xd4000001, UINSN_REFUSED, "exception" },
		{ "ldr q0, literal", 0x9c000040, UINSN_REFUSED, "literal" },
	};
	for (size_t k = 0; k < sizeof(a64) / sizeof(a64[0]); k++) {
		unsigned char w[4] = { a64[k].insn & 0xff, a64[k].insn >> 8 & 0xff, a64[k].insn >> 16 & 0xff,
				       a64[k].insn >> 24 };
		struct uprobe_insn u;

		uprobe_insn_classify_arm64(w, 4, &u);
		check(u.cls == a64[k].cls && (!a64[k].why || strstr(u.why, a64[k].why)), "arm64 %s: %s (%s)", a64[k].what,
		      uprobe_insn_class_name(u.cls), u.why);
	}
	return check_exit();
}
