/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * probe_calib: what one probed call costs on this host, per entry-instruction
 * class (uprobe_insn.h), measured here and now: two tiny functions of this
 * binary, one entered by an emulated instruction (push %rbp) and one by a
 * single-stepped one, are called with and without an entry uprobe and a
 * return uprobe (perf events with no program: the trap, emulation or single
 * step, and return trampoline alone), in this process only.  The probe
 * programs' own time per hit (kernel BPF stats) comes on top.
 *
 * It takes ~0.5 s (each probe's removal waits for an RCU grace period), so it
 * runs only where a figure is shown: --dry-run --uprobe and the run-time guard
 * (collect/uprobe_run.c), once.
 */
#ifndef TMABPF_PROBE_CALIB_H
#define TMABPF_PROBE_CALIB_H
#include "sym/uprobe_insn.h"

struct probe_calib {
	double ns[2];		/* per call: [UINSN_EMULATED], [UINSN_SSTEP] (entry + return probe) */
};

/* 0, or -errno with err filled (no uprobe PMU, not root). */
int probe_calib_measure(struct probe_calib *c, char *err, size_t errlen);

#endif
