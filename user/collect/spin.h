/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * spin: the functions whose on-CPU time is spin-waiting, not work (--per-call's
 * compute vs spin): a built-in set (OpenMP runtimes' barriers and waits,
 * OpenBLAS's server loop, ggml's barrier, sched_yield, MKL's barriers) and the
 * --spin LIB:GLOB specs, resolved to file-offset ranges of their files
 * (bpf/samples.h) that the sample program checks each sample's user code
 * against.
 */
#ifndef TMABPF_SPIN_H
#define TMABPF_SPIN_H
#include <stddef.h>
#include "bpf/samples.h"

struct spin_set {
	struct spin_range r[SPIN_MAX_RANGES];
	int n;
	int builtin_specs;	/* built-in LIB:GLOB that matched functions on this host */
	int truncated;		/* functions past SPIN_MAX_RANGES, not classified */
};

/* The built-in set, then specs (LIB:GLOB; pid -1: none, exe: the command for ':GLOB').  A built-in
 * library missing here is skipped; a spec that resolves to nothing is bad input: -errno with one
 * line in err. */
int spin_set_resolve(struct spin_set *s, const char *const *specs, int nspecs, int pid, const char *exe, char *err,
		     size_t errlen);

struct uprobe_set;
/* Mark the probed functions of u that are in s (uprobe_func.spin): the uprobes then count their
 * on-CPU time as spin, with or without samples. */
void spin_set_mark(const struct spin_set *s, struct uprobe_set *u);

#endif
