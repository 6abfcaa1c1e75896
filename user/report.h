/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What a run hands to its outputs (JSON file, text summaries). */
#ifndef TMABPF_REPORT_H
#define TMABPF_REPORT_H
#include <stdio.h>
#include "events.h"
#include "host.h"
#include "json.h"
#include "memsamples.h"
#include "offcpu.h"
#include "sampling.h"
#include "thread_table.h"
#include "tma.h"
#include "threads_loader.h"
#include "uprobes_loader.h"
#include "version.h"

struct report;
/* Writes the TMA object (key "tma") for one set of sums; NULL when TMA is off. */
typedef void (*report_tma_fn)(const struct report *r, const struct thread_stats *s, struct json *j);

/* Writes the TMA bottleneck path of one set of sums into buf; 0 when there is one. */
typedef int (*report_tma_path_fn)(const struct report *r, const struct thread_stats *s, char *buf, size_t len);

/* Computes the TMA tree of one set of sums into res; 0 when there is one. */
typedef int (*report_tma_result_fn)(const struct report *r, const struct thread_stats *s, struct tma_result *res);

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
	report_tma_fn tma_json;
	report_tma_path_fn tma_path;
	report_tma_result_fn tma_result;	/* NULL when TMA is off */
	const char *tma_off;		/* why TMA is not shown although planned; NULL: it is, or not planned */
	int tma_level;
	void *tma_ctx;
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
	/* off-CPU stacks (--offcpu-stacks); NULL when off */
	const struct offcpu_result *offcpu;
	/* memory samples (--mem-samples); NULL when off or unavailable */
	const struct mem_result *mem;
};

/* One row of the functions table: a function's sums for one thread, or for
 * all threads of a process (tid < 0). */
struct func_sum {
	int fn;
	unsigned int pid;
	long long tid;
	struct func_stats s;
};

/* Add b's sums into a. */
void func_stats_add(struct func_stats *a, const struct func_stats *b, int nr_events);
/* Order of func_sum rows: function, pid, tid (qsort/bsearch). */
int func_sum_cmp(const void *a, const void *b);
/* Rows per (function, pid) aggregate and per (function, thread); malloc'd, sorted by (fn, pid, tid). */
size_t report_func_sums(const struct report *r, struct func_sum **out, bool per_thread);
void report_functions_json(const struct report *r, struct json *j);

/* The sampled-functions section (--sample): JSON "samples"/"sampling", text table. */
void report_samples_json(const struct report *r, struct json *j);
void report_samples_text(const struct report *r, FILE *f, int top);
/* The off-CPU stacks section (--offcpu-stacks): JSON "offcpu_stacks"/"offcpu", text table. */
void report_offcpu_json(const struct report *r, struct json *j);
void report_offcpu_text(const struct report *r, FILE *f, int top);
/* The memory-samples section (--mem-samples): JSON "mem_samples" (null when off), text tables. */
void report_memsamples_json(const struct report *r, struct json *j);
void report_memsamples_text(const struct report *r, FILE *f, int top);

/* The --json report (schema 1, see README "Report contract") to f; write errors stay in f (outfile_commit). */
void report_json_write(const struct report *r, FILE *f);
/* Any event multiplexed (running < enabled) in any thread. */
void report_events_scaled(const struct report *r, bool *scaled);

#endif
