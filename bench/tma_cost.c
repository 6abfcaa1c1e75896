// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * tma_cost: what one tma_compute_events() call costs, cold (formulas compiled on the
 * call, as every call did before the engine cached them) and warm (the cached
 * programs evaluated), for skylakex --tma=3 and sapphirerapids --tma=2 on
 * events planned by tma_plan() with synthetic counts (no hardware
 * reading).  Prints us per call, the cold/warm ratio, and what a 50-line live
 * view would cost at a 1 s refresh: 50 warm calls per refresh, timed.
 *
 * usage: tma_cost [CALLS]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tma/tma.h"
#include "tma/tma_cache.h"
#include "lib/clock.h"
#include "model/report.h"
#include "pmu/key_encode.h"


static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* median of reps runs of fn, us per call */
static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_dbl);
	return v[n / 2];
}

static int one(const char *cpu_name, int level, int calls)
{
	static struct event_list el;
	static struct tma_plan p;
	struct tma_env env = { 0 };
	static struct tma_result r;
	double vals[TMABPF_MAX_EVENTS], pct[TMABPF_MAX_EVENTS];
	const struct tma_cpu *c = tma_cpu_by_name(cpu_name);
	char err[256];
	enum { REPS = 7 };
	double cold[REPS], warm[REPS], view[REPS];

	el.n = 0;
	if (!c || tma_plan(&p, c, level, TMABPF_MAX_EVENTS, &env, tma_encode_key, err, sizeof(err)) ||
	    tma_plan_append(&p, &el, err, sizeof(err))) {
		fprintf(stderr, "tma_cost: plan %s --tma=%d failed: %s\n", cpu_name, level, c ? err : "no recipe");
		return 1;
	}
	for (int i = 0; i < el.n; i++) {
		vals[i] = 1e8 * (1 + (i * 7919) % 13);	/* synthetic counts, all nonzero */
		pct[i] = el.ev[i].group == 0 ? 100 : 50;
	}
	for (int rep = 0; rep < REPS; rep++) {
		double t0 = (mono_ns() / 1e3);
		for (int k = 0; k < calls; k++) {
			tma_cache_reset();
			tma_compute_events(&p, &el, vals, pct, &r);
		}
		cold[rep] = ((mono_ns() / 1e3) - t0) / calls;
		tma_compute_events(&p, &el, vals, pct, &r);
		t0 = (mono_ns() / 1e3);
		for (int k = 0; k < calls; k++)
			tma_compute_events(&p, &el, vals, pct, &r);
		warm[rep] = ((mono_ns() / 1e3) - t0) / calls;
		t0 = (mono_ns() / 1e3);
		for (int k = 0; k < 50; k++)
			tma_compute_events(&p, &el, vals, pct, &r);
		view[rep] = (mono_ns() / 1e3) - t0;
	}
	double mc = median(cold, REPS), mw = median(warm, REPS), mv = median(view, REPS);
	printf("%-15s --tma=%d  %2d events %2d nodes: cold %7.1f us/call  warm %6.1f us/call  "
	       "cold/warm %5.1fx; 50 rows per 1 s refresh: %6.1f us = %.3f %% of one core\n",
	       cpu_name, level, el.n, r.n, mc, mw, mc / mw, mv, mv / 1e6 * 100);
	return 0;
}

int main(int argc, char **argv)
{
	int calls = argc > 1 ? atoi(argv[1]) : 200;

	if (calls < 1)
		calls = 1;
	return one("skylakex", 3, calls) | one("sapphirerapids", 2, calls);
}
