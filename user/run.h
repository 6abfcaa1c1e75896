/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The profiling run: set up counters and BPF, follow the target, report. */
#ifndef TMABPF_RUN_H
#define TMABPF_RUN_H
#include <signal.h>
#include "cli.h"

/* Returns the process exit status (the command's with '-- COMMAND'). */
int run_profile(struct options *o);

struct host_info;
struct event_list;
struct tma_cpu;
struct tma_plan;
struct threads_cfg;
struct threads_prog;
struct thread_stats;
struct uprobes_prog;
struct uprobe_set;
struct perf_counters;

/* What a run set up, for a mode that replaces the profiling loop (the daemon). */
struct run_env {
	const struct options *o;
	const struct host_info *host;
	const struct event_list *evs;
	const struct tma_cpu *cpu;	/* TMA recipe, NULL when none */
	int tma_level;			/* 0: TMA off */
	const struct tma_plan *tma_plan;	/* NULL when TMA is off */
	struct threads_prog *prog;
	const struct perf_counters *pc;		/* for later loaders sharing the spine's maps */
	const struct threads_cfg *tcfg;
	struct uprobes_prog *uprobes;	/* NULL without --uprobe */
	struct uprobe_set *uset;
	volatile sig_atomic_t *stop;	/* SIGINT/SIGTERM seen */
};

struct run_mode {
	void *ctx;
	void (*configure)(void *ctx, struct threads_cfg *cfg);		/* before the BPF load */
	void (*on_exit)(void *ctx, const struct thread_stats *s);	/* exited threads' final sums */
	int (*loop)(void *ctx, const struct run_env *env);		/* returns the exit status */
};

/* The run's setup (events, counters, BPF, uprobes), then m->loop instead of
 * the profiling loop and reports; everything detached and freed after it. */
int run_with_mode(struct options *o, const struct run_mode *m);

#endif
