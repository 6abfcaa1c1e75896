/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Per-function sums (--uprobe): the uprobes' (function, thread) rows summed per
 * thread or per process, the rows every functions table shows. */
#ifndef TMABPF_FUNC_SUMS_H
#define TMABPF_FUNC_SUMS_H
#include <stdbool.h>
#include <stddef.h>
#include "model/results.h"

/* One row of the functions table: a function's sums for one thread, or for
 * all threads of a process (tid < 0). */
struct func_sum {
	int fn;
	unsigned int pid;
	long long tid;
	struct func_stats s;
};

/* Order of func_sum rows: function, pid, tid (qsort/bsearch). */
int func_sum_cmp(const void *a, const void *b);
/* The rows summed per (function, thread), or per (function, pid) when !per_thread;
 * malloc'd (*out NULL, 0 when out of memory), sorted by func_sum_cmp. */
size_t func_sums(const struct func_row *rows, size_t n, int nr_events, bool per_thread, struct func_sum **out);
/* Per-(function, pid) sums of per-thread rows sorted by func_sum_cmp: malloc'd, sorted. */
size_t func_sums_per_process(const struct func_sum *thr, size_t n, int nr_events, struct func_sum **out);

#endif
