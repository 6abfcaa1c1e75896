// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The report's model functions: TMA of a set of sums, multiplexing.  See report.h. */
#include <errno.h>
#include <stdlib.h>
#include "model/counters.h"
#include "model/report.h"

int sums_tma(const struct tma_plan *plan, const struct event_list *evs, const struct thread_stats *s,
	     struct tma_result *res)
{
	double scaled[TMABPF_MAX_EVENTS], pct[TMABPF_MAX_EVENTS];

	if (!plan)
		return -ENOENT;
	counters_scaled(s->c, evs->n, scaled, pct);
	return tma_compute_events(plan, evs, scaled, pct, res);
}

int tma_compute_events(const struct tma_plan *p, const struct event_list *evs, const double *scaled_values,
		       const double *pct_running, struct tma_result *res)
{
	struct tma_count c[TMABPF_MAX_EVENTS];

	for (int i = 0; i < evs->n; i++)
		c[i] = (struct tma_count){ .name = evs->ev[i].name, .attr = &evs->ev[i].attr, .group = evs->ev[i].group,
					   .value = scaled_values[i], .pct = pct_running ? pct_running[i] : 100 };
	return tma_compute(p, evs->n, c, res);
}

int report_tma(const struct report *r, const struct thread_stats *s, struct tma_result *res)
{
	if (!report_has_tma(r))
		return -ENOENT;
	return sums_tma(r->tma_plan, r->evs, s, res);
}

void report_events_scaled(const struct report *r, bool *scaled)
{
	const struct thread_stats **all;
	size_t n = thread_table_all(r->tt, &all);

	for (int e = 0; e < r->evs->n; e++) {
		scaled[e] = false;
		for (size_t i = 0; i < n && !scaled[e]; i++)
			scaled[e] = all[i]->c[e].running < all[i]->c[e].enabled;
	}
	free(all);
}
