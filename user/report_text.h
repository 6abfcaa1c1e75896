/* SPDX-License-Identifier: MIT */
/* Plain-text outputs: the periodic top-style summary (-I) and the final report. */
#ifndef TMABPF_REPORT_TEXT_H
#define TMABPF_REPORT_TEXT_H
#include <stdio.h>
#include "report.h"

struct text_view {
	struct thread_stats *prev;	/* all threads at the previous interval, sorted */
	size_t nprev;
	unsigned long long prev_ns;	/* run time at the previous interval */
	int top;			/* rows shown */
	struct func_sum *fprev;		/* functions at the previous interval, sorted */
	size_t nfprev;
};

void text_view_init(struct text_view *v, int top);
void text_view_free(struct text_view *v);
/* One interval: per-thread deltas since the last call, sorted by on-CPU. */
void report_text_interval(struct text_view *v, const struct report *r, FILE *f);
/* The whole run: threads and processes. */
void report_text_final(const struct report *r, FILE *f, int top);

#endif
