// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Where a function's entry probe goes: past endbr64 when proven safe.  See probe_place.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sym/probe_place.h"
#if defined(__x86_64__)
#include <capstone/capstone.h>
#endif

static void keep(struct probe_place *out, unsigned long off, const char *why)
{
	out->offset = off;
	out->moved = false;
	snprintf(out->why, sizeof(out->why), "%s", why);
}

#define ENDBR64_LEN 4
static const unsigned char endbr64[ENDBR64_LEN] = { 0xf3, 0x0f, 0x1e, 0xfa };

#if defined(__x86_64__)

/* Why the probe cannot go to target: something in code[0..n) at off reaches an address in (off, target]
 * (a branch, or a RIP-relative address: a loop back to it would count a call at each turn, a jump past
 * the symbol into the instructions stepped over would miss the probe's frame), or the code does not
 * decode; NULL when nothing does.  why: room for the reason. */
static const char *reached(csh h, cs_insn *in, const unsigned char *code, size_t n, unsigned long off,
			   unsigned long target, char *why, size_t len)
{
	const uint8_t *p = code;
	uint64_t addr = off;
	size_t left = n;
	const char *r = NULL;

	while (!r && left && cs_disasm_iter(h, &p, &left, &addr, in)) {
		const cs_x86 *x = &in->detail->x86;
		bool rel = cs_insn_group(h, in, CS_GRP_BRANCH_RELATIVE);
		/* a notrack indirect jump or call (a jump table) may land anywhere; a tracked one only on an
		 * endbr64 in code built with control-flow protection, as a function starting with one is */
		bool notrack = x->prefix[1] == X86_PREFIX_DS &&
			       (cs_insn_group(h, in, CS_GRP_JUMP) || cs_insn_group(h, in, CS_GRP_CALL));

		for (int o = 0; o < x->op_count && !r; o++) {
			const cs_x86_op *op = &x->operands[o];
			unsigned long to = op->type == X86_OP_IMM ? (unsigned long)op->imm
					   : in->address + in->size + op->mem.disp;

			if (rel && op->type == X86_OP_IMM && to > off && to <= target)
				snprintf(why, len, "%s at +0x%lx targets +0x%lx", in->mnemonic, (unsigned long)in->address - off,
					 to - off), r = why;
			else if (op->type == X86_OP_MEM && op->mem.base == X86_REG_RIP && op->mem.index == X86_REG_INVALID &&
				 to > off && to <= target)
				snprintf(why, len, "%s at +0x%lx takes +0x%lx's address", in->mnemonic,
					 (unsigned long)in->address - off, to - off), r = why;
			else if (notrack && !rel && !o)
				snprintf(why, len, "notrack %s at +0x%lx (a jump table: targets unknown)", in->mnemonic,
					 (unsigned long)in->address - off), r = why;
		}
	}
	if (!r && left)
		snprintf(why, len, "Capstone cannot decode %02x %02x %02x %02x... at +0x%lx", p[0], left > 1 ? p[1] : 0,
			 left > 2 ? p[2] : 0, left > 3 ? p[3] : 0, (unsigned long)(addr - off)), r = why;
	return r;
}

static bool stack_or_frame_reg(x86_reg r)
{
	return r == X86_REG_RSP || r == X86_REG_ESP || r == X86_REG_SP || r == X86_REG_SPL || r == X86_REG_RBP ||
	       r == X86_REG_EBP || r == X86_REG_BP || r == X86_REG_BPL;
}

/* An instruction the probe may move past: it reads registers or memory and writes only flags or a
 * general register other than the stack and frame pointers (the return address stays at the stack
 * pointer, a frame-pointer walk from the probe stays right): cmp, test, or mov/movzx/movsx/movsxd/lea
 * into such a register; no lock or rep prefix. */
static bool passable(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	if (x->prefix[0])
		return false;
	switch (in->id) {
	case X86_INS_CMP:
	case X86_INS_TEST:
		return true;
	case X86_INS_MOV:
	case X86_INS_MOVZX:
	case X86_INS_MOVSX:
	case X86_INS_MOVSXD:
	case X86_INS_LEA:
		return x->op_count == 2 && x->operands[0].type == X86_OP_REG && !stack_or_frame_reg(x->operands[0].reg);
	default:
		return false;
	}
}

/* The offset (from the symbol) of the first instruction after endbr64 the kernel emulates, past at most
 * PROBE_PLACE_MAX_PASSED passable ones (*passed of them); 0 when there is none (why says what stops it). */
static size_t first_emulated(csh h, cs_insn *in, const unsigned char *code, size_t n, struct uprobe_insn *next,
			     int *passed, char *why, size_t len)
{
	size_t at = ENDBR64_LEN;

	for (*passed = 0;; (*passed)++) {
		const uint8_t *p = code + at;
		uint64_t addr = at;
		size_t left = n - at;

		uprobe_insn_classify(code + at, n - at, next);
		if (next->cls == UINSN_EMULATED)
			return at;
		if (!left || !cs_disasm_iter(h, &p, &left, &addr, in) || !passable(in) ||
		    *passed == PROBE_PLACE_MAX_PASSED) {
			if (*passed)
				snprintf(why, len, "then %d instructions and %.40s: not emulated", *passed, next->why);
			else
				snprintf(why, len, "then %.48s: not emulated", next->why);
			return 0;
		}
		at += in->size;
	}
}

void probe_place_decide(const unsigned char *code, size_t n, unsigned long off, struct uprobe_insn *insn,
			struct probe_place *out)
{
	struct uprobe_insn next;
	char why[80];
	const char *no = NULL;
	size_t at = 0;
	int passed = 0;
	cs_insn *in;
	csh h;

	keep(out, off, "");
	if (n < ENDBR64_LEN + 1 || memcmp(code, endbr64, ENDBR64_LEN) || insn->cls != UINSN_SSTEP)
		return;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) {
		snprintf(out->why, sizeof(out->why), "endbr64 kept: Capstone could not start");
		return;
	}
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	in = cs_malloc(h);
	if (in && !(at = first_emulated(h, in, code, n, &next, &passed, why, sizeof(why))))
		snprintf(out->why, sizeof(out->why), "endbr64 %s", why);
	else if (in && (no = reached(h, in, code, n, off, off + at, why, sizeof(why))))
		snprintf(out->why, sizeof(out->why), "endbr64 kept: %s", no);
	if (in)
		cs_free(in, 1);
	cs_close(&h);
	if (!at || no)
		return;
	out->offset = off + at;
	out->moved = true;
	if (passed)
		snprintf(out->why, sizeof(out->why), "past endbr64 and %d instructions", passed);
	else
		snprintf(out->why, sizeof(out->why), "past endbr64");
	snprintf(insn->why, sizeof(insn->why), "%.40s after endbr64%s", next.why, passed ? " and more" : "");
	insn->cls = next.cls;
}
#else
void probe_place_decide(const unsigned char *code, size_t n, unsigned long off, struct uprobe_insn *insn,
			struct probe_place *out)
{
	keep(out, off, "");
}
#endif

void probe_place_at(int fd, unsigned long off, unsigned long size, enum probe_at at, struct uprobe_insn *insn,
		    struct probe_place *out)
{
	unsigned char b[ENDBR64_LEN], *code;
	ssize_t n;

	keep(out, off, at == PROBE_AT_SYMBOL ? "--probe-at=symbol" : "");
	/* only a function starting with endbr64 moves: the rest are not read further */
	if (at == PROBE_AT_SYMBOL || insn->cls != UINSN_SSTEP || pread(fd, b, sizeof(b), off) != sizeof(b) ||
	    memcmp(b, endbr64, ENDBR64_LEN))
		return;
	if (!size || size > PROBE_PLACE_MAX_BYTES) {
		snprintf(out->why, sizeof(out->why), "endbr64 kept: function size %s, its branches not checked",
			 size ? "over 1 MiB" : "unknown");
		return;
	}
	code = malloc(size);
	n = code ? pread(fd, code, size, off) : -1;
	if (n > 0)
		probe_place_decide(code, (size_t)n, off, insn, out);
	free(code);
}
