/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Sampled functions (--sample): per-thread and per-process rows of the samples'
 * leaf functions, merged, split, and the new samples between two snapshots. */
#ifndef TMABPF_SAMPLE_SUMS_H
#define TMABPF_SAMPLE_SUMS_H
#include <stdbool.h>
#include <stddef.h>
#include "bpf/samples.h"

/* A leaf function's samples in one thread, or in all threads of a process (tid < 0). */
struct sample_func {
	const char *module;	/* interned by the symbolizer */
	const char *symbol;	/* function, or "module+0xOFF" when unknown */
	unsigned int pid;
	long long tid;
	char comm[TMABPF_COMM_LEN];	/* the thread's (the main thread's for a process) */
	unsigned long long count;
	unsigned long long period;
	struct counter_val c[TMABPF_MAX_EVENTS];	/* its threads' deltas since their previous samples;
							 * --sample-events: each event's estimate */
	unsigned long long ev_samples[TMABPF_MAX_EVENTS];	/* --sample-events: samples of each event */
};

/* A sampled function's direct caller in its samples' stacks, per process (the live view's
 * drill-down).  Names are interned by the symbolizer: equal names, equal pointers. */
struct sample_caller {
	unsigned int pid;
	const char *module, *symbol;	/* the sampled function, as in struct sample_func */
	const char *caller;		/* the frame above it; "[stack top]" when it has none */
	unsigned long long count;	/* samples */
};

/* --sample-events: what the estimates rest on, per event. */
struct sample_event_info {
	bool open;			/* it sampled (else why) */
	char why[160];
	unsigned long long samples;	/* of tracked threads */
	double running_pct;		/* share of the time it had a counter (100: never multiplexed) */
};

struct sample_result {
	const char *event;		/* sampling event: "cpu-clock", "cycles" */
	int hz;
	bool cpu_clock;			/* periods are ns (cpu-clock) */
	unsigned long long samples;	/* recorded samples of tracked threads */
	unsigned long long target;	/* samples of tracked threads that reached BPF */
	unsigned long long seen;	/* samples that reached BPF, idle and untracked included */
	unsigned long long expected;	/* cpu-clock: tracked threads' on-CPU time x rate; 0 when unknown */
	unsigned long long rows_full, stacks_full, stack_errors, notices_lost;
	unsigned long long folds_interrupted;	/* samples that landed inside a fold: recorded without deltas */
	unsigned long long unknown_leaf;	/* samples whose leaf has no function name: the sum of */
	unsigned long long no_stack;	/*   samples with neither stack, */
	unsigned long long unmapped_leaf;	/*   leaf in no mapping that the process had when read, */
	unsigned long long nosym_leaf;	/*   leaf in a file with no symbol there (stripped), */
	unsigned long long jit_leaf;	/*   leaf in JIT code that no perf map names, */
					/*   and leaf in other anonymous memory (the rest) */
	bool jit_onednn, jit_v8;	/* a process with JIT samples maps oneDNN / is node (V8) */
	size_t nr_rows, nr_stacks;
	unsigned long long bpf_run_ns, bpf_run_cnt;
	bool events;			/* --sample-events: c[] are estimates from event samples */
	double events_hz;		/* their rate, all events together, per CPU */
	int events_freq;		/* each event's */
	struct sample_event_info ev[TMABPF_MAX_EVENTS];
	char shared[512];		/* events that shared counters ("" when none) */
	struct sample_func *funcs;	/* per process (tid -1), then per thread; each by count, descending */
	size_t nfuncs, nprocs;		/* nprocs: how many of funcs are per-process rows */
	struct sample_caller *callers;	/* the live snapshot's (sampling_snapshot), by pid, function, then
					 * count descending; NULL elsewhere */
	size_t ncallers;
};

/* Sort rows by sample_func_cmp and add up equal keys; returns the new count. */
size_t sample_funcs_merge(struct sample_func *v, size_t n, int nr_events);
/* res->funcs (malloc'd) from per-thread rows sorted by sample_func_cmp: per process (tid -1),
 * then per thread, each by count, descending; res->nprocs the per-process rows.  0 or -ENOMEM. */
int sample_result_fill(struct sample_result *res, const struct sample_func *thr, size_t nthr, int nev);
/* The samples of a snapshot (cur) that are new since an earlier one (prev: its
 * per-thread rows, sorted by sample_func_cmp): out->funcs (malloc'd) per
 * process (tid -1), then per thread, each by count like sampling_collect's;
 * out->samples their total.  Rows without new samples are left out. */
int sample_funcs_since(const struct sample_result *cur, const struct sample_func *prev, size_t nprev, int nev,
		       struct sample_result *out);
/* Sort callers by pid, function and caller, add up equal ones, then order each function's callers by
 * count, descending; returns the new count. */
size_t sample_callers_merge(struct sample_caller *v, size_t n);
/* Order of sample_func rows: pid, tid, function (module, symbol) (qsort/bsearch). */
int sample_func_cmp(const void *a, const void *b);
/* A row's estimated on-CPU time, ns: its periods (cpu-clock), else samples / hz. */
double sample_func_ns(const struct sample_result *r, const struct sample_func *f);

#endif
