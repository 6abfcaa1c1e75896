/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Task records (bpf/tasks.bpf.c: the kernel's cumulative per-thread counts)
 * into the per-thread sums the spine produces (struct thread_stats), so that
 * the daemon's aggregation, metrics and JSON lines do not care which
 * accounting ran.
 *
 * - on-CPU = se.sum_exec_runtime; runqueue = sched_info.run_delay;
 *   blocked = lifetime - on-CPU - runqueue, kept monotonic per thread (a
 *   thread on a CPU or in a runqueue at the read has that slice counted as
 *   blocked until the kernel folds it in: the error is at most the current
 *   slice or wait, never accumulated);
 * - switches = nvcsw / nivcsw, migrations = se.nr_migrations;
 * - events: the software events that are such counts (task_acct_event_field);
 *   or, with --sample-events, any event: the thread's estimate from its event
 *   samples, which the sampler keeps in the thread's task storage.
 *
 * Threads that existed before the first iteration count from their first
 * sighting (as the spine counts from attach); threads started later count
 * from birth.  A thread is (tid, start time): first_seen_ns = start time.
 * A thread's end comes in two records: sched_process_exit (which orders it
 * before the thread leaves the iteration) and sched_process_free (its final
 * counts: se.sum_exec_runtime is not brought up to date at exit, which loses
 * most of a short thread's time).  In between the exit record is held and
 * shown as the live thread; the final record gives the final sums (exit time
 * plus what ran after it).  A thread whose final record does not come within
 * TASK_ACCT_HOLD_ITERS iterations (an unreaped zombie leader) gets the exit
 * record's sums, and its final record is then ignored.
 *
 * Per-thread state is kept only for live and exiting threads, at most
 * max_threads.
 */
#ifndef TMABPF_TASK_ACCT_H
#define TMABPF_TASK_ACCT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/tasks.h"
#include "lib/u64map.h"
#include "pmu/events.h"

enum task_field {
	TF_NONE = -1,
	TF_EXEC = 0,		/* task-clock: se.sum_exec_runtime (ns) */
	TF_FAULTS,		/* page-faults: min_flt + maj_flt */
	TF_MIN_FLT,		/* minor-faults */
	TF_MAJ_FLT,		/* major-faults */
	TF_SWITCHES,		/* context-switches: nvcsw + nivcsw */
	TF_MIGRATIONS,		/* cpu-migrations: se.nr_migrations */
};

/* The task_struct count that event d is, exactly; TF_NONE when it is not one. */
enum task_field task_acct_event_field(const struct event_desc *d);
/* "task-clock, page-faults, ...": the events task accounting derives. */
const char *task_acct_derivable(void);
/* The index of the first event of evs that is not derivable; -1 when all are. */
int task_acct_underivable(const struct event_list *evs);

#define TASK_REC_EXIT 1		/* task_rec.exited: sched_process_exit */
#define TASK_REC_FINAL 2	/* task_rec.exited: sched_process_free */
#define TASK_ACCT_HOLD_ITERS 5	/* iterations an exit record waits for its final record */
#define TASK_ACCT_DONE_ITERS 600	/* iterations a thread given its exit's sums waits for a late final record */

struct task_acct {
	int nr_events;
	bool estimated;			/* counts are the event sampler's estimates (struct task_rec_est) */
	enum task_field field[TMABPF_MAX_EVENTS];
	size_t max_threads;
	uint64_t t0;			/* first iteration (CLOCK_MONOTONIC ns); 0 before it */
	unsigned int gen;		/* iteration number */
	struct u64map seen;		/* tid -> struct task_seen, live threads */
	unsigned long long over_cap;	/* records not accounted: max_threads threads held already */
	unsigned long long unknown_exits;	/* exits of threads older than t0 never seen */
	unsigned long long finals_late;	/* threads given their exit record's sums: no final record in time */
	size_t held;			/* exit records waiting for their final record */
};

/* 0, or -EINVAL with err naming the first event that is not derivable.  estimated: every event
 * is sampled instead (--sample-events), and each thread's counts are its estimates (its records are
 * struct task_rec_est). */
int task_acct_init(struct task_acct *a, const struct event_list *evs, bool estimated, size_t max_threads, char *err,
		   size_t errlen);
void task_acct_free(struct task_acct *a);
/* Before an iteration's records (now: CLOCK_MONOTONIC ns); forgets threads
 * missing from the previous one (their exit records were drained since). */
void task_acct_begin(struct task_acct *a, uint64_t now);
/* A live thread's record: 0 with *out filled, or -1 (not accounted). */
int task_acct_live(struct task_acct *a, const struct task_rec *r, struct thread_stats *out);
/* An exit or final record: 0 with the thread's final sums in *out (exited =
 * 1), or -1 (held, ignored, or not accounted). */
int task_acct_exit(struct task_acct *a, const struct task_rec *r, struct thread_stats *out);
/* After an iteration and a drain of the ring buffer: the held exit records as
 * live threads (up to cap into out[]); those held too long go to final()
 * instead. */
size_t task_acct_held(struct task_acct *a, struct thread_stats *out, size_t cap,
		      void (*final)(void *ctx, const struct thread_stats *s), void *ctx);

/* The run ends: every held exit record's sums to final() now, as the thread's last (its final
 * record did not come in time). */
void task_acct_flush(struct task_acct *a, void (*final)(void *ctx, const struct thread_stats *s), void *ctx);

#endif
