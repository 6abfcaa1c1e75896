// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "cpu_detect.h"
#include "daemon_accounting.h"
#include "events.h"
#include "host.h"
#include "tasks_loader.h"
#include "uprobe_targets.h"
#include "warn.h"

#define DEFAULT_SW_EVENTS "task-clock,page-faults"	/* run.c's default where no TMA recipe runs */
#define SWITCH_COST "BPF at every context switch, ~230 ns each"

/* The events the run would count: -e, else the TMA recipe's (PMU host with a
 * recipe), else the software default.  NULL event name: all parsed and
 * derivable.  Returns -1 when -e does not parse (run.c then says why). */
static int first_underivable(const struct options *o, char *name, size_t len)
{
	struct event_list evs = { 0 };
	char why[256], err[256];
	const struct tma_cpu *cpu = o->cpu_name ? tma_cpu_by_name(o->cpu_name) : NULL;

	name[0] = 0;
	if (!o->events) {
		if (!cpu && !o->cpu_name)
			cpu = tma_cpu_detect(why, sizeof(why), err, sizeof(err));
		if (cpu && events_host_has_pmu(why, sizeof(why))) {
			snprintf(name, len, "the TMA recipe (hardware events)");
			return 0;
		}
	}
	if (cpu)
		events_set_target_cpu(cpu);
	if (events_parse_list(o->events ? o->events : DEFAULT_SW_EVENTS, &evs, err, sizeof(err)))
		return -1;
	for (int e = 0; e < evs.n; e++)
		if (task_acct_event_field(&evs.ev[e]) == TF_NONE) {
			snprintf(name, len, "event '%s'", evs.ev[e].name);
			return 0;
		}
	return 0;
}

int accounting_choose(const struct daemon_opts *d, struct accounting_choice *c)
{
	const struct options *o = &d->run;
	char what[192];
	const char *need = NULL;
	int parsed;

	memset(c, 0, sizeof(*c));
	if (d->accounting == DAEMON_ACCT_SWITCH) {
		snprintf(c->line, sizeof(c->line), "accounting: per-switch (--accounting=switch; " SWITCH_COST ")");
		return 0;
	}
	parsed = first_underivable(o, what, sizeof(what));
	if (o->nr_uprobe_specs)
		need = "--uprobe needs exact per-switch deltas";
	else if (o->tma_level)
		need = "--tma needs hardware counter deltas at each switch";
	else if (parsed < 0)
		need = "-e";	/* the switch path reports the bad event */
	else if (what[0])
		need = what;
	if (d->accounting == DAEMON_ACCT_TASKS) {
		if (parsed < 0 && !o->nr_uprobe_specs && !o->tma_level) {
			c->tasks = true;	/* daemon_tasks_run reports the bad event (exit 2) */
			return 0;
		}
		if (need) {
			err_print("--accounting=tasks: %s%s; tasks mode derives only %s (use --accounting=switch or auto)",
				need == what ? what : need, need == what ? " needs sched_switch counter deltas" : "",
				task_acct_derivable());
			return EXIT_USAGE;
		}
		c->tasks = true;
		snprintf(c->line, sizeof(c->line), "accounting: tasks (--accounting=tasks; task iterator every %d ms and "
			 "thread exits, nothing per context switch)", d->interval_ms);
		return 0;
	}
	if (need) {
		snprintf(c->line, sizeof(c->line), "accounting: per-switch (%s%s; " SWITCH_COST ")",
			 need == what ? what : need, need == what ? " needs sched_switch counter deltas" : "");
		return 0;
	}
	c->tasks = true;
	snprintf(c->line, sizeof(c->line), "accounting: tasks (every event is a per-thread kernel count: task iterator "
		 "every %d ms and thread exits, nothing per context switch; --accounting=switch for per-switch)",
		 d->interval_ms);
	return 0;
}

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static bool verbose;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return verbose ? vfprintf(stderr, fmt, ap) : 0;	/* our own one-line errors say what failed */
}

int daemon_tasks_run(struct options *o, const struct run_mode *m, struct tasks_prog **slot)
{
	static struct event_list evs;
	static struct host_info host;
	static struct uprobe_set no_uprobes;
	static struct tasks_prog prog;
	struct sigaction sa = { .sa_handler = on_signal };
	char err[512];
	int r;

	verbose = o->verbose;
	libbpf_set_print(libbpf_print);
	memset(&evs, 0, sizeof(evs));
	if (events_parse_list(o->events ? o->events : DEFAULT_SW_EVENTS, &evs, err, sizeof(err))) {
		err_print("-e: %s", err);
		return EXIT_USAGE;
	}
	if (host_check_privilege(err, sizeof(err))) {
		err_print("%s", err);
		return EXIT_USAGE;
	}
	host.pmu = events_host_has_pmu(host.pmu_why, sizeof(host.pmu_why));
	host_info_read(&host);	/* after: it adds the kernel's reason for a missing PMU (as run.c) */
	if (!host.pmu)
		warn_add("hardware counters unavailable: %s; TMA skipped, counting software events only "
			 "(fix: run on bare metal or a VM with a virtual PMU)", host.pmu_why);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	r = tasks_load(&prog, &evs, o->max_threads, m->on_exit, m->ctx, err, sizeof(err));
	if (!r && !prog.run_stats)
		warn_add("kernel BPF run-time stats unavailable (%s); tmabpf's own cost is not reported "
			 "(needs CAP_SYS_ADMIN, or sysctl kernel.bpf_stats_enabled=1)", strerror(errno));
	if (!r && !prog.run_delay)
		warn_add("runqueue wait unavailable: kernel without CONFIG_SCHED_INFO (no /proc/PID/schedstat); "
			 "runqueue time reads 0 and counts as blocked");
	if (!r)
		r = tasks_attach(&prog, err, sizeof(err));
	if (r) {
		err_print("%s", err);
		tasks_destroy(&prog);
		return r == -EINVAL && strstr(err, "derivable") ? EXIT_USAGE : 1;
	}
	*slot = &prog;
	struct run_env env = { .o = o, .host = &host, .evs = &evs, .cpu = NULL, .tma_level = 0, .prog = NULL,
			       .uprobes = NULL, .uset = &no_uprobes, .stop = &stop_signal };

	r = m->loop(m->ctx, &env);
	tasks_detach(&prog);
	*slot = NULL;
	tasks_destroy(&prog);
	return r;
}
