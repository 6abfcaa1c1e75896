// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Per-function sums.  See func_sums.h. */
#include <stdlib.h>
#include "model/counters.h"
#include "model/func_sums.h"

int func_sum_cmp(const void *a, const void *b)
{
	const struct func_sum *x = a, *y = b;

	if (x->fn != y->fn)
		return x->fn < y->fn ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Add up adjacent equal keys of v (sorted); returns the new count. */
static size_t merge_sorted(struct func_sum *v, size_t n, int nr_events)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (k && !func_sum_cmp(&v[k - 1], &v[i])) {
			func_stats_add(&v[k - 1].s, &v[i].s, nr_events);
			continue;
		}
		v[k++] = v[i];
	}
	return k;
}

size_t func_sums(const struct func_row *rows, size_t n, int nr_events, bool per_thread, struct func_sum **out)
{
	struct func_sum *v = calloc(n ? n : 1, sizeof(*v));

	*out = v;
	if (!v)
		return 0;
	for (size_t i = 0; i < n; i++)
		v[i] = (struct func_sum){ .fn = (int)rows[i].key.fn, .pid = rows[i].s.pid,
					  .tid = per_thread ? (long long)rows[i].key.tid : -1, .s = rows[i].s };
	qsort(v, n, sizeof(*v), func_sum_cmp);
	return merge_sorted(v, n, nr_events);
}

size_t func_sums_per_process(const struct func_sum *thr, size_t n, int nr_events, struct func_sum **out)
{
	struct func_sum *v = calloc(n ? n : 1, sizeof(*v));

	*out = v;
	if (!v)
		return 0;
	for (size_t i = 0; i < n; i++) {
		v[i] = thr[i];
		v[i].tid = -1;	/* thr's order (function, pid, tid) stays sorted */
	}
	return merge_sorted(v, n, nr_events);
}
