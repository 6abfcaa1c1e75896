/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * probe_place: the address a function's entry probe goes to.
 *
 * x86: a function built with control-flow protection starts with endbr64,
 * which the kernel's uprobe single-steps (a trap, the copy stepped, a second
 * trap).  When the next instruction is one the kernel emulates (push %rbp,
 * nop, a relative jump or call: uprobe_insn.h), the entry probe goes there, 4
 * bytes on: the same calls, and, endbr64 being a no-op, the same registers
 * and stack (the return address is still at the stack pointer when the probe
 * traps, before the push runs), so the return probe hijacks the right return
 * address; one trap instead of two.  Where endbr64 is followed by up to
 * PROBE_PLACE_MAX_PASSED loads and compares into registers other than the
 * stack and frame pointers before an emulated instruction (llama.cpp's
 * ggml_barrier: mov, movzwl, cmp, je), the probe goes on that instruction:
 * what ran before it changes nothing a probe reads (not the stack pointer, so
 * the return probe still finds the return address; not the frame pointer).
 *
 * Safe only when nothing in the function reaches that address but the fall
 * through from endbr64: a loop back to it would count a call at each turn and
 * plant a return probe over whatever is at the stack pointer then.  The
 * function's bytes (its symbol's size) are disassembled with Capstone and the
 * probe stays at the symbol when a relative branch (jmp, jcc, call, loop,
 * jrcxz, xbegin) or a RIP-relative address targets the new address or an
 * instruction passed (a jump there would run it without the probe), when the
 * function has an indirect jump (its targets are not known), or when its size
 * is unknown or its code does not decode.  Only the function's own bytes are
 * read: a branch from another symbol (a .cold part) is not seen.
 *
 * Other architectures: the symbol's address.  arm64, measured in the
 * emulated-PMU guest (kernel 6.12; bench/arm64-entry-cost.py, guest
 * instructions per probed call): the kernel steps bti c, paciasp, nop, stp
 * and mov out of line (3,622-3,826) and simulates b and adrp (3,147-3,160),
 * so moving past bti c would save 17 % only where b, adrp (or another
 * branch, adr, ldr literal) follows: 46 of the 303 bti c functions of
 * tmabpf's own C built with -mbranch-protection=standard (4 % of its 1,181
 * functions; 845 start with paciasp); Debian 12's arm64 files are built
 * without it (2 of 44,988 functions in 492 files start with bti c, none with
 * paciasp).  Never past paciasp: LR is signed by then, and the
 * return probe's unsigned trampoline address fails autiasp (the process
 * got SIGSEGV at the first return).  Not added.
 */
#ifndef TMABPF_PROBE_PLACE_H
#define TMABPF_PROBE_PLACE_H
#include <stdbool.h>
#include <stddef.h>
#include "sym/uprobe_insn.h"

enum probe_at {
	PROBE_AT_AUTO = 0,	/* past endbr64 where proven safe */
	PROBE_AT_SYMBOL,	/* --probe-at=symbol: always the symbol's address */
};

struct probe_place {
	unsigned long offset;	/* file offset probed */
	bool moved;		/* past the symbol's first instruction */
	char why[96];		/* "past endbr64", or why the symbol's address is kept */
};

/* Instructions after endbr64 the probe may move past (cmp, test, mov/lea into a register other than
 * the stack and frame pointers) to reach one the kernel emulates. */
#define PROBE_PLACE_MAX_PASSED 4

/* Largest function body read for the branch check; a longer one keeps its symbol's address. */
#define PROBE_PLACE_MAX_BYTES (1u << 20)

/*
 * Decide for the function whose code[0..n) lies at file offset off (n: its
 * symbol's size; 0 when unknown).  insn: its first instruction's class on
 * entry (uprobe_insn_classify), the probed instruction's on return.
 */
void probe_place_decide(const unsigned char *code, size_t n, unsigned long off, struct uprobe_insn *insn,
			struct probe_place *out);

/* Read the function at file offset off, size bytes, from fd and decide (as above); at: PROBE_AT_SYMBOL
 * keeps the symbol's address. */
void probe_place_at(int fd, unsigned long off, unsigned long size, enum probe_at at, struct uprobe_insn *insn,
		    struct probe_place *out);

#endif
