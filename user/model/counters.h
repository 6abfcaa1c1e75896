/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Arithmetic on the sums BPF keeps (bpf/tmabpf.h, bpf/uprobes.h): adding and
 * subtracting counters, per-thread and per-function sums; multiplex scaling. */
#ifndef TMABPF_COUNTERS_H
#define TMABPF_COUNTERS_H
#include "bpf/uprobes.h"

/* a - b, or 0 when b is larger (sums read at different times). */
static inline __u64 sub0(__u64 a, __u64 b)
{
	return a > b ? a - b : 0;
}

/* a[e] += b[e] for n counters (value, enabled, running). */
void counters_add(struct counter_val *a, const struct counter_val *b, int n);
/* a[e] -= b[e], clamped at zero, for n counters (interval deltas). */
void counters_sub(struct counter_val *a, const struct counter_val *b, int n);
/* Multiplex-scaled value: value * enabled / running. */
double counter_scaled(const struct counter_val *c);
/* Share of time the counter was running, 0..1 (1 when never enabled). */
double counter_running_share(const struct counter_val *c);
/* Each of n counters scaled, and its percent running (TMA's inputs). */
void counters_scaled(const struct counter_val *c, int n, double *scaled, double *pct_running);

/* Add b's sums into a (counters, times, switches). */
void thread_stats_add(struct thread_stats *a, const struct thread_stats *b, int nr_events);
/* a - b for sums (interval deltas); clamps at zero. */
void thread_stats_sub(struct thread_stats *out, const struct thread_stats *a, const struct thread_stats *b,
		      int nr_events);
/* Add b's sums into a (calls, times, inclusive and self counters). */
void func_stats_add(struct func_stats *a, const struct func_stats *b, int nr_events);
/* a -= b for sums (interval deltas); clamps at zero. */
void func_stats_sub(struct func_stats *a, const struct func_stats *b, int nr_events);

#endif
