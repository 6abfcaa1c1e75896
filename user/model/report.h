/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The model a run hands to every output (JSON file, text report, live view):
 * the thread table, function and sample rows, tmabpf's own cost, and the TMA
 * of any set of sums (report_tma: the one place outputs get TMA from). */
#ifndef TMABPF_REPORT_H
#define TMABPF_REPORT_H
#include <stdbool.h>
#include <stddef.h>
#include "model/folded.h"
#include "model/iterations.h"
#include "model/profile.h"
#include "model/results.h"
#include "model/roofline.h"
#include "model/sample_sums.h"
#include "model/thread_table.h"
#include "pmu/events.h"
#include "pmu/host.h"
#include "sym/uprobe_targets.h"
#include "tma/tma.h"

struct report {
	const struct host_info *host;
	const char *recipe;		/* TMA recipe, NULL when none */
	const struct event_list *evs;
	const struct thread_table *tt;
	struct self_stats self;
	unsigned long long duration_ns;
	unsigned long long mono_ns;	/* CLOCK_MONOTONIC (BPF's clock) at the last refresh */
	unsigned long long setup_cpu_ns;	/* tmabpf's own CPU time before the run (load, attach) */
	unsigned long long run_cpu_ns;		/* and during it, to its stop (0: still running) */
	char target[256];
	const char *stop_reason;	/* "target exited", "duration", "SIGINT", ... */
	const struct tma_plan *tma_plan;	/* NULL when TMA is off */
	int tma_level;
	const char *tma_off;		/* why TMA is not shown although planned; NULL: it is, or not planned */
	bool estimated;			/* --sample-events' task accounting: the threads' counters are estimates
					 * from event samples, their times from the task iterator */
	/* per-function deltas (--uprobe); NULL/0 when none */
	const struct uprobe_set *uset;
	const struct func_row *frows;
	size_t nfrows;
	unsigned long long uprobe_run_ns, uprobe_run_cnt;
	unsigned long long uprobe_attach_ns;
	/* sampled functions (--sample); NULL when off */
	const struct sample_result *samples;
	/* --sample: the table so far, per thread (sampling_snapshot at each -I refresh); NULL when off */
	const struct sample_result *samples_live;
	/* the stacks as folded lines (--sample, with the off-CPU stacks among them; --offcpu-stacks);
	 * NULL when neither runs; folded_write merges them in place */
	struct folded *folded;
	/* --pprof: the samples with their stacks; NULL when none could be read */
	const struct profile *profile;
	/* off-CPU stacks (--offcpu-stacks); NULL when off */
	const struct offcpu_result *offcpu;
	/* memory samples (--mem-samples); NULL when off or unavailable */
	const struct mem_result *mem;
	/* the GEMM/GEMV calls and their roofline (--roofline); NULL when off */
	const struct roofline_result *roofline;
	/* --per-call: the marker's iterations (NULL when off) */
	const struct iterations *iters;
	const char *per_call;
};

/* TMA is planned and shown (its counts are meaningful: zero_counts.h). */
static inline bool report_has_tma(const struct report *r)
{
	return r->tma_plan && !r->tma_off;
}

/* The TMA tree of one set of sums (a thread's, a process', a function's counters over its on-CPU
 * time): 0, or -ENOENT when TMA is not shown, or tma_compute's error. */
int report_tma(const struct report *r, const struct thread_stats *s, struct tma_result *res);
/* Same with a plan and events of one's own (the daemon, the trace's counter tracks). */
int sums_tma(const struct tma_plan *plan, const struct event_list *evs, const struct thread_stats *s,
	     struct tma_result *res);
/* tma_compute() of the counts of an event list (scaled values, percent running; NULL: 100). */
int tma_compute_events(const struct tma_plan *p, const struct event_list *evs, const double *scaled_values,
		       const double *pct_running, struct tma_result *res);
/* Any event multiplexed (running < enabled) in any thread. */
void report_events_scaled(const struct report *r, bool *scaled);

#endif
