// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The overhead budget controller against a simulated plant: each interval
 * costs fixed + rate * per_sample of BPF time; check that the rate converges
 * inside the budget, stays put (no oscillation), comes back up when the load
 * drops, respects its bounds, says when the rate cannot fix it, and that
 * weighted sample sums stay unbiased across rate changes.
 */
#include <math.h>
#include "check.h"
#include "daemon/budget.h"

#define WALL 1e9	/* 1 s intervals */

struct plant {
	double fixed_ns;	/* BPF ns per second that do not depend on the rate */
	double per_sample_ns;	/* BPF ns per sample */
};

/* Run n intervals; returns the last rate; counts rate changes in the second half. */
static double run(struct budget *b, const struct plant *p, int n, int *late_changes, double *max_cost)
{
	double hz = b->hz;

	*late_changes = 0;
	*max_cost = 0;
	for (int i = 0; i < n; i++) {
		double s = hz * p->per_sample_ns, prev = hz;

		hz = budget_step(b, p->fixed_ns + s, s, WALL);
		if (i >= n / 2 && hz != prev)
			(*late_changes)++;
		if (i >= 1 && b->cost > *max_cost)
			*max_cost = b->cost;
	}
	return hz;
}

int main(void)
{
	struct budget b;
	struct plant p;
	int changes;
	double hz, maxc;

	/* 1 % budget = 10 ms/s; spine 2 ms/s; 1 us per sample: at 99 Hz x 2 CPUs... the
	 * requested 20 kHz costs 20 ms/s: must come down to about (8 - 2) ms / 1 us = 6 kHz */
	budget_init(&b, 1.0, 20000, 10);
	p = (struct plant){ .fixed_ns = 2e6, .per_sample_ns = 1000 };
	hz = run(&b, &p, 40, &changes, &maxc);
	check(fabs(hz - 6000) < 1, "over budget: rate cut to the predicted 80%% point (%.1f Hz, want 6000)", hz);
	check(b.fixed + hz * 1000 / 1e9 <= b.limit, "converged rate is inside the budget (cost %.4f <= %.4f)",
	      b.fixed + hz * 1000 / 1e9, b.limit);
	check(changes == 0, "no oscillation once converged (%d late changes)", changes);
	check(b.over_intervals == 1, "only the first interval was over (%llu)", b.over_intervals);
	check(!b.floor_over, "rate can meet the budget: floor_over clear");

	/* load drops (per-sample cost falls 10x): raises back, at most doubling, up to the request */
	p.per_sample_ns = 100;
	double prev = hz;
	bool doubling_ok = true;
	for (int i = 0; i < 40; i++) {
		double s = prev * p.per_sample_ns;
		double next = budget_step(&b, p.fixed_ns + s, s, WALL);

		if (next > 2 * prev + 1e-9)
			doubling_ok = false;
		if (b.cost > b.limit)
			doubling_ok = false;
		prev = next;
	}
	check(doubling_ok, "raising never more than doubles a step and never crosses the limit");
	check(fabs(prev - 20000) < 1e-6, "back at the requested rate when affordable (%.1f)", prev);

	/* cheap enough from the start: the requested rate is kept */
	budget_init(&b, 1.0, 1000, 10);
	p = (struct plant){ .fixed_ns = 1e6, .per_sample_ns = 1000 };
	hz = run(&b, &p, 20, &changes, &maxc);
	check(hz == 1000 && b.rate_changes == 0, "under budget: requested rate kept (%.1f, %llu changes)", hz,
	      b.rate_changes);

	/* hysteresis band: between 50 % and 100 % of the limit nothing moves */
	budget_init(&b, 1.0, 1000, 10);
	b.hz = 500;
	p = (struct plant){ .fixed_ns = 1e6, .per_sample_ns = 12000 };	/* 7 ms/s at 500 Hz */
	hz = run(&b, &p, 20, &changes, &maxc);
	check(hz == 500, "inside the hysteresis band the rate stays (%.1f)", hz);

	/* the fixed part alone breaks the budget: lowest rate, and says so */
	budget_init(&b, 1.0, 1000, 10);
	p = (struct plant){ .fixed_ns = 15e6, .per_sample_ns = 1000 };
	hz = run(&b, &p, 10, &changes, &maxc);
	check(hz == 10, "fixed cost over budget: rate at its floor (%.1f)", hz);
	check(b.floor_over, "fixed cost over budget: floor_over set");

	/* bounds */
	budget_init(&b, 0.1, 5000, 100);
	p = (struct plant){ .fixed_ns = 0, .per_sample_ns = 1e5 };
	hz = run(&b, &p, 10, &changes, &maxc);
	check(hz >= 100 && hz <= 5000, "rate within [min, requested] (%.1f)", hz);

	/* no sampler: monitors only */
	budget_init(&b, 1.0, 0, 10);
	hz = budget_step(&b, 2e7, 0, WALL);
	check(hz == 0 && b.over && b.floor_over && b.over_intervals == 1,
	      "no sampler: rate 0, over-budget interval counted and flagged");
	check(budget_sample_weight_ns(&b) == 0, "no sampler: weight 0");

	/* bad input keeps the rate */
	budget_init(&b, 1.0, 1000, 10);
	check(budget_step(&b, 1e9, 1e9, 0) == 1000 && b.intervals == 0, "zero wall time ignored");
	check(budget_step(&b, -1, 0, WALL) == 1000, "negative run time ignored");

	/* unbiased totals: a thread on CPU 100 % of 10 s is sampled at changing rates;
	 * the weighted sum of its samples is its CPU time whatever the rates were */
	budget_init(&b, 1.0, 4000, 10);
	p = (struct plant){ .fixed_ns = 2e6, .per_sample_ns = 3000 };
	double est_ns = 0, count = 0;
	hz = b.hz;
	for (int i = 0; i < 10; i++) {
		double samples = hz * 1.0;	/* one second on CPU at this rate */

		est_ns += samples * budget_sample_weight_ns(&b);
		count += samples;
		hz = budget_step(&b, p.fixed_ns + hz * p.per_sample_ns, hz * p.per_sample_ns, WALL);
	}
	check(fabs(est_ns - 10e9) < 1, "weighted samples sum to the true CPU time (%.0f ns)", est_ns);
	check(b.rate_changes >= 1 && fabs(count / 4000 * 1e9 - 10e9) > 1e9,
	      "the rate changed, and unweighted counts at the requested rate would be biased (%.0f)",
	      count / 4000 * 1e9);

	/* noisy measurements (+-15 %, deterministic pseudo-random): the 20 % margin
	 * keeps it inside the budget, with few changes */
	budget_init(&b, 1.0, 20000, 10);
	p = (struct plant){ .fixed_ns = 2e6, .per_sample_ns = 1000 };
	unsigned int seed = 12345;
	int over_late = 0, changes_late = 0;
	hz = b.hz;
	for (int i = 0; i < 200; i++) {
		double noise, s, prev_hz = hz;

		seed = seed * 1103515245u + 12345u;
		noise = 1.0 + 0.30 * ((seed >> 16 & 0x7fff) / 32767.0 - 0.5);
		s = hz * p.per_sample_ns * noise;
		hz = budget_step(&b, p.fixed_ns * noise + s, s, WALL);
		if (i >= 20 && b.over)
			over_late++;
		if (i >= 20 && hz != prev_hz)
			changes_late++;
	}
	check(over_late == 0, "noisy plant: never over budget after settling (%d intervals over)", over_late);
	check(changes_late <= 20, "noisy plant: few rate changes after settling (%d in 180 intervals)", changes_late);
	return check_exit();
}
