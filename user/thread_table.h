/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The run's thread records (exited + live) and their per-process sums. */
#ifndef TMABPF_THREAD_TABLE_H
#define TMABPF_THREAD_TABLE_H
#include <stdbool.h>
#include <stddef.h>
#include "../bpf/tmabpf.h"

struct thread_table {
	struct thread_stats *exited;	/* final sums, in exit order */
	size_t n_exited, cap_exited;
	struct thread_stats *live;	/* latest snapshot of the map */
	size_t n_live;
	int nr_events;
};

void thread_table_init(struct thread_table *tt, int nr_events);
void thread_table_free(struct thread_table *tt);
int thread_table_add_exited(struct thread_table *tt, const struct thread_stats *s);
/* Replace the live snapshot (takes ownership of arr, malloc'd). */
void thread_table_set_live(struct thread_table *tt, struct thread_stats *arr, size_t n);
/* Every thread (exited then live), as a malloc'd array of pointers. */
size_t thread_table_all(const struct thread_table *tt, const struct thread_stats ***out);
/* Per-process sums (tgid); comm from the main thread. malloc'd array. */
size_t thread_table_processes(const struct thread_table *tt, struct thread_stats **out);
/* Sum of all threads. */
void thread_table_total(const struct thread_table *tt, struct thread_stats *sum);
/* Add b's sums into a (counters, times, switches). */
void thread_stats_add(struct thread_stats *a, const struct thread_stats *b, int nr_events);
/* a - b for sums (interval deltas); clamps at zero. */
void thread_stats_sub(struct thread_stats *out, const struct thread_stats *a, const struct thread_stats *b,
		      int nr_events);
/* a[e] += b[e] for n counters (value, enabled, running). */
void counters_add(struct counter_val *a, const struct counter_val *b, int n);
/* a[e] -= b[e], clamped at zero, for n counters (interval deltas). */
void counters_sub(struct counter_val *a, const struct counter_val *b, int n);
/* Multiplex-scaled value: value * enabled / running. */
double counter_scaled(const struct counter_val *c);
/* Share of time the counter was running, 0..1 (1 when never enabled). */
double counter_running_share(const struct counter_val *c);
/* Find a thread by tid and first_seen in a snapshot sorted by thread_stats_cmp. */
const struct thread_stats *thread_find(const struct thread_stats *arr, size_t n, const struct thread_stats *key);
int thread_stats_cmp(const void *a, const void *b);

#endif
