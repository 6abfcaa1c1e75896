// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Unit tests for probe_place.c: where the entry probe goes, from function bytes (x86-64): past endbr64
 * onto an emulated instruction unless something in the function reaches that address. */
#include <string.h>
#include "check.h"
#include "sym/probe_place.h"

#define OFF 0x1000ul

static void expect(const char *what, const unsigned char *b, size_t n, unsigned long offset, const char *why)
{
	struct uprobe_insn insn;
	struct probe_place p;

	uprobe_insn_classify(b, n, &insn);
	probe_place_decide(b, n, OFF, &insn, &p);
	check(p.offset == offset && p.moved == (offset != OFF) && (!why || strstr(p.why, why)) &&
	      insn.cls == (p.moved ? UINSN_EMULATED : insn.cls), "%s: +0x%lx %s (%s, %s)", what, p.offset - OFF,
	      p.why, uprobe_insn_class_name(insn.cls), insn.why);
}

#define B(...) (const unsigned char[]){ __VA_ARGS__ }, sizeof((const unsigned char[]){ __VA_ARGS__ })
#define ENDBR 0xf3, 0x0f, 0x1e, 0xfa

int main(void)
{
#if defined(__x86_64__)
	/* endbr64; push %rbp; mov %rsp,%rbp; pop %rbp; ret */
	expect("endbr64 push", B(ENDBR, 0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3), OFF + 4, "past endbr64");
	/* endbr64; push %r15; ...; jmp *%rax (a tracked tail call: lands on an endbr64) */
	expect("tracked tail call", B(ENDBR, 0x41, 0x57, 0x41, 0x5f, 0xff, 0xe0), OFF + 4, "past endbr64");
	/* endbr64; 1: push %rbp; inc %rsi; pop %rbp; cmp %rdi,%rsi; jb 1b; ret (tests/workloads/placement.c) */
	expect("loop back to +4", B(ENDBR, 0x55, 0x48, 0xff, 0xc6, 0x5d, 0x48, 0x39, 0xfe, 0x72, 0xf6, 0xc3), OFF,
	       "jb at +0xc targets +0x4");
	/* a call to +4 (rel32) */
	expect("call +4", B(ENDBR, 0x55, 0xe8, 0xfa, 0xff, 0xff, 0xff, 0x5d, 0xc3), OFF, "call at +0x5 targets +0x4");
	/* loop rel8 back to +4: not in Capstone's jump group, but relative */
	expect("loop insn", B(ENDBR, 0x90, 0xe2, 0xfd, 0xc3), OFF, "loop at +0x5 targets +0x4");
	/* lea -0x8(%rip),%rax takes +4's address */
	expect("address taken", B(ENDBR, 0x55, 0x48, 0x8d, 0x05, 0xf8, 0xff, 0xff, 0xff, 0x5d, 0xc3), OFF,
	       "takes +0x4's address");
	/* notrack jmp *%rax: a jump table, targets unknown */
	expect("notrack jump table", B(ENDBR, 0x55, 0x3e, 0xff, 0xe0), OFF, "notrack");
	/* llama.cpp's ggml_barrier (zen4 backend): endbr64; mov 0x68(%rdi),%eax; movzwl %ax,%esi; cmp $1,%ax;
	 * je ...: the probe moves past the three onto the je (emulated) */
	expect("ggml_barrier", B(ENDBR, 0x8b, 0x47, 0x68, 0x0f, 0xb7, 0xf0, 0x66, 0x83, 0xf8, 0x01, 0x74, 0x01, 0xc3, 0xc3),
	       OFF + 14, "past endbr64 and 3 instructions");
	/* the same with a jump back to the movzwl (+7), inside what the probe would pass: stays */
	expect("jump into the passed instructions", B(ENDBR, 0x8b, 0x47, 0x68, 0x0f, 0xb7, 0xf0, 0x66, 0x83, 0xf8, 0x01,
						      0x74, 0x01, 0xc3, 0xeb, 0xf4), OFF, "jmp at +0x11 targets +0x7");
	/* endbr64; mov %rdi,%rsp...: a write to the stack pointer is never passed */
	expect("mov to rsp", B(ENDBR, 0x48, 0x89, 0xfc, 0x74, 0x00, 0xc3), OFF, "not emulated");
	/* endbr64; mov %eax,(%rdi): a memory write is never passed */
	expect("store", B(ENDBR, 0x89, 0x07, 0x74, 0x00, 0xc3), OFF, "not emulated");
	/* endbr64; sub $8,%rsp: single-stepped at +4 too: stays */
	expect("endbr64 sub", B(ENDBR, 0x48, 0x83, 0xec, 0x08, 0xc3), OFF, "not emulated");
	/* no endbr64: nothing to gain */
	expect("push at the symbol", B(0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3), OFF, NULL);
	/* bytes Capstone cannot decode (0x06: push es, invalid in 64-bit mode) */
	expect("undecodable", B(ENDBR, 0x55, 0x06, 0x5d, 0xc3), OFF, "cannot decode");
	/* endbr64 alone (size 4): nothing after it to probe */
	expect("endbr64 only", B(ENDBR), OFF, NULL);
#else
	skip("probe_place: x86 placement", "not an x86-64 build");
#endif
	return check_exit();
}
