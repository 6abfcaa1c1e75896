/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * sampling: the --sample feature.  Loads and attaches the sample program
 * (samples_loader.c), snapshots the maps of each process as it is first
 * sampled (symbolize.c), and at the end turns the sample rows into the
 * per-function table (struct sample_result, printed by report_samples.c)
 * and the --folded stacks (folded.c).  During the run, sampling_snapshot()
 * gives the live view the table so far, and sample_funcs_since() its rows
 * new since the previous snapshot.
 */
#ifndef TMABPF_SAMPLING_H
#define TMABPF_SAMPLING_H
#include <stdbool.h>
#include <stddef.h>
#include "../bpf/tmabpf.h"
#include "events.h"
#include "folded.h"
#include "samples_loader.h"
#include "symbolize.h"
#include "threads_loader.h"

/* A leaf function's samples in one thread, or in all threads of a process (tid < 0). */
struct sample_func {
	const char *module;	/* interned by the symbolizer */
	const char *symbol;	/* function, or "module+0xOFF" when unknown */
	unsigned int pid;
	long long tid;
	char comm[TMABPF_COMM_LEN];	/* the thread's (the main thread's for a process) */
	unsigned long long count;
	unsigned long long period;
	struct counter_val c[TMABPF_MAX_EVENTS];	/* its threads' deltas since their previous samples */
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
	struct sample_func *funcs;	/* per process (tid -1), then per thread; each by count, descending */
	size_t nfuncs, nprocs;		/* nprocs: how many of funcs are per-process rows */
};

struct named_stack;

/* Stacks named so far, per (pid, stack id); kernel stacks under pid 0. */
struct stack_memo {
	struct named_stack *v;
	size_t cap, n;
};

struct sampling {
	struct samples_prog prog;
	struct symbolizer *sym;
	struct stack_memo memo;
	bool loaded;
	struct sample_result res;	/* sampling_collect() */
	struct sample_result live;	/* sampling_snapshot() */
	struct folded folded;
};

struct sampling_cfg {
	int hz;
	int max_rows;		/* --max-sample-stacks */
	bool pmu;		/* host has a hardware PMU: try cycles */
};

int sampling_load(struct sampling *s, struct threads_prog *tp, const struct sampling_cfg *cfg, char *err,
		  size_t errlen);
int sampling_attach(struct sampling *s, char *err, size_t errlen);
/* Name the user stacks of new sample rows while their processes live (call often: every poll). */
void sampling_poll(struct sampling *s);
/* Stop sampling; the rows stay readable. */
void sampling_detach(struct sampling *s);
/* Read, name and aggregate the rows; losses become warnings.  self: the run's stats slots;
 * oncpu_ns: the tracked threads' on-CPU time (what cpu-clock samples should match). */
int sampling_collect(struct sampling *s, const struct event_list *evs, const struct self_stats *self,
		     unsigned long long oncpu_ns);
/* The table so far, for a refresh of the live view: rows read and named now
 * (only stacks not named before are read), per thread, sorted by
 * sample_func_cmp, nprocs 0; sample totals only (no losses, warnings or
 * folded stacks: sampling_collect() does those once, at the end).  Valid
 * until the next call; NULL when sampling is off or the maps cannot be read. */
const struct sample_result *sampling_snapshot(struct sampling *s, const struct event_list *evs);
/* The samples of a snapshot (cur) that are new since an earlier one (prev: its
 * per-thread rows, sorted by sample_func_cmp): out->funcs (malloc'd) per
 * process (tid -1), then per thread, each by count like sampling_collect's;
 * out->samples their total.  Rows without new samples are left out. */
int sample_funcs_since(const struct sample_result *cur, const struct sample_func *prev, size_t nprev, int nev,
		       struct sample_result *out);
/* Order of sample_func rows: pid, tid, function (module, symbol) (qsort/bsearch). */
int sample_func_cmp(const void *a, const void *b);
/* A row's estimated on-CPU time, ns: its periods (cpu-clock), else samples / hz. */
double sample_func_ns(const struct sample_result *r, const struct sample_func *f);
void sampling_free(struct sampling *s);

#endif
