/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The run's thread records (exited + live) and their per-process sums, in
 * bounded memory however many threads come and go:
 *   - the latest max_exited exited threads are kept one by one;
 *   - older ones are folded into one record per process (tid 0, which no
 *     thread has), at most max_folded of them;
 *   - older process records are folded into one record per comm (pid 0,
 *     tid 0), at most max_folded of them, then into comm "[other]".
 * Every sum stays in the total; what was folded is counted.
 */
#ifndef TMABPF_THREAD_TABLE_H
#define TMABPF_THREAD_TABLE_H
#include <stdbool.h>
#include <stddef.h>
#include "lib/strmap.h"
#include "lib/u64map.h"
#include "model/counters.h"

#define THREAD_TABLE_MAX_EXITED 16384
#define THREAD_TABLE_MAX_FOLDED 1024

struct folded_rec {
	struct thread_stats s;		/* the sums; s.tid 0, s.pid 0 for a comm's */
	unsigned long long threads;	/* threads folded into it */
	unsigned long long procs;	/* processes (comm records) */
};

struct thread_table {
	struct thread_stats *exited;	/* ring of final sums, oldest at exited[head] */
	size_t n_exited, cap_exited, head;
	size_t max_exited;
	struct folded_rec *fproc;	/* ring of per-process records, oldest at fproc[fhead] */
	size_t n_fproc, fhead;
	struct u64map fproc_by_pid;	/* pid -> 1 + slot */
	struct folded_rec *fcomm;	/* per-comm records */
	size_t n_fcomm;
	struct strmap fcomm_by_comm;	/* comm -> 1 + index */
	size_t max_folded;
	unsigned long long threads_folded;	/* exited threads folded into process records */
	unsigned long long procs_folded;	/* process records folded into comm records */
	struct thread_stats *live;	/* latest snapshot of the map */
	size_t n_live;
	int nr_events;
};

/* A folded record (several exited threads' sums), not a thread. */
static inline bool thread_is_folded(const struct thread_stats *s)
{
	return s->tid == 0;
}

void thread_table_init(struct thread_table *tt, int nr_events);
/* Keep max_exited exited threads one by one, max_folded process and comm records (>= 1, at
 * most max_exited). */
void thread_table_set_limits(struct thread_table *tt, size_t max_exited, size_t max_folded);
void thread_table_free(struct thread_table *tt);
int thread_table_add_exited(struct thread_table *tt, const struct thread_stats *s);
/* Replace the live snapshot (takes ownership of arr, malloc'd). */
void thread_table_set_live(struct thread_table *tt, struct thread_stats *arr, size_t n);
/* Every record (folded, exited, then live), as a malloc'd array of pointers: folded
 * records (thread_is_folded) carry the sums of threads no longer kept one by one. */
size_t thread_table_all(const struct thread_table *tt, const struct thread_stats ***out);
/* Per-process sums (tgid), folded threads included; comm from the main thread. The
 * per-comm records (pid 0) are not processes: see tt->fcomm. malloc'd array. */
size_t thread_table_processes(const struct thread_table *tt, struct thread_stats **out);
/* Sum of all threads. */
void thread_table_total(const struct thread_table *tt, struct thread_stats *sum);
/* Bring live thread s's times up to now: the slice since its last traced switch is added, on-CPU
 * from the kernel's runtime of the thread (never its wall time: a switch-out the kernel did not
 * trace leaves a thread "switched in" while it sleeps: the rest of such a slice, from
 * THREAD_UNTRACED_MIN_NS, is counted as blocked; under it, it is the runtime's lag on a running
 * thread, a tick at most, and in no state), or off-CPU in its state at switch-out.  The slice is
 * then closed (last_in_ns, last_out_ns 0).  Returns the blocked ns booked for an untraced
 * switch-out, 0 when none. */
#define THREAD_UNTRACED_MIN_NS 10000000ULL	/* more than a tick of lag: a switch-out not traced */
unsigned long long thread_close_slice(struct thread_stats *s, unsigned long long now);
/* Find a thread by tid and first_seen in a snapshot sorted by thread_stats_cmp. */
const struct thread_stats *thread_find(const struct thread_stats *arr, size_t n, const struct thread_stats *key);
int thread_stats_cmp(const void *a, const void *b);

#endif
