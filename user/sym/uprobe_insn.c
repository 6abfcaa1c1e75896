// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Entry-instruction class of a probed function, and the kernel's verdict.  See uprobe_insn.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "lib/warn.h"
#include "sym/uprobe_insn.h"

const char *uprobe_insn_class_name(enum uprobe_insn_class c)
{
	return c == UINSN_EMULATED ? "emulated" : c == UINSN_SSTEP ? "single-stepped" : "unprobeable";
}

#define SET(cls_, ...) do { out->cls = (cls_); snprintf(out->why, sizeof(out->why), __VA_ARGS__); } while (0)

#if defined(__x86_64__)
/*
 * The one-byte opcodes the x86 kernel single-steps or emulates in 64-bit code
 * (arch/x86/kernel/uprobes.c, good_insns_64); 0: refused.  Read off kernel
 * 6.18 itself: a uprobe perf event opened on each opcode (followed by modrm
 * 0xc0) in a file mapped exec by the opening process answers 0 or 524.
 * Refused: the old segment push/pops and BCD opcodes, 0x62 (EVEX, bound),
 * in/out/ins/outs, int3/int/into/iret, hlt, cli/sti, far calls/jumps, 0x82,
 * 0xd4/0xd6.  0x0f (two-byte opcodes) passes as a whole.  A VEX/EVEX
 * instruction is looked up here by its opcode byte alone.
 */
static const unsigned char good1[256] = {
	/*        0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f */
	/* 00 */  1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 0, 1,
	/* 10 */  1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0,
	/* 20 */  1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0,
	/* 30 */  1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0,
	/* 40 */  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 50 */  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 60 */  0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0,
	/* 70 */  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 80 */  1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 90 */  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1,
	/* a0 */  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* b0 */  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* c0 */  1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0,
	/* d0 */  1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* e0 */  1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 1, 0, 0, 0, 0,
	/* f0 */  0, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1,
};

void uprobe_insn_classify(const unsigned char *b, size_t n, struct uprobe_insn *out)
{
	bool rex_b = false;
	size_t i = 0;

	for (; i < n; i++) {
		unsigned char p = b[i];

		if (p == 0xf0) {
			SET(UINSN_REFUSED, "lock prefix");
			return;
		}
		if (p == 0x26 || p == 0x2e || p == 0x36 || p == 0x3e) {
			SET(UINSN_REFUSED, "segment-override prefix 0x%02x", p);
			return;
		}
		if (p != 0xf2 && p != 0xf3 && p != 0x64 && p != 0x65 && p != 0x66 && p != 0x67)
			break;
	}
	if (i < n && (b[i] & 0xf0) == 0x40) {	/* REX */
		rex_b = b[i] & 1;
		i++;
	}
	if (i >= n) {
		SET(UINSN_REFUSED, "unreadable");
		return;
	}
	if (b[i] == 0x62 || b[i] == 0xc4 || b[i] == 0xc5) {
		const char *enc = b[i] == 0x62 ? "EVEX" : "VEX";
		size_t at = i + (b[i] == 0x62 ? 4 : b[i] == 0xc4 ? 3 : 2);
		unsigned char op = at < n ? b[at] : 0;

		if (at >= n || !good1[op])
			SET(UINSN_REFUSED, "%s-encoded (opcode 0x%02x)", enc, op);
		else
			SET(UINSN_SSTEP, "%s-encoded (opcode 0x%02x)", enc, op);
		return;
	}
	switch (b[i]) {
	case 0x50 ... 0x57:
		SET(UINSN_EMULATED, "push %%r%s", (const char *[]){ "ax", "cx", "dx", "bx", "sp", "bp", "si", "di" }
			[b[i] - 0x50] + (rex_b ? 2 : 0));
		if (rex_b)
			snprintf(out->why, sizeof(out->why), "push %%r%d", 8 + b[i] - 0x50);
		return;
	case 0x70 ... 0x7f: case 0xe8: case 0xe9: case 0xeb:
		SET(UINSN_EMULATED, "%s rel", b[i] == 0xe8 ? "call" : b[i] >= 0xe9 ? "jmp" : "jcc");
		return;
	case 0x90:
		SET(UINSN_EMULATED, "nop");
		return;
	case 0x0f:
		if (i + 1 >= n) {
			SET(UINSN_REFUSED, "unreadable");
		} else if (b[i + 1] >= 0x80 && b[i + 1] <= 0x8f) {
			SET(UINSN_EMULATED, "jcc rel32");
		} else if (b[i + 1] == 0x1e && i + 2 < n && b[i + 2] == 0xfa) {
			SET(UINSN_SSTEP, "endbr64");
		} else {
			SET(UINSN_SSTEP, "opcode 0x0f 0x%02x", b[i + 1]);
		}
		return;
	default:
		if (good1[b[i]])
			SET(UINSN_SSTEP, "opcode 0x%02x", b[i]);
		else
			SET(UINSN_REFUSED, "opcode 0x%02x", b[i]);
	}
}
#endif

/*
 * arm64, as kernel 6.12 decides (arch/arm64/kernel/probes/decode-insn.c,
 * arm_probe_decode_insn): branches, adr/adrp and literal loads into general
 * registers are simulated (one trap; measured in the emulated-PMU guest:
 * 3,147-3,160 instructions a probed call against 3,622-3,826 stepped,
 * bench/arm64-entry-cost.py); exclusive loads and stores, exception
 * generation and other literal loads are refused; the rest (stp, mov, nop,
 * bti c, paciasp, ...) is stepped out of line.  Later kernels simulate nop.
 */
void uprobe_insn_classify_arm64(const unsigned char *b, size_t n, struct uprobe_insn *out)
{
	unsigned int i;

	if (n < 4) {
		SET(UINSN_REFUSED, "unreadable");
		return;
	}
	i = (unsigned int)b[0] | (unsigned int)b[1] << 8 | (unsigned int)b[2] << 16 | (unsigned int)b[3] << 24;
	if ((i & 0xff000010) == 0x54000000)
		SET(UINSN_EMULATED, "b.cond");
	else if ((i & 0x7e000000) == 0x34000000)
		SET(UINSN_EMULATED, "cbz/cbnz");
	else if ((i & 0x7e000000) == 0x36000000)
		SET(UINSN_EMULATED, "tbz/tbnz");
	else if ((i & 0x1f000000) == 0x10000000)
		SET(UINSN_EMULATED, "%s", i & 0x80000000 ? "adrp" : "adr");
	else if ((i & 0x7c000000) == 0x14000000)
		SET(UINSN_EMULATED, "%s", i & 0x80000000 ? "bl" : "b");
	else if ((i & 0xfffffc1f) == 0xd61f0000 || (i & 0xfffffc1f) == 0xd63f0000 || (i & 0xfffffc1f) == 0xd65f0000)
		SET(UINSN_EMULATED, "%s", (i & 0xfffffc1f) == 0xd65f0000 ? "ret" : "br/blr");
	else if ((i & 0xbf000000) == 0x18000000 || (i & 0xff000000) == 0x98000000)
		SET(UINSN_EMULATED, "ldr literal");
	else if ((i & 0x3b000000) == 0x18000000 || (i & 0xff000000) == 0xd8000000)
		SET(UINSN_REFUSED, "literal load into a vector register or prfm");
	else if ((i & 0x3f000000) == 0x08000000)
		SET(UINSN_REFUSED, "exclusive load/store");
	else if ((i & 0xff000000) == 0xd4000000)
		SET(UINSN_REFUSED, "exception generation (svc, brk, ...)");
	else if (i == 0xd503233f)
		SET(UINSN_SSTEP, "paciasp");
	else if (i == 0xd503245f)
		SET(UINSN_SSTEP, "bti c");
	else if (i == 0xd503201f)
		SET(UINSN_SSTEP, "nop");
	else
		SET(UINSN_SSTEP, "0x%08x", i);
}

#if defined(__aarch64__)
void uprobe_insn_classify(const unsigned char *b, size_t n, struct uprobe_insn *out)
{
	uprobe_insn_classify_arm64(b, n, out);
}
#elif !defined(__x86_64__)
void uprobe_insn_classify(const unsigned char *b, size_t n, struct uprobe_insn *out)
{
	SET(UINSN_SSTEP, "not decoded on this architecture");
}
#endif

int uprobe_insn_open(struct uprobe_insn_file *f, const char *path, char *err, size_t errlen)
{
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0) {
		err_set(err, errlen, "open %s: %s", path, strerror(errno));
		return -errno;
	}
	return 0;
}

void uprobe_insn_at(struct uprobe_insn_file *f, unsigned long off, struct uprobe_insn *out)
{
	unsigned char b[UINSN_BYTES];
	ssize_t n = f->fd >= 0 ? pread(f->fd, b, sizeof(b), off) : -1;

	if (n <= 0) {
		SET(UINSN_REFUSED, "unreadable at file offset 0x%lx", off);
		return;
	}
	uprobe_insn_classify(b, (size_t)n, out);
}

void uprobe_insn_close(struct uprobe_insn_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}
