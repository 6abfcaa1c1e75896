/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Loader for bpf/tasks.bpf.c: per-thread accounting from task_struct counts,
 * read by a task iterator once per interval and at thread exit (no per-switch
 * hook).  Produces the spine's struct thread_stats (task_acct.c). */
#ifndef TMABPF_TASKS_LOADER_H
#define TMABPF_TASKS_LOADER_H
#include <stdbool.h>
#include <stddef.h>
#include "collect/task_acct.h"
#include "collect/threads_loader.h"
#include "pmu/events.h"

struct tasks_bpf;
struct ring_buffer;
struct bpf_link;

struct tasks_prog {
	struct tasks_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link *iter;	/* the iterator's link: each read opens an iterator from it */
	struct task_acct acct;
	size_t rec_size;	/* sizeof(struct task_rec), or of struct task_rec_est (estimated) */
	int stats_fd;
	bool run_stats;		/* kernel BPF run-time stats on */
	bool run_delay;		/* the kernel keeps sched_info.run_delay (CONFIG_SCHED_INFO) */
	int nr_cpus;
	unsigned long long records;	/* threads in the last iteration */
	thread_exit_fn on_exit;
	void *ctx;
};

/* --sample-events: the events are sampled, and each thread's counts are its estimates from the
 * event sampler (task_acct.h).  Only the target filter's threads (the spine's pids map and rule)
 * are read and reported, and their estimate storage is created for them and their children. */
struct tasks_est {
	int pids_fd;
	unsigned int filter;	/* enum tmabpf_filter */
	unsigned int main_id;
};

/* Open and load; err says what failed.  0 or a negative errno (-EINVAL: an
 * event that is not derivable).  est: estimated counts (NULL: the events are
 * task_struct counts, or none). */
int tasks_load(struct tasks_prog *p, const struct event_list *evs, const struct tasks_est *est, int max_threads,
	       thread_exit_fn on_exit, void *ctx, char *err, size_t errlen);
/* The map of each thread's estimates (bpf/thread_est.bpf.h), for the event sampler. */
int tasks_thread_est_fd(const struct tasks_prog *p);
/* The run ends: wait up to wait_ms for the final records of the threads that exited, then give the
 * exit records still held as those threads' final sums (on_exit). */
void tasks_flush(struct tasks_prog *p, int wait_ms);
/* Attach the exit program and create the iterator's link. */
int tasks_attach(struct tasks_prog *p, char *err, size_t errlen);
/* Estimated: one iteration that only creates the targets' estimate storage (after attach, before
 * the events sample: none of their samples then misses a thread).  0 or -errno. */
int tasks_seed(struct tasks_prog *p);
/* One iteration over every thread: current sums of live threads (*out malloc'd). */
int tasks_read(struct tasks_prog *p, struct thread_stats **out, size_t *n);
/* Deliver exited threads to on_exit; returns the count or -errno. */
int tasks_poll(struct tasks_prog *p, int timeout_ms);
/* Run time and losses in the spine's terms (STAT_EXIT_DROPS, STAT_THREADS_FULL). */
void tasks_self_stats(struct tasks_prog *p, struct self_stats *s);
void tasks_detach(struct tasks_prog *p);
void tasks_destroy(struct tasks_prog *p);

#endif
