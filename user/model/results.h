/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What the collectors hand the model: tmabpf's own cost and losses, per-function
 * rows, off-CPU stacks, memory samples (sampled functions: sample_sums.h).
 * Outputs read these; they never include a loader. */
#ifndef TMABPF_RESULTS_H
#define TMABPF_RESULTS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/offcpu_rows.h"
#include "bpf/uprobes.h"

/* tmabpf's own cost and losses, from kernel BPF stats and the stats map. */
struct self_stats {
	unsigned long long bpf_run_ns;	/* all tmabpf programs */
	unsigned long long bpf_run_cnt;
	unsigned long long switch_run_ns;	/* sched_switch program alone */
	unsigned long long switch_run_cnt;
	bool run_stats;			/* kernel BPF stats were enabled */
	unsigned long long stat[STAT_MAX];	/* summed over CPUs */
	unsigned long long threads_in_map;
	unsigned long long max_threads;
};

/* One (function, thread) row of the uprobes' sums (--uprobe). */
struct func_row {
	struct func_key key;
	struct func_stats s;
};

/* Off-CPU time of one thread on one (user stack, kernel stack, reason) (--offcpu-stacks). */
struct offcpu_stack {
	unsigned int pid, tid;
	char comm[TMABPF_COMM_LEN + 1];
	int reason;			/* enum offcpu_reason */
	unsigned long long ns, count;
	size_t nframes;
	const char **frames;		/* leaf first: kernel frames ("name_[k]"), then user frames */
};

struct offcpu_result {
	struct offcpu_stack *v;		/* by ns, descending */
	size_t n;
	unsigned long long blocked_ns, runqueue_ns;
	unsigned long long stat[OFFCPU_STAT_MAX];
};

/* "blocked", "runqueue" */
static inline const char *offcpu_reason_name(int reason)
{
	return reason == OFFCPU_BLOCKED ? "blocked" : "runqueue";
}

/* Memory samples (--mem-samples): samples per (pid, function) and per (pid, mapping). */
struct mem_func {
	unsigned int pid;
	const char *module, *symbol;	/* interned by the symbolizer */
	unsigned long long count;
};

struct mem_bin {
	unsigned int pid;
	uint64_t start, end;	/* the mapping's [start, end) */
	char *mapping;
	unsigned long long count;
	uint64_t addr_min, addr_max;	/* lowest and highest address binned here */
};

struct mem_event;

struct mem_result {
	const struct mem_event *ev;
	unsigned long long samples, seen, target, lost;
	struct mem_func *funcs;		/* by count, descending */
	size_t nfuncs;
	const struct mem_bin *bins;	/* by count, descending */
	size_t nbins;
};

#endif
