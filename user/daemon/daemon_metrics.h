/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What the daemon exports: the Prometheus exposition and the JSON-lines snapshot. */
#ifndef TMABPF_DAEMON_METRICS_H
#define TMABPF_DAEMON_METRICS_H
#include <stdbool.h>
#include <stdio.h>
#include "collect/threads_loader.h"
#include "daemon/budget.h"
#include "daemon/daemon_agg.h"
#include "daemon/daemon_http.h"
#include "pmu/events.h"
#include "pmu/host.h"
#include "sym/uprobe_targets.h"
#include "tma/tma.h"

struct dsamp;

/* The phases of a refresh, timed (tmabpf_refresh_phase_seconds_total{phase}): the BPF maps read and
 * folded into the series (new cgroups named), the series chosen, the sample rows named (the
 * symbolizer: processes' maps, files' symbols), the page and the daemon's own figures published. */
enum refresh_phase { PHASE_DRAIN, PHASE_AGGREGATE, PHASE_SYMBOLIZE, PHASE_PUBLISH, REFRESH_PHASES };

/* tmabpf's own cost and state, gathered at each refresh. */
struct daemon_self {
	struct self_stats spine;	/* threads programs (tasks mode: the task programs): run time, drops */
	const char *accounting;		/* "tasks" or "switch" (--accounting) */
	unsigned long long uprobe_run_ns, uprobe_run_cnt;
	unsigned long long sample_run_ns, sample_run_cnt;	/* the sampler's program */
	unsigned long long threads_in_map, max_threads;
	double bpf_cpu_ratio;		/* last interval: BPF CPU seconds per second */
	bool event_sampling;		/* sampled accounting */
	unsigned long long evsample_run_ns;	/* its program's BPF run time */
	unsigned long long event_samples[TMABPF_MAX_EVENTS];	/* its samples, per event */
	double user_cpu_ratio;		/* last interval: the daemon's own (user + system) CPU seconds per second */
	double bpf_map_bytes;		/* memory of the BPF maps the daemon holds (their fdinfo memlock) */
	const struct budget *budget;
	bool sampling;			/* a sampler is wired to the budget */
	unsigned long long funcs_detached;	/* functions the budget detached */
	struct daemon_http_counts http;
	unsigned long long refreshes;
	double refresh_seconds;		/* how long the last refresh took */
	double phase_seconds[REFRESH_PHASES];	/* wall seconds in each phase, all refreshes */
	double start_time;		/* unix seconds */
	double rss_bytes, vm_bytes, cpu_seconds, open_fds;
};

struct daemon_view {
	const struct agg *agg;
	const struct agg_funcs *funcs;	/* NULL without --uprobe */
	const struct uprobe_set *uset;
	const struct event_list *evs;
	const struct host_info *host;
	const char *recipe;		/* NULL when none */
	int tma_level;			/* 0: no TMA */
	const struct tma_plan *tma_plan;	/* NULL: no TMA */
	/* TMA of one set of raw sums, 0 when computed; NULL: sums_tma() with tma_plan (tests substitute theirs) */
	int (*tma)(const struct thread_stats *s, struct tma_result *res);
	const struct daemon_self *self;
	const struct dsamp *samp;	/* NULL when not sampling */
};

void daemon_metrics_write(FILE *f, const struct daemon_view *v);
/* One line: a JSON object of every exported series' values at unix_time. */
void daemon_metrics_jsonl_write(FILE *f, const struct daemon_view *v, double unix_time);

#endif
