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

/* Why target cannot be the probe's address (a branch or an address in code[0..n) at off reaches it), or
 * NULL when nothing does.  why: room for the reason. */
static const char *reached(const unsigned char *code, size_t n, unsigned long off, unsigned long target, char *why,
			   size_t len)
{
	const uint8_t *p = code;
	uint64_t addr = off;
	size_t left = n;
	const char *r = NULL;
	cs_insn *in;
	csh h;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return "Capstone could not start";
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	in = cs_malloc(h);
	while (!r && left && in && cs_disasm_iter(h, &p, &left, &addr, in)) {
		const cs_x86 *x = &in->detail->x86;
		bool rel = cs_insn_group(h, in, CS_GRP_BRANCH_RELATIVE);
		/* a notrack indirect jump or call (a jump table) may land anywhere; a tracked one only on an
		 * endbr64 in code built with control-flow protection, as a function starting with one is */
		bool notrack = x->prefix[1] == X86_PREFIX_DS &&
			       (cs_insn_group(h, in, CS_GRP_JUMP) || cs_insn_group(h, in, CS_GRP_CALL));

		for (int o = 0; o < x->op_count && !r; o++) {
			const cs_x86_op *op = &x->operands[o];

			if (rel && op->type == X86_OP_IMM && (unsigned long)op->imm == target)
				snprintf(why, len, "%s at +0x%lx targets +0x%lx", in->mnemonic, (unsigned long)in->address - off,
					 target - off), r = why;
			else if (op->type == X86_OP_MEM && op->mem.base == X86_REG_RIP && op->mem.index == X86_REG_INVALID &&
				 in->address + in->size + op->mem.disp == target)
				snprintf(why, len, "%s at +0x%lx takes +0x%lx's address", in->mnemonic,
					 (unsigned long)in->address - off, target - off), r = why;
			else if (notrack && !rel && !o)
				snprintf(why, len, "notrack %s at +0x%lx (a jump table: targets unknown)", in->mnemonic,
					 (unsigned long)in->address - off), r = why;
		}
	}
	if (!r && left)
		snprintf(why, len, "Capstone cannot decode %02x %02x %02x %02x... at +0x%lx", p[0], left > 1 ? p[1] : 0,
			 left > 2 ? p[2] : 0, left > 3 ? p[3] : 0, (unsigned long)(addr - off)), r = why;
	if (in)
		cs_free(in, 1);
	cs_close(&h);
	return r;
}

void probe_place_decide(const unsigned char *code, size_t n, unsigned long off, struct uprobe_insn *insn,
			struct probe_place *out)
{
	struct uprobe_insn next;
	char why[80];
	const char *no;

	keep(out, off, "");
	if (n < ENDBR64_LEN + 1 || memcmp(code, endbr64, ENDBR64_LEN) || insn->cls != UINSN_SSTEP)
		return;
	uprobe_insn_classify(code + ENDBR64_LEN, n - ENDBR64_LEN, &next);
	if (next.cls != UINSN_EMULATED) {
		snprintf(out->why, sizeof(out->why), "endbr64 then %s: not emulated", next.why);
		return;
	}
	if ((no = reached(code, n, off, off + ENDBR64_LEN, why, sizeof(why)))) {
		snprintf(out->why, sizeof(out->why), "endbr64 kept: %s", no);
		return;
	}
	out->offset = off + ENDBR64_LEN;
	out->moved = true;
	snprintf(out->why, sizeof(out->why), "past endbr64");
	snprintf(insn->why, sizeof(insn->why), "%.48s after endbr64", next.why);
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
	unsigned char *code;
	ssize_t n;

	keep(out, off, at == PROBE_AT_SYMBOL ? "--probe-at=symbol" : "");
	if (at == PROBE_AT_SYMBOL || insn->cls != UINSN_SSTEP)
		return;
	if (!size || size > PROBE_PLACE_MAX_BYTES) {
		/* only endbr64 functions would move: say why those stay */
		unsigned char b[ENDBR64_LEN];

		if (pread(fd, b, sizeof(b), off) == sizeof(b) && !memcmp(b, endbr64, ENDBR64_LEN))
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
