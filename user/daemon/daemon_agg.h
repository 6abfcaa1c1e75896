/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The daemon's bounded aggregation of per-thread sums into Prometheus series.
 *
 * Every refresh reads the threads map (a snapshot) and the exit ring buffer;
 * each thread's delta since it was last seen is routed to its process's series
 * when the process holds one of the top_procs slots, else to its cgroup's
 * "[other]" series.  Series only ever accumulate deltas, so each is monotonic
 * whatever happens to threads and processes: exits fold their final sums in,
 * threads evicted from the LRU map (or whose exit record was lost) keep what
 * was seen of them and are counted as lost, slots change hands without
 * moving sums between series.  Threads are identified by (tid, first_seen_ns),
 * so a tid reused or re-created after eviction starts a new record.
 *
 * Bounds: thread records = live threads of the map; process records = live
 * processes + exported dead ones, which linger expire_ns so their final sums
 * get scraped; cgroups <= max_cgroups (more go to "[other]"); exported series
 * <= top_procs + cgroups; per-thread series only for the top_threads live
 * threads by recent on-CPU time.
 */
#ifndef TMABPF_DAEMON_AGG_H
#define TMABPF_DAEMON_AGG_H
#include <stdbool.h>
#include <stdint.h>
#include "bpf/tmabpf.h"
#include "daemon/cgroup_names.h"
#include "lib/u64map.h"

struct agg_cfg {
	int nr_events;
	int top_procs;		/* processes with their own series */
	int top_threads;	/* threads with their own series */
	int max_cgroups;	/* cgroups with their own label */
	double min_share;	/* on-CPU share of one CPU over an interval a process needs to win a slot */
	unsigned long long expire_ns;	/* how long dead or idle series stay */
	bool resolve_cgroups;	/* ids to paths through the cgroup2 mount (off in unit tests) */
};

/* A series' monotonic sums. */
struct agg_sums {
	double oncpu_ns, blocked_ns, runq_ns;
	double sw_vol, sw_invol, migrations;
	double counters[TMABPF_MAX_EVENTS];	/* multiplex-scaled */
	double samples[TMABPF_MAX_EVENTS];	/* sampled accounting: the samples behind counters[] */
};

struct agg_series {
	struct agg_sums total;		/* exported values */
	struct thread_stats last;	/* raw deltas of the last routing (TMA over the interval) */
	unsigned long long last_ns;	/* that interval's length */
	unsigned long long active_ns;	/* last time it grew */
};

struct agg_cgroup {
	uint64_t id;
	char label[256];
	int nprocs;
	struct agg_series other;	/* processes without their own series */
	struct agg_series all;		/* every process of the cgroup, with a series or not */
};

struct agg_proc {
	uint32_t pid;
	char comm[TMABPF_COMM_LEN];
	bool comm_main;			/* comm is the main thread's */
	uint64_t cgroup_id;
	struct agg_cgroup *cg;
	int nthreads;			/* live thread records */
	bool main_exited;
	bool dead;			/* main thread exited and no thread left */
	bool exported;
	unsigned long long dead_ns, active_ns;
	double score;			/* smoothed on-CPU seconds per second */
	struct thread_stats pend;	/* raw deltas not yet routed */
	double pend_scaled[TMABPF_MAX_EVENTS];
	double pend_samples[TMABPF_MAX_EVENTS];	/* sampled accounting: samples behind pend's counts */
	struct agg_series s;		/* its own series, shown while exported */
};

struct agg_thread {
	struct thread_stats s;		/* sums as last seen */
	struct agg_proc *proc;
	unsigned int gen;		/* snapshot it was last seen in */
	bool exited;			/* exit record folded; dropped at daemon_agg_end */
	bool exported;
	double score;
	unsigned long long pend_oncpu_ns;
	double scaled[TMABPF_MAX_EVENTS];	/* its own monotonic scaled counters */
};

struct agg {
	struct agg_cfg cfg;
	struct u64map threads;		/* tid -> agg_thread */
	struct u64map procs;		/* pid -> agg_proc */
	struct u64map cgroups;		/* id -> agg_cgroup */
	struct agg_cgroup overflow;	/* cgroups past max_cgroups */
	struct agg_series host;		/* every thread's deltas: the host's totals, whatever has a series */
	struct cgroup_names names;
	unsigned int gen;
	unsigned long long last_end_ns;
	uint32_t *exited_tids;		/* exits since the last daemon_agg_end */
	struct counter_val counted[TMABPF_MAX_EVENTS];	/* every delta routed since the start (zero_counts) */
	size_t n_exited_tids, cap_exited_tids;
	/* counts, for self metrics */
	unsigned long long threads_new, threads_exited, threads_lost, procs_exited, exits_unknown;
	size_t exported_procs, exported_threads;
};

int daemon_agg_init(struct agg *a, const struct agg_cfg *cfg);
void daemon_agg_free(struct agg *a);
/* A snapshot of the threads map follows (daemon_agg_thread_seen for each entry). */
void daemon_agg_begin(struct agg *a);
void daemon_agg_thread_seen(struct agg *a, const struct thread_stats *s);
/* Final sums of an exited thread (ring buffer); any time. */
void daemon_agg_thread_exit(struct agg *a, const struct thread_stats *s);
/* Counter estimates of a thread over the last interval (the sampled accounting: event samples,
 * not counter deltas): added as its deltas would be, to its record when one is held, and to
 * its process's (made on first sight, comm as sampled); samples: the samples behind each
 * estimate.  Before daemon_agg_end. */
void daemon_agg_thread_counts(struct agg *a, uint32_t pid, uint32_t tid, const char *comm, const struct counter_val *c,
		       const __u64 *samples);
/* After the snapshot and a drain of the ring buffer: threads not seen are
 * lost, deltas are routed, slots assigned, dead series expired. */
void daemon_agg_end(struct agg *a, unsigned long long now_ns);
/* Label of a process's cgroup. */
const char *daemon_agg_cgroup_label(const struct agg_proc *p);

/* Per-function sums (--uprobe), from the (function, thread) rows of the BPF
 * map; rows of exited threads are folded, then forgotten (and deleted from
 * the map by the caller) so that the map does not fill with dead threads. */
struct func_row;

struct agg_func_sums {
	double calls, wall_ns, oncpu_ns, self_oncpu_ns, blocked_ns, runq_ns;
};

struct agg_funcs {
	int n;
	struct agg_func_sums *sum;	/* per function id, monotonic */
	double *last_calls;		/* calls in the last update, per function id */
	struct u64map prev;		/* fn << 32 | tid -> row as last read */
};

int daemon_agg_funcs_init(struct agg_funcs *f, int nfuncs);
void daemon_agg_funcs_free(struct agg_funcs *f);
void daemon_agg_funcs_update(struct agg_funcs *f, const struct func_row *rows, size_t n);
void daemon_agg_funcs_forget(struct agg_funcs *f, uint32_t fn, uint32_t tid);

#endif
