// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The daemon's accounting mode, tasks or switch, and why.  See daemon_accounting.h. */
#include <stdio.h>
#include <string.h>
#include "collect/task_acct.h"
#include "daemon/daemon_accounting.h"
#include "lib/warn.h"

#define SWITCH_COST "BPF at every context switch, ~230 ns each"

/* What of the run's choice needs sched_switch counter deltas: the TMA recipe's hardware events,
 * or the first event that is not a per-thread kernel count; "" when none. */
static void underivable(const struct options *o, const struct run_prep *p, char *name, size_t len)
{
	int e = task_acct_underivable(&p->evs);

	name[0] = 0;
	if (p->tma_level && !o->events)
		snprintf(name, len, "the TMA recipe (hardware events)");
	else if (e >= 0)
		snprintf(name, len, "event '%s'", p->evs.ev[e].name);
}

int daemon_accounting_choose(const struct daemon_opts *d, const struct run_prep *p, struct accounting_choice *c)
{
	const struct options *o = &d->run;
	char what[192];
	const char *need = NULL;

	memset(c, 0, sizeof(*c));
	if (d->accounting == DAEMON_ACCT_SWITCH) {
		snprintf(c->line, sizeof(c->line), "accounting: per-switch (--accounting=switch; " SWITCH_COST ")");
		return 0;
	}
	underivable(o, p, what, sizeof(what));
	if (o->nr_uprobe_specs)
		need = "--uprobe needs exact per-switch deltas";
	else if (o->itt)
		need = "--itt needs exact per-switch deltas";
	else if (o->tma_level)
		need = "--tma needs hardware counter deltas at each switch";
	else if (what[0])
		need = what;
	if (d->accounting == DAEMON_ACCT_SAMPLED || (d->accounting == DAEMON_ACCT_AUTO && need && p->host.pmu &&
						       !o->nr_uprobe_specs && !o->itt)) {
		if (o->nr_uprobe_specs || o->itt) {
			err_print("--accounting=sampled: %s needs exact per-switch deltas (use --accounting=switch "
				  "or auto)", o->itt && !o->nr_uprobe_specs ? "--itt" : "--uprobe");
			return EXIT_USAGE;
		}
		c->tasks = c->sampled = true;
		snprintf(c->line, sizeof(c->line), "accounting: sampled (%s; every event sampled with its own period at "
			 "%d samples/s per CPU in all, task iterator every %d ms, nothing per context switch%s)",
			 d->accounting == DAEMON_ACCT_SAMPLED ? "--accounting=sampled" : need, d->events_hz,
			 d->interval_ms, d->accounting == DAEMON_ACCT_SAMPLED ? "" :
			 "; --accounting=switch for exact per-switch deltas");
		return 0;
	}
	if (d->accounting == DAEMON_ACCT_TASKS) {
		if (need) {
			err_print("--accounting=tasks: %s%s; tasks mode derives only %s (use --accounting=switch or auto)",
				  need, need == what ? " needs sched_switch counter deltas" : "", task_acct_derivable());
			return EXIT_USAGE;
		}
		c->tasks = true;
		snprintf(c->line, sizeof(c->line), "accounting: tasks (--accounting=tasks; task iterator every %d ms and "
			 "thread exits, nothing per context switch)", d->interval_ms);
		return 0;
	}
	if (need) {
		snprintf(c->line, sizeof(c->line), "accounting: per-switch (%s%s; " SWITCH_COST ")", need,
			 need == what ? " needs sched_switch counter deltas" : "");
		return 0;
	}
	c->tasks = true;
	snprintf(c->line, sizeof(c->line), "accounting: tasks (every event is a per-thread kernel count: task iterator "
		 "every %d ms and thread exits, nothing per context switch; --accounting=switch for per-switch)",
		 d->interval_ms);
	return 0;
}
