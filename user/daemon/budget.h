/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Overhead budget (--max-overhead): from tmabpf's own BPF run time (kernel BPF
 * stats) per second of wall time, choose the sampling rate that keeps it
 * inside the budget.  Pure arithmetic, no I/O: the daemon feeds it one
 * measurement per interval and applies the rate through a callback.
 *
 * Model: cost = fixed + rate * per_hz, where fixed is what does not scale with
 * the rate (sched_switch accounting, uprobes) and per_hz is measured from the
 * sampler's own run time.  Over the limit: cut at once to the rate predicted
 * to cost 80 % of it.  Well under (below 50 % for 3 intervals): raise, at most
 * doubling per interval, never above the requested rate nor above the rate
 * predicted to cost 80 %.  In between: keep (hysteresis).
 */
#ifndef TMABPF_BUDGET_H
#define TMABPF_BUDGET_H
#include <stdbool.h>

#define BUDGET_TARGET 0.8	/* aim at this share of the limit after a cut */
#define BUDGET_RAISE_BELOW 0.5	/* raise only while under this share ... */
#define BUDGET_RAISE_AFTER 3	/* ... for this many intervals in a row */

struct budget {
	double limit;		/* allowed BPF CPU seconds per wall second (0.01 = 1 % of one CPU) */
	double max_hz;		/* requested rate; 0: no sampler, the budget only monitors */
	double min_hz;
	double hz;		/* current rate */
	double cost;		/* last interval: all tmabpf BPF time / wall time */
	double fixed;		/* ... the part that does not scale with the rate */
	int calm;		/* intervals in a row under BUDGET_RAISE_BELOW * limit */
	bool over;		/* last interval over the limit */
	bool floor_over;	/* over the limit and the rate cannot fix it (at min_hz, or fixed cost alone) */
	unsigned long long intervals, over_intervals, rate_changes;
};

/* How the budget drives a sampler (daemon_sampling.c). */
struct daemon_sampler {
	int (*set_rate)(void *ctx, double hz);		/* (re)open the sampling events at hz; 0 on success */
	unsigned long long (*run_ns)(void *ctx);	/* the sampling programs' BPF run time so far */
	void *ctx;
};

/* pct: percent of one CPU (1.0 = 1 %); requested_hz 0 when there is no sampler. */
void budget_init(struct budget *b, double pct, double requested_hz, double min_hz);
/* One interval of wall_ns: bpf_ns all tmabpf BPF run time in it, sample_ns
 * the sampler's part of it.  Returns the rate for the next interval. */
double budget_step(struct budget *b, double bpf_ns, double sample_ns, double wall_ns);
/* Weight of one sample taken at the current rate: the ns of CPU time it stands
 * for (1e9 / hz), so that sums over rate changes stay unbiased; 0 without a rate. */
double budget_sample_weight_ns(const struct budget *b);

#endif
