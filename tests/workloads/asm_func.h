/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* x86-64 functions written in assembly with known first instructions, for the probe placement's
 * workload (placement.c) and bench (bench/uprobe_cost.c): ASM_FUNC(name, body) defines a global
 * function with its size (the placement's branch check reads that many bytes). */
#ifndef TMABPF_ASM_FUNC_H
#define TMABPF_ASM_FUNC_H

#define ASM_FUNC(name, body) \
	__asm__(".text\n.globl " #name "\n.type " #name ",@function\n.p2align 4\n" #name ":\n" body \
		".size " #name ", .-" #name "\n")

/* int name(int x) { return 3 * x + 1; } entered by endbr64; push %rbp (probed past endbr64), or by
 * push %rbp alone (the emulated class at the symbol) */
#define ASM_FUNC_ENDBR_PUSH(name) \
	ASM_FUNC(name, "endbr64\npush %rbp\nmov %rsp,%rbp\nlea 1(%rdi,%rdi,2),%eax\npop %rbp\nret\n")
#define ASM_FUNC_PUSH(name) ASM_FUNC(name, "push %rbp\nmov %rsp,%rbp\nlea 1(%rdi,%rdi,2),%eax\npop %rbp\nret\n")

#endif
