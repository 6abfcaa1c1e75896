// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Arithmetic on BPF's sums.  See counters.h. */
#include "model/counters.h"

/* The summed fields of each struct, beside its counter arrays: one list for adding and subtracting. */
#define THREAD_SUMS(X) X(oncpu_ns) X(offcpu_blocked_ns) X(offcpu_runqueue_ns) X(switches_voluntary) \
	X(switches_involuntary) X(migrations)
#define FUNC_SUMS(X) X(calls) X(returns) X(unmatched) X(wall_ns) X(oncpu_ns) X(self_oncpu_ns) \
	X(offcpu_blocked_ns) X(offcpu_runqueue_ns)

void counters_add(struct counter_val *a, const struct counter_val *b, int n)
{
	for (int e = 0; e < n; e++) {
		a[e].value += b[e].value;
		a[e].enabled += b[e].enabled;
		a[e].running += b[e].running;
	}
}

void counters_sub(struct counter_val *a, const struct counter_val *b, int n)
{
	for (int e = 0; e < n; e++) {
		a[e].value = sub0(a[e].value, b[e].value);
		a[e].enabled = sub0(a[e].enabled, b[e].enabled);
		a[e].running = sub0(a[e].running, b[e].running);
	}
}

double counter_scaled(const struct counter_val *c)
{
	if (c->running == 0 || c->running >= c->enabled)
		return (double)c->value;
	return (double)c->value * (double)c->enabled / (double)c->running;
}

double counter_running_share(const struct counter_val *c)
{
	if (c->enabled == 0)
		return 1.0;
	return c->running >= c->enabled ? 1.0 : (double)c->running / (double)c->enabled;
}

void counters_scaled(const struct counter_val *c, int n, double *scaled, double *pct_running)
{
	for (int e = 0; e < n; e++) {
		scaled[e] = counter_scaled(&c[e]);
		pct_running[e] = 100.0 * counter_running_share(&c[e]);
	}
}

#define ADD(f) a->f += b->f;
#define SUB(f) a->f = sub0(a->f, b->f);

void thread_stats_add(struct thread_stats *a, const struct thread_stats *b, int nr_events)
{
	THREAD_SUMS(ADD)
	counters_add(a->c, b->c, nr_events);
}

void thread_stats_sub(struct thread_stats *out, const struct thread_stats *in, const struct thread_stats *b,
		      int nr_events)
{
	struct thread_stats *a = out;

	*out = *in;
	if (!b)
		return;
	THREAD_SUMS(SUB)
	counters_sub(out->c, b->c, nr_events);
}

void func_stats_add(struct func_stats *a, const struct func_stats *b, int nr_events)
{
	FUNC_SUMS(ADD)
	counters_add(a->c, b->c, nr_events);
	counters_add(a->self, b->self, nr_events);
}

void func_stats_sub(struct func_stats *a, const struct func_stats *b, int nr_events)
{
	FUNC_SUMS(SUB)
	counters_sub(a->c, b->c, nr_events);
	counters_sub(a->self, b->self, nr_events);
}
