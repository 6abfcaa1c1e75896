/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Loader for bpf/threads.bpf.c: per-thread accounting at sched_switch. */
#ifndef TMABPF_THREADS_LOADER_H
#define TMABPF_THREADS_LOADER_H
#include <stdbool.h>
#include <stddef.h>
#include "bpf/tmabpf.h"
#include "model/results.h"
#include <sys/types.h>
#include "pmu/perf_open.h"

struct threads_cfg {
	enum tmabpf_filter filter;
	bool follow_fork;
	int max_threads;	/* threads map entries */
	int max_pids;		/* pids map entries */
	unsigned int main_id;	/* first tgid (FILTER_TGID) or tid (FILTER_TID) of the target; 0: none */
	bool lru;		/* threads map evicts the least recently used entry when full (daemon) */
	bool cgroup;		/* keep thread_stats.cgroup_id (daemon) */
	bool seqlock;		/* --per-call: keep thread_stats.seq (a lock add per switched thread) */
	unsigned int exec_start;	/* -- CMD: its pid, whose counts start at its exec; 0: none */
	const pid_t *ids;	/* in the filter from the start: -p tgids (FILTER_TGID) or -t tids (FILTER_TID) */
	int nr_ids;
	bool filter_only;	/* the filter and the forks it follows only: nothing at context switches, no
				 * thread sums (task accounting has them: --sample-events) */
	bool seed;		/* the CLI: each tracked thread's times from attach, or from its fork (tmabpf_seed) */
};

typedef void (*thread_exit_fn)(void *ctx, const struct thread_stats *s);

struct threads_bpf;
struct ring_buffer;

struct threads_prog {
	struct threads_bpf *skel;
	struct account_cfg acfg;	/* the accounting's .rodata: every later loader copies it */
	struct ring_buffer *rb;
	int stats_fd;
	bool run_stats;		/* kernel BPF run-time stats on (our fd, or kernel.bpf_stats_enabled=1) */
	int nr_cpus;
	int max_threads;
	bool seed;		/* threads_cfg.seed, when it accounts (not filter_only) */
	unsigned long long seed_ns;	/* CLOCK_MONOTONIC time the threads were seeded at (the window's start); 0: none */
	thread_exit_fn on_exit;
	void *ctx;
};

/* The accounting's configuration (tmabpf.h) of a run: cfg and pc NULL for a program that folds
 * nothing (the daemon's standalone sampler): every thread, no counters.  The one place it is filled. */
void account_cfg_fill(struct account_cfg *a, const struct threads_cfg *cfg, const struct perf_counters *pc,
		      const struct event_list *evs, int nr_cpus);
/* evs: the events pc counts, in its order */
int threads_load(struct threads_prog *p, const struct threads_cfg *cfg, const struct perf_counters *pc,
		 const struct event_list *evs, thread_exit_fn on_exit, void *ctx, char *err, size_t errlen);
/* Make obj (a later feature's BPF object, opened, not yet loaded) use the
 * spine's accounting maps (account.bpf.h), found by name: the accounting
 * routine's state is one.  0 or a negative errno. */
struct bpf_object;
int threads_share_maps(struct threads_prog *p, struct bpf_object *obj);
/* Seed the per-CPU snapshots (see SNAP_ATTACH) and attach. */
int threads_attach(struct threads_prog *p, const struct perf_counters *pc, char *err, size_t errlen);
/* The filter's map (its ids; account_cfg.filter says which kind). */
int threads_pids_fd(const struct threads_prog *p);
/* Add a tgid (FILTER_TGID) or tid (FILTER_TID) to the filter. */
int threads_track(struct threads_prog *p, unsigned int id, char *err, size_t errlen);
/* Deliver exited threads to on_exit; returns the count or -errno. */
int threads_poll(struct threads_prog *p, int timeout_ms);
/* Current sums of live threads; *out is malloc'd. */
int threads_read(struct threads_prog *p, struct thread_stats **out, size_t *n);
void threads_self_stats(struct threads_prog *p, struct self_stats *s);
/* Stop accounting: destroy the links (nothing stays attached). */
void threads_detach(struct threads_prog *p);
void threads_destroy(struct threads_prog *p);

#endif
