// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <string.h>
#include "daemon/budget.h"

void budget_init(struct budget *b, double pct, double requested_hz, double min_hz)
{
	memset(b, 0, sizeof(*b));
	b->limit = pct / 100.0;
	b->max_hz = requested_hz > 0 ? requested_hz : 0;
	b->min_hz = min_hz > b->max_hz ? b->max_hz : min_hz;
	b->hz = b->max_hz;
}

static double clamp(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

double budget_step(struct budget *b, double bpf_ns, double sample_ns, double wall_ns)
{
	double s, per_hz, want, next = b->hz;

	if (!(wall_ns > 0) || bpf_ns < 0 || sample_ns < 0)
		return b->hz;
	b->intervals++;
	b->cost = bpf_ns / wall_ns;
	s = sample_ns < bpf_ns ? sample_ns / wall_ns : b->cost;
	b->fixed = b->cost - s;
	b->over = b->cost > b->limit;
	if (b->over)
		b->over_intervals++;
	if (b->max_hz <= 0) {	/* nothing to turn down */
		b->floor_over = b->over;
		return 0;
	}
	per_hz = b->hz > 0 ? s / b->hz : 0;
	want = per_hz > 0 ? (BUDGET_TARGET * b->limit - b->fixed) / per_hz : b->max_hz;
	if (b->over) {
		b->calm = 0;
		if (per_hz > 0)
			next = clamp(want, b->min_hz, b->hz);	/* cut at once, never raise here */
		b->floor_over = b->fixed > b->limit || (per_hz > 0 && b->fixed + per_hz * next > b->limit);
	} else {
		b->floor_over = false;
		if (b->cost < BUDGET_RAISE_BELOW * b->limit)
			b->calm++;
		else
			b->calm = 0;
		if (b->calm >= BUDGET_RAISE_AFTER && b->hz < b->max_hz) {
			next = clamp(want, b->hz, 2 * b->hz > b->min_hz ? 2 * b->hz : b->min_hz);
			next = clamp(next, b->min_hz, b->max_hz);
			b->calm = 0;
		}
	}
	if (next != b->hz)
		b->rate_changes++;
	b->hz = next;
	return next;
}

double budget_sample_weight_ns(const struct budget *b)
{
	return b->hz > 0 ? 1e9 / b->hz : 0;
}
