/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * --per-call: the iterations of a marker function (one per outermost call on
 * a thread: a token of a decode loop) and their statistics.  Each iteration's
 * window (entry to return on its thread) is decomposed, per thread of the
 * process and summed: on-CPU time split into compute and spin, blocked,
 * runqueue, and "absent" (the thread did not exist for the whole window: not
 * yet started, or exited), so that compute + spin + blocked + runqueue +
 * absent = wall x threads.  collect/percall.c fills it.
 */
#ifndef TMABPF_ITERATIONS_H
#define TMABPF_ITERATIONS_H
#include <stdbool.h>
#include <stddef.h>
#include "bpf/tmabpf.h"
#include "lib/log2_hist.h"

/* One thread's share of a window. */
struct iter_time {
	unsigned long long compute_ns;	/* on-CPU, not spinning */
	unsigned long long spin_ns;	/* on-CPU in spin functions (sampled share of on-CPU time) */
	unsigned long long blocked_ns;
	unsigned long long runq_ns;
	unsigned long long absent_ns;	/* not yet started, or exited, for this part of the window */
	unsigned long long runtime_ns;	/* the kernel's runtime in the window: on-CPU time less what
					 * the hypervisor stole and IRQs took (not in the sum above) */
};

struct iter_thread {
	unsigned int tid;
	struct iter_time t;
};

/* A probed function inside the window: calls returned in it, and the
 * inclusive times of those outermost calls, over every thread. */
struct iter_fn {
	unsigned int fn;		/* function id (uprobe_set.funcs) */
	unsigned long long calls;
	unsigned long long wall_ns;
	unsigned long long oncpu_ns;
};

/* One of a window's top functions by samples (--sample): leaf functions as the sample table names
 * them, interned by the symbolizer. */
#define ITER_TOP 5
struct iter_top {
	const char *module, *symbol;
	unsigned int samples;
};

struct iteration {
	unsigned int pid, tid;		/* the calling thread */
	unsigned int marker;		/* the marker's function id */
	unsigned long long start_ns;	/* CLOCK_MONOTONIC at its entry */
	unsigned long long wall_ns;
	struct iter_time sum;		/* over its threads */
	int nthreads;
	struct iter_thread *th;
	bool threads_truncated;		/* the process had more threads than a snapshot holds */
	int torn;			/* threads whose times were read while a switch kept writing them */
	int untracked;			/* threads the full threads map left out: on-CPU only, blocked and
					 * runqueue time missing (counted as absent) */
	int exited;			/* threads that exited in the window: their times up to the exit
					 * (from their exit record), absent after it */
	int nfns;
	struct iter_fn *fns;
	struct counter_val c[TMABPF_MAX_EVENTS];	/* the calling thread's counter deltas */
	/* the process' counter deltas: every thread's (an exited one's up to its exit); a thread on a
	 * CPU at either snapshot may have counts of the window's edge not folded yet, at most
	 * pc_unfolded_ns of its time */
	struct counter_val pc[TMABPF_MAX_EVENTS];
	unsigned long long pc_unfolded_ns;
	/* --roofline: the process' known GEMM/GEMV calls that returned in the window (every thread),
	 * their time, FLOPs and compulsory bytes (bpf/roof_work.bpf.h); unknown (all 0) when the
	 * process had no totals at either edge (roof_procs full) */
	struct iter_work {
		unsigned long long calls, wall_ns, flops, bytes;
		bool unknown;
	} work;
	/* --sample: the process' samples in the window, every thread, and their top leaf functions
	 * (sampled: false when --sample is off) */
	bool sampled;
	unsigned int samples;
	int ntop;
	struct iter_top top[ITER_TOP];
};

struct iterations {
	struct iteration *v;		/* in order of their return */
	size_t n, cap;
	unsigned long long dropped;	/* entries whose return never came (longjmp, thread exit) */
	unsigned long long open;	/* iterations still running at the end (not counted) */
	unsigned long long lost;	/* snapshots lost (ring buffer full) */
	unsigned long long samples_lost;	/* --sample: samples in no window's top functions (their
						 * ring full, or past the buffer's bound) */
};

/* Statistics of the iterations' wall times. */
struct iter_stats {
	size_t n;
	unsigned long long p50_ns, p90_ns, p99_ns, max_ns, sum_ns;
	double per_s;			/* iterations per second of iteration wall time: n / sum */
};

/* Add samples to (module, symbol) in v[0, n) (at most max entries; past that, nothing); the new n. */
int iter_top_add(struct iter_top *v, int n, int max, const char *module, const char *symbol, unsigned int samples);
/* Move the most sampled entries of v[0, n) into out[0, want), most first (taken ones read 0 samples
 * after); how many. */
int iter_top_pick(struct iter_top *v, int n, struct iter_top *out, int want);
/* Append a copy of it (its arrays are taken over).  0 or -ENOMEM. */
int iterations_add(struct iterations *s, struct iteration *it);
void iterations_free(struct iterations *s);
/* The nearest-rank percentiles of the walls. */
void iterations_stats(const struct iterations *s, struct iter_stats *st);
/* The walls' power-of-two histogram (bpftrace's hist()). */
void iterations_hist(const struct iterations *s, struct log2_hist *h);
/* Sum a window's share into *to. */
void iter_time_add(struct iter_time *to, const struct iter_time *t);
unsigned long long iter_time_total(const struct iter_time *t);
/* Iteration indexes by wall, slowest first, at most n of them into idx; how many. */
size_t iterations_slowest(const struct iterations *s, size_t *idx, size_t n);
/* The calls of fn in it (0 when none). */
unsigned long long iteration_calls(const struct iteration *it, unsigned int fn);
/* The median over iterations of fn's calls per iteration. */
unsigned long long iterations_median_calls(const struct iterations *s, unsigned int fn);

#endif
