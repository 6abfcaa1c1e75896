// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Options -> CPU, PMU, events, TMA plan; the host; the stop signals.  See prepare.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "lib/warn.h"
#include "pmu/cpu_detect.h"
#include "pmu/perf_open.h"
#include "run/prepare.h"
#include "pmu/tma_env_host.h"
#include "pmu/key_encode.h"

volatile sig_atomic_t run_stop_signal, run_stop_from_tty;

static void on_signal(int sig, siginfo_t *info, void *uctx)
{
	run_stop_signal = sig;
	run_stop_from_tty = info && info->si_code == SI_KERNEL;
}

void run_install_signals(void)
{
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);	/* a file size limit is a write error (EFBIG), said like any other */
}

const char *run_stop_signal_name(void)
{
	return run_stop_signal == SIGINT ? "SIGINT" : run_stop_signal == SIGHUP ? "SIGHUP" : "SIGTERM";
}

/* --cpu NAME, else the recipe for this host's CPU (NULL when there is none). */
static enum run_status choose_cpu(const struct options *o, struct run_prep *p)
{
	char why[256];

	if (o->cpu_name) {
		p->cpu = tma_cpu_by_name(o->cpu_name);
		if (!p->cpu) {
			err_print("--cpu: unknown CPU '%s' (known: %s)", o->cpu_name, tma_cpu_names());
			return RUN_BAD_INPUT;
		}
		snprintf(p->cpu_desc, sizeof(p->cpu_desc), "%s (--cpu)", tma_cpu_name(p->cpu));
	} else {
		p->cpu = tma_cpu_detect(p->cpu_desc, sizeof(p->cpu_desc), why, sizeof(why));
	}
	return RUN_OK;
}

static enum run_status choose_events(const struct options *o, struct run_prep *p)
{
	/* --dry-run plans what a real run does here, or a recipe for the machine --cpu names */
	bool tma_runs = p->cpu && (p->host.pmu || (o->dry_run && o->cpu_name));
	struct tma_env env;
	char err[256];
	int r;

	if (o->events || !tma_runs) {
		r = events_parse_list(o->events ? o->events : DEFAULT_SW_EVENTS, p->cpu, &p->evs, err, sizeof(err));
		if (r) {
			err_print("-e: %s", err);
			return RUN_BAD_INPUT;
		}
	}
	p->tma_level = o->tma_level ? o->tma_level : tma_runs && !o->events ? 1 : 0;
	if (!tma_runs)
		p->tma_level = 0;
	if (!p->tma_level)
		return RUN_OK;
	tma_env_host(&env);
	r = tma_plan(&p->plan, p->cpu, p->tma_level, TMABPF_MAX_EVENTS - p->evs.n, &env, tma_encode_key, err, sizeof(err));
	if (!r)
		r = tma_plan_append(&p->plan, &p->evs, err, sizeof(err));
	if (r) {
		err_print("TMA level %d on %s: %s", p->tma_level, tma_cpu_name(p->cpu), err);
		return RUN_BAD_INPUT;
	}
	if (p->plan.note[0] && !o->dry_run)
		warn_add("TMA: %s", p->plan.note);
	return RUN_OK;
}

/* --roofline with a PMU: the events of perf's FLOPs metric, for the measured FLOPs beside the
 * analytic ones (model/roofline.h roofline_measured); where perf has none, or they do not fit,
 * one line says so and the run goes on with the analytic FLOPs. */
static void choose_flops_events(const struct options *o, struct run_prep *p)
{
	char err[256];
	int r;

	if (!o->roofline || !p->cpu || !(p->host.pmu || (o->dry_run && o->cpu_name)))
		return;
	r = tma_flops_append(p->cpu, &p->evs, err, sizeof(err));
	if (r == 0)
		warn_add("--roofline: no FLOPs metric of perf 6.12 for %s: FLOPs are the analytic ones only",
			 tma_cpu_name(p->cpu));
	else if (r < 0)
		warn_add("--roofline: the FLOPs events of %s cannot be added (%s): FLOPs are the analytic ones only "
			 "(fix: fewer -e events, or a lower --tma level)", tma_cpu_name(p->cpu), err);
}

/* -e on this host: a list none of whose events opens here is an error, not a run that counts
 * nothing; the events that do not open are dropped with one line each when the counters open.
 * Without the privilege to try, run_check_privilege says so next. */
static enum run_status user_events_here(const struct options *o, struct run_prep *p)
{
	int errs[TMABPF_MAX_EVENTS], ncpus = libbpf_num_possible_cpus(), n;
	char why[512];

	if (!p->evs.n || ncpus <= 0 || (n = perf_counters_probe(&p->evs, ncpus, errs)) < 0 || n > 0)
		return RUN_OK;
	for (int e = 0; e < p->evs.n; e++)	/* no privilege to try, or a group that cannot fit: the
						 * privilege check and the counters' open say which, better */
		if (errs[e] == EACCES || errs[e] == EPERM || errs[e] == E2BIG)
			return RUN_OK;
	perf_open_why(&p->evs.ev[0], errs[0], why, sizeof(why));
	err_print("-e %s: none of %s can be counted on this host: %s (software events count everywhere, e.g. "
		  "-e task-clock,page-faults)", o->events, p->evs.n > 1 ? "its events" : "it", why);
	return RUN_BAD_INPUT;
}

enum run_status run_prepare(const struct options *o, struct run_prep *p)
{
	enum run_status r;

	memset(p, 0, sizeof(*p));
	if ((r = choose_cpu(o, p)))
		return r;
	p->host.pmu = events_host_has_pmu(p->host.pmu_why, sizeof(p->host.pmu_why));
	if ((r = choose_events(o, p)))
		return r;
	choose_flops_events(o, p);
	return o->events && !o->dry_run ? user_events_here(o, p) : RUN_OK;
}

enum run_status run_check_privilege(void)
{
	char err[512];

	if (host_check_privilege(err, sizeof(err))) {
		err_print("%s", err);
		return RUN_BAD_INPUT;
	}
	return RUN_OK;
}

void run_host(struct run_prep *p)
{
	host_info_read(&p->host);	/* after run_prepare: it adds the kernel's reason for a missing PMU */
	if (!p->host.pmu)
		warn_add("hardware counters unavailable: %s; TMA skipped, counting software events only "
			 "(fix: run on bare metal or a VM with a virtual PMU)", p->host.pmu_why);
	else if (!p->cpu)
		warn_add("no TMA recipe for this CPU (%s); counting the selected events only (see 'tmabpf list')",
			 p->cpu_desc);
}
