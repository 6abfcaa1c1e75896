/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * uprobe_insn: what a uprobe at a function's entry costs, or why the kernel
 * refuses it.  The kernel puts an int3 on the first instruction and then
 * either emulates that instruction (x86: push reg, call/jmp/jcc rel, nop) or
 * runs a copy of it single-stepped (a second trap: slower), or refuses the
 * probe (error 524, ENOTSUPP): on x86 a lock or segment-override prefix, or an
 * opcode outside its table of safe ones (EVEX/VEX instructions are checked by
 * their opcode byte alone, so e.g. an EVEX vmovq, opcode 0x6e, is refused).
 *
 * uprobe_insn_classify() decodes the first bytes (read with pread) the way
 * the kernel's check does (arch/x86/kernel/uprobes.c: prefixes, then the
 * opcode byte against its tables).  Asking the kernel itself (a uprobe perf
 * event on our own exec mapping of the file) is exact but costs ~100 ms per
 * function here (each unregister waits for an RCU grace period): a refusal the
 * decoder misses shows at attach time instead (uprobes_loader.c).
 */
#ifndef TMABPF_UPROBE_INSN_H
#define TMABPF_UPROBE_INSN_H
#include <stdbool.h>
#include <stddef.h>

enum uprobe_insn_class {
	UINSN_EMULATED = 0,	/* one trap */
	UINSN_SSTEP,		/* trap, out-of-line single step, second trap */
	UINSN_REFUSED,		/* the kernel cannot probe it */
};

#define UINSN_BYTES 16	/* longest x86 instruction is 15 bytes */

struct uprobe_insn {
	enum uprobe_insn_class cls;
	char why[64];		/* "EVEX-encoded (opcode 0x6e)", "lock prefix", "push %rbp" ... */
};

/* Classify the instruction in b[0..n) for this host (x86-64, arm64; others: single-stepped). */
void uprobe_insn_classify(const unsigned char *b, size_t n, struct uprobe_insn *out);
/* The arm64 decision on any host (for its tests): b[0..4) little-endian. */
void uprobe_insn_classify_arm64(const unsigned char *b, size_t n, struct uprobe_insn *out);

/* Short name of a class: "emulated", "single-stepped", "unprobeable". */
const char *uprobe_insn_class_name(enum uprobe_insn_class c);

/* Per library: its file, opened for the reads below. */
struct uprobe_insn_file {
	int fd;
};

/* Open path for classification.  0 or -errno (err filled). */
int uprobe_insn_open(struct uprobe_insn_file *f, const char *path, char *err, size_t errlen);
/* Read (pread) and classify the function at file offset off. */
void uprobe_insn_at(struct uprobe_insn_file *f, unsigned long off, struct uprobe_insn *out);
void uprobe_insn_close(struct uprobe_insn_file *f);

#endif
