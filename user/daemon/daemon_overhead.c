// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The daemon's cost against --max-overhead, at each refresh: the BPF time (the budget steers the
 * sampler's rate, lowers sampled accounting's, detaches the busiest probed function), and the
 * whole CPU (said once when over). */
#include "collect/uprobes_loader.h"
#include "daemon/daemon_overhead.h"
#include "lib/clock.h"
#include "lib/warn.h"

#define SHED_AFTER 3		/* intervals over budget, uprobes dominating, before a function is detached */

/* Over budget with uprobes costing most of it, interval after interval:
 * detach the busiest probed function (the --max-rate mechanism). */
static void shed_uprobes(struct daemon *D, double up_ns, double bpf_ns)
{
	struct uprobe_set *set = D->c.links.uset;
	int hot = -1;
	char err[512];

	if (!D->c.links.uprobes || !D->budget.over || up_ns < 0.5 * bpf_ns) {
		D->shed_streak = 0;
		return;
	}
	if (++D->shed_streak < SHED_AFTER)
		return;
	D->shed_streak = 0;
	for (int fn = 0; fn < set->nr_funcs && fn < D->funcs.n; fn++)	/* a span is not detached alone (docs/itt.md) */
		if (!set->funcs[fn].detached && !set->funcs[fn].itt && (hot < 0 || D->funcs.last_calls[fn] > D->funcs.last_calls[hot]))
			hot = fn;
	if (hot < 0 || D->funcs.last_calls[hot] <= 0)
		return;
	set->funcs[hot].detached = true;
	D->self.funcs_detached++;
	warn_add("budget: detached %s (%.0f calls in the last interval): tmabpf's BPF time %.2f%% of a CPU > "
		 "--max-overhead %.2f%%", set->funcs[hot].symbol, D->funcs.last_calls[hot], 100 * D->budget.cost,
		 100 * D->budget.limit);
	if (uprobes_reattach_lib(D->c.links.uprobes, set, set->funcs[hot].lib, err, sizeof(err)))
		warn_add("re-attaching after the budget detached a function: %s", err);
}

#define CPU_CHECK_AFTER 10	/* refreshes */

/* The daemon's own CPU (user space: refreshes, symbolizing, HTTP) over the last wall ns. */
static void user_cost(struct daemon *D, double wall)
{
	unsigned long long self = self_cpu_ns();

	D->self.user_cpu_ratio = wall > 0 ? (double)(self - D->last_self_ns) / wall : 0;
	D->last_self_ns = self;
}

/* With the BPF time, the daemon's whole CPU cost against --max-overhead: over it, said once (the
 * sampling rate does not set the user-space cost: the interval and the number of series do). */
static void check_cpu_cost(struct daemon *D)
{
	double bpf = D->budget.cost, total = D->self.user_cpu_ratio + bpf;

	/* smoothed (start-up, a scrape or a profile are bursts), and past the start-up's symbol loading */
	D->cpu_smooth = D->self.refreshes > CPU_CHECK_AFTER ? 0.9 * D->cpu_smooth + 0.1 * total : total;
	total = D->cpu_smooth;
	if (!D->cpu_over && D->budget.limit > 0 && total > D->budget.limit && D->self.refreshes > 2 * CPU_CHECK_AFTER) {
		warn_add("budget: tmabpf's CPU is %.2f%% of a CPU (user space %.2f%%, BPF %.2f%%), over --max-overhead %.2f%%: "
			 "a longer --interval or fewer --top-procs/--top-functions cost less in user space",
			 100 * total, 100 * D->self.user_cpu_ratio, 100 * bpf, 100 * D->budget.limit);
		D->cpu_over = true;
	}
}

/* Sampled accounting over budget even at the stack sampler's lowest rate: the events' rate halves
 * (down to DEVS_MIN_HZ), one line each time; estimates stay unbiased (each sample carries its period). */
static void shed_events_rate(struct daemon *D)
{
	double hz = D->devs.ev.hz;

	if (!D->acct.sampled || !D->budget.floor_over || hz <= DEVS_MIN_HZ)
		return;
	hz = hz / 2 < DEVS_MIN_HZ ? DEVS_MIN_HZ : hz / 2;
	evsamples_set_rate(&D->devs.ev, hz);
	warn_add("budget: tmabpf's BPF time is %.2f%% of a CPU, over --max-overhead %.2f%%: sampled accounting lowered "
		 "to %.0f samples/s per CPU (its estimates get wider error bars: tmabpf_event_samples_total)",
		 100 * D->budget.cost, 100 * D->budget.limit, hz);
}

void daemon_overhead_update(struct daemon *D, unsigned long long now)
{
	struct daemon_self *s = &D->self;
	unsigned long long bpf = s->spine.bpf_run_ns + s->uprobe_run_ns;
	unsigned long long samp = D->sampler ? D->sampler->run_ns(D->sampler->ctx) : 0;
	double dbpf, dup, dsamp, wall;
	bool was_over = D->budget.floor_over;

	bpf += samp;
	if (D->acct.sampled) {
		unsigned long long ns, cnt;

		daemon_evsampled_run_stats(&D->devs, &ns, &cnt);
		bpf += ns;
	}
	if (!D->last_t) {
		D->last_self_ns = self_cpu_ns();
		D->last_bpf_ns = bpf;
		D->last_up_ns = s->uprobe_run_ns;
		D->last_sample_ns = samp;
		D->last_t = now;
		return;
	}
	dbpf = (double)(bpf - D->last_bpf_ns);
	dup = (double)(s->uprobe_run_ns - D->last_up_ns);
	dsamp = (double)(samp - D->last_sample_ns);
	wall = (double)(now - D->last_t);
	if (wall < 0.5e9 && D->budget.intervals)
		return;	/* measure over at least half a second */
	D->last_bpf_ns = bpf;
	D->last_up_ns = s->uprobe_run_ns;
	D->last_sample_ns = samp;
	D->last_t = now;
	user_cost(D, wall);
	if (!s->spine.run_stats)
		return;	/* no measurement: said once at start */
	double hz = D->budget.hz, next = budget_step(&D->budget, dbpf, dsamp, wall);

	s->bpf_cpu_ratio = D->budget.cost;
	check_cpu_cost(D);
	if (D->sampler && next != hz && D->sampler->set_rate(D->sampler->ctx, next))
		warn_add("budget: could not set the sampling rate to %.1f Hz", next);
	if (D->budget.floor_over && !was_over)
		warn_add("budget: tmabpf's BPF time is %.2f%% of a CPU, over --max-overhead %.2f%%%s", 100 * D->budget.cost,
			 100 * D->budget.limit,
			 D->sampler ? " even at the lowest sampling rate (thread accounting alone)" :
			 D->acct.tasks ? " (task accounting: a longer --interval costs less)" :
			 " (context-switch accounting: fewer -e events cost less)");
	shed_events_rate(D);
	shed_uprobes(D, dup, dbpf);
}
