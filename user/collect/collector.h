/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The collector interface and its drivers, after perf's bpf_counter_ops: each feature
 * (the spine's per-thread accounting, task accounting, uprobes, --per-call,
 * the trace, sampling, memory samples, off-CPU stacks, the roofline; the
 * daemon's event sampling and sampler) is one table entry, in a file of its
 * own, whose state is its own: allocated by its init, handed back to each of
 * its operations as `self`, freed by its free.  What one feature offers
 * another is a named, typed interface in struct run_links (the spine's
 * program, the uprobes' set and program, ...), set by the one that offers it;
 * what the outputs read is the report (struct report: rows, samples, folded
 * stacks, the profile).  The operations, called in table order:
 *
 *   init      before anything is opened: its state, bad input said (RUN_BAD_INPUT)
 *   preview   --dry-run: what it would open or probe here, on f
 *   load      open and load its BPF (later ones reuse the spine's maps)
 *   attach    after every load: links, events
 *   start     the run's clock starts (c->t0)
 *   poll_ms   how long the next poll may wait at most (the default, or less)
 *   poll      every poll: drain its ring buffers
 *   read      bring the model (c->tt, c->rep) up to date
 *   interval  a -I interval is about to be shown
 *   tick      every poll, after the interval: periodic work (maps watch,
 *             hot-probe guard, counter samples)
 *   exited    a thread's final sums (the accounting's exit records)
 *   detach    in reverse order: nothing stays attached; maps stay readable
 *   finish    after the last read: losses as warnings, results into the report
 *   free      in reverse order: its state
 *
 * Any operation may be NULL.  Failures are typed: init, load, attach and
 * finish return an enum run_status with one line in err, never told apart by
 * text.
 */
#ifndef TMABPF_COLLECTOR_H
#define TMABPF_COLLECTOR_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "collect/percall.h"
#include "lib/warn.h"	/* EXIT_USAGE */
#include "model/report.h"
#include "model/thread_table.h"

#define COLLECTORS_MAX 12

struct options;		/* the run's options (run/options.h): the features' own files read them */
struct run_prep;		/* CPU, host, events, TMA plan (run/prepare.h) */
struct threads_prog;
struct uprobe_set;
struct uprobes_prog;

/* A failure's kind, which is also the exit status it calls for. */
enum run_status {
	RUN_OK = 0,
	RUN_FAILED = 1,			/* the host or the kernel refused: a runtime error */
	RUN_BAD_INPUT = EXIT_USAGE,	/* the options cannot be done here (bad -e, unknown --cpu, ...) */
};

/* What the features offer each other, each set by the one that offers it (NULL or -1: not running). */
struct run_links {
	struct threads_prog *spine;	/* the spine's program: the maps the others share, its exit ring */
	struct uprobe_set *uset;	/* the probed functions (--uprobe, the --per-call marker): uprobes' init */
	struct uprobes_prog *uprobes;	/* their program, once loaded: its span and per-call rings */
	int thread_est_fd;		/* task accounting's per-thread estimate storage */
	const struct spin_set *spin;	/* --spin's functions: --per-call's init */
	int percall_samples_fd;		/* the sampler's per-call samples ring ... */
	percall_leaf_fn samples_leaf;	/* ... and the leaf function of a sample */
	void *samples_ctx;
	struct folded *folded;		/* the sampler's folded stacks, which the off-CPU stacks join */
};

/* How threads are accounted: the CLI and the daemon choose. */
struct run_accounting {
	/* task accounting: thread times and switches from the task iterator and thread exits, nothing at
	 * context switches (the daemon's tasks and sampled modes; the CLI's --sample-events, whose
	 * spine is then its filter only) */
	bool use_tasks;
	enum tasks_counts {
		TASKS_KERNEL_COUNTS,	/* the events are task_struct counts (task_acct_event_field) */
		TASKS_NO_COUNTS,	/* the events are sampled, and estimated elsewhere (the daemon's rows) */
		TASKS_ESTIMATES,	/* the events are sampled, and each thread's estimate is its count */
	} tasks_counts;
	bool seed;			/* the run's window: every thread's times from attach or its fork (the CLI) */
	bool bounded;			/* the daemon: LRU thread map, cgroups, exited threads' rows forgotten */
};

/* The run as its collectors see it. */
struct run_ctx {
	const struct options *o;
	struct run_prep *prep;		/* CPU, host, events, TMA plan */
	struct run_accounting acct;
	struct run_links links;
	struct thread_table tt;		/* the model: every thread's sums */
	struct report rep;		/* ... and what the outputs read */
	unsigned long long t0;		/* CLOCK_MONOTONIC at the run's start */
	unsigned long long stop_ns;	/* accounting stopped (run_accounting_stop); 0 while running */
	bool interval_now;		/* a -I interval was shown in this poll (tick) */
	const struct collector *const *table;	/* the run's collectors ... */
	int n;
	void *self[COLLECTORS_MAX];	/* ... entry i's state; NULL: not running */
};

struct collector {
	const char *name;
	bool (*wanted)(const struct run_ctx *c);	/* NULL: always */
	int (*init)(struct run_ctx *c, void **self, char *err, size_t errlen);	/* NULL: no state */
	void (*preview)(struct run_ctx *c, void *self, FILE *f);
	int (*load)(struct run_ctx *c, void *self, char *err, size_t errlen);
	int (*attach)(struct run_ctx *c, void *self, char *err, size_t errlen);
	void (*start)(struct run_ctx *c, void *self);
	int (*poll_ms)(struct run_ctx *c, void *self, int dflt_ms);
	void (*poll)(struct run_ctx *c, void *self, int timeout_ms);
	void (*read)(struct run_ctx *c, void *self);
	void (*interval)(struct run_ctx *c, void *self);
	void (*tick)(struct run_ctx *c, void *self, unsigned long long now_ns);
	void (*exited)(struct run_ctx *c, void *self, const struct thread_stats *s);
	void (*detach)(struct run_ctx *c, void *self);
	int (*finish)(struct run_ctx *c, void *self, char *err, size_t errlen);
	void (*free)(struct run_ctx *c, void *self);
};

/* A context for table t[0..n) (at most COLLECTORS_MAX), nothing running. */
void run_ctx_init(struct run_ctx *c, const struct options *o, struct run_prep *p, const struct collector *const *t,
		  int n);

/* The drivers: each runs the operation of every entry that runs (init: that wanted()), in table
 * order (detach, free: reverse); init, load, attach stop at the first failure, say it in one line
 * on stderr and return its status (free what was set up with collectors_free). */
enum run_status collectors_init(struct run_ctx *c);
void collectors_preview(struct run_ctx *c, FILE *f);
enum run_status collectors_load(struct run_ctx *c);
enum run_status collectors_attach(struct run_ctx *c);
void collectors_start(struct run_ctx *c);
int collectors_poll_ms(struct run_ctx *c, int dflt_ms);
void collectors_poll(struct run_ctx *c, int timeout_ms);
void collectors_read(struct run_ctx *c);
void collectors_interval(struct run_ctx *c);
void collectors_tick(struct run_ctx *c, unsigned long long now_ns);
void collectors_exited(struct run_ctx *c, const struct thread_stats *s);
void collectors_detach(struct run_ctx *c);
enum run_status collectors_finish(struct run_ctx *c);
void collectors_free(struct run_ctx *c);

/* A thread's final sums, from whichever collector accounts the threads: into the table (unless
 * bounded), and to every collector's exited. */
void run_thread_exited(struct run_ctx *c, const struct thread_stats *s);
/* Bring the model up to date (every collector's read, then the clocks). */
void run_refresh(struct run_ctx *c);
/* What is accounted ends now, not when the links are gone: the slices running now (on ncpus CPUs)
 * are folded (by whichever collector accounts the threads: the spine, or the task programs). */
void run_accounting_stop(struct run_ctx *c, int ncpus);

#endif
