/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The collectors a run drives, after perf's bpf_counter_ops: each feature
 * (the spine's per-thread accounting, uprobes, the trace, sampling, memory
 * samples, off-CPU stacks; the daemon's task accounting and sampler) is a
 * table entry of operations on the run's context, called in table order:
 *
 *   load      open and load its BPF (later ones reuse the spine's maps)
 *   attach    after every load: links, events
 *   start     the run's clock starts (ctx->t0)
 *   poll      every poll: drain its ring buffers
 *   read      bring the model (ctx->tt, ctx->rep) up to date
 *   interval  a -I interval is about to be shown
 *   tick      every poll, after the interval: periodic work (maps watch,
 *             hot-probe guard, counter samples)
 *   detach    in reverse order: nothing stays attached; maps stay readable
 *   finish    after the last read: losses as warnings, results into the report
 *   free      in reverse order
 *
 * Any operation may be NULL.  Failures are typed: load, attach and finish
 * return an enum run_status with one line in err, never told apart by text.
 */
#ifndef TMABPF_COLLECTOR_H
#define TMABPF_COLLECTOR_H
#include <stdbool.h>
#include <stddef.h>
#include "collect/memsamples.h"
#include "collect/offcpu.h"
#include "collect/percall.h"
#include "collect/sampling.h"
#include "collect/tasks_loader.h"
#include "collect/threads_loader.h"
#include "collect/uprobe_run.h"
#include "model/folded.h"
#include "model/report.h"
#include "model/thread_table.h"
#include "pmu/perf_open.h"
#include "run/options.h"
#include "run/prepare.h"
#include "trace/trace_run.h"

struct roofline_run;

#define COLLECTORS_MAX 9

/* What every collector of a run sees. */
struct run_ctx {
	struct options *o;
	struct run_prep *prep;		/* CPU, host, events, TMA plan */
	struct perf_counters pc;	/* the spine's counters */
	struct threads_cfg tcfg;	/* the spine's filter and sizes (run_threads_cfg; the daemon adds its own) */
	struct threads_prog spine;
	bool spine_loaded;		/* threads_load ran (threads_destroy then cleans up) */
	/* task accounting: thread times and switches from the task iterator and thread exits, nothing at
	 * context switches (the daemon's tasks and sampled modes; the CLI's --sample-events, whose
	 * spine is then its filter only: tcfg.filter_only) */
	bool use_tasks;
	enum tasks_counts {
		TASKS_KERNEL_COUNTS,	/* the events are task_struct counts (task_acct_event_field) */
		TASKS_NO_COUNTS,	/* the events are sampled, and estimated elsewhere (the daemon's rows) */
		TASKS_ESTIMATES,	/* the events are sampled, and each thread's estimate is its count */
	} tasks_counts;
	struct tasks_prog tasks;
	bool tasks_loaded;
	bool tasks_final;		/* the CLI's last iteration is in the table (at detach) */
	thread_exit_fn on_exit;		/* exited threads' final sums */
	void *exit_ctx;
	struct uprobe_run up;		/* --uprobe: resolved before anything loads */
	struct trace_run *trace;	/* --trace, opened before the run; NULL when off */
	struct sampling samp;		/* --sample */
	struct memsamples mem;		/* --mem-samples */
	struct offcpu off;		/* --offcpu-stacks */
	struct percall percall;		/* --per-call */
	struct roofline_run *roofline;	/* --roofline: its own state (run/roofline_collector.c) */
	struct folded off_folded;	/* off-CPU folded lines when --sample is off */
	struct thread_table tt;		/* the model: every thread's sums */
	struct report rep;		/* ... and what the outputs read */
	unsigned long long t0;		/* CLOCK_MONOTONIC at the run's start */
	unsigned long long stop_ns;	/* accounting stopped (the spine's detach); 0 while running */
	bool interval_now;		/* a -I interval was shown in this poll (tick) */
	unsigned int on;		/* bit i: entry i of the table runs */
	void *mode;			/* the daemon's own state, for its collectors */
};

struct collector {
	const char *name;
	bool (*wanted)(const struct run_ctx *c);	/* NULL: always */
	int (*load)(struct run_ctx *c, char *err, size_t errlen);
	int (*attach)(struct run_ctx *c, char *err, size_t errlen);
	void (*start)(struct run_ctx *c);
	void (*poll)(struct run_ctx *c, int timeout_ms);
	void (*read)(struct run_ctx *c);
	void (*interval)(struct run_ctx *c);
	void (*tick)(struct run_ctx *c, unsigned long long now_ns);
	void (*detach)(struct run_ctx *c);
	int (*finish)(struct run_ctx *c, char *err, size_t errlen);
	void (*free)(struct run_ctx *c);
};

/* The profiling run's table: spine, uprobes, trace, sampling, memory samples, off-CPU stacks. */
extern const struct collector *const run_collectors[];
extern const int run_ncollectors;
/* Entries the daemon shares. */
extern const struct collector spine_collector, tasks_collector, uprobes_collector;
/* --sample-events in the CLI: what keeps the per-switch program (a feature that needs per-switch
 * deltas: "--uprobe", ...), or NULL when task accounting can replace it. */
const char *run_switch_needed(const struct options *o);

/* The spine's filter and map sizes from the options. */
void run_threads_cfg(const struct options *o, struct threads_cfg *cfg);
/* Bring the model up to date (the run's refresh: read of every collector, then the clocks). */
void run_refresh(struct run_ctx *c, const struct collector *const *t, int n);

/* The drivers: each runs the operation of every entry that runs (load: that wanted()), in table
 * order (detach, free: reverse); load, attach and finish stop at the first failure, say it in one
 * line on stderr and return its status (free what was loaded with collectors_free). */
enum run_status collectors_load(const struct collector *const *t, int n, struct run_ctx *c);
enum run_status collectors_attach(const struct collector *const *t, int n, struct run_ctx *c);
void collectors_start(const struct collector *const *t, int n, struct run_ctx *c);
void collectors_poll(const struct collector *const *t, int n, struct run_ctx *c, int timeout_ms);
void collectors_read(const struct collector *const *t, int n, struct run_ctx *c);
void collectors_interval(const struct collector *const *t, int n, struct run_ctx *c);
void collectors_tick(const struct collector *const *t, int n, struct run_ctx *c, unsigned long long now_ns);
void collectors_detach(const struct collector *const *t, int n, struct run_ctx *c);
enum run_status collectors_finish(const struct collector *const *t, int n, struct run_ctx *c);
void collectors_free(const struct collector *const *t, int n, struct run_ctx *c);

#endif
