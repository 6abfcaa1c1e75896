/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * roofs_likwid: measure this host's roofs with likwid-bench (Debian's likwid
 * package), the field's reference for measured roofs.
 *
 * Per figure, the widest kernel likwid-bench has for the CPU's ISA
 * (AVX-512 FMA, AVX FMA, SSE, scalar): peakflops_sp_* and peakflops_* at an
 * L1-sized working set for the FLOP/s peaks; load_* (read), stream_*_fma
 * (triad) and copy_* (copy with ordinary stores, as memcpy copies: mbw -t0)
 * at working sets of half of L1d, L2 and L3 and of four times the L3 (DRAM),
 * for 1 thread and for every online CPU (likwid-bench -W N:SIZE:THREADS,
 * threads pinned in the node domain).  Each figure is run `repeats` times; its
 * median, min and max are kept.  likwid-bench counts bytes as it states them
 * (MByte/s: 1e6 bytes; a copy counts what it reads and what it writes).
 */
#ifndef TMABPF_ROOFS_LIKWID_H
#define TMABPF_ROOFS_LIKWID_H
#include <stdbool.h>
#include <stddef.h>
#include "pmu/roofs.h"

struct roofs_measure_opts {
	int repeats;		/* per figure, >= 1 */
	double seconds;		/* likwid-bench -s: minimum time of one run */
	bool skip_all_threads;	/* only the 1-thread figures */
	const char *only;	/* NULL, or a comma list of figure names (roofs_figure_name) to measure */
	/* called after each figure (and before each, with f NULL), for progress lines */
	void (*progress)(const char *what, const struct roof_figure *f, void *arg);
	void *arg;
};

/* Measure r's figures (r->host must be filled).  0, or -errno with one line in err
 * (likwid-bench missing: the package to install; a run that failed: its message). */
int roofs_measure(struct roofs *r, const struct roofs_measure_opts *o, char *err, size_t errlen);

/* A figure's name for --only: "peak-fp32", "peak-fp64", "read-L2", "triad-DRAM", ... */
void roofs_figure_name(char *buf, size_t len, bool flops, int prec_or_bw, enum roof_level l);
/* Is every name of the comma list a figure name?  Else the first that is not, in bad. */
bool roofs_only_valid(const char *only, char *bad, size_t badlen);

/* One likwid-bench run: the figure its output states (MFlops/s for a peakflops test, else
 * MByte/s), in units per second, or a negative errno with err (exposed for the tests). */
int roofs_likwid_run(const char *test, unsigned long long ws_bytes, int threads, double seconds, double *value,
		     char *err, size_t errlen);

#endif
