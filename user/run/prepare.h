/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What a profiling run and the daemon decide before anything is loaded:
 * options -> the recipe CPU, the PMU, the events and the TMA plan (the one
 * place the event-choice rule is written); the privilege and the host's facts;
 * the stop signals.  Failures are typed (enum run_status), never told apart by
 * their message. */
#ifndef TMABPF_PREPARE_H
#define TMABPF_PREPARE_H
#include <signal.h>
#include <stddef.h>
#include "collect/collector.h"	/* enum run_status */
#include "pmu/events.h"
#include "pmu/host.h"
#include "run/options.h"
#include "tma/tma.h"

/* The events counted when neither -e nor a TMA recipe chooses them. */
#define DEFAULT_SW_EVENTS "task-clock,page-faults"


struct run_prep {
	const struct tma_cpu *cpu;	/* TMA recipe: --cpu NAME or detected; NULL when none */
	char cpu_desc[256];
	struct host_info host;		/* .pmu and .pmu_why; the rest after run_host() */
	struct event_list evs;
	int tma_level;			/* 0: TMA off */
	struct tma_plan plan;		/* when tma_level > 0 */
};

/* The recipe CPU, the PMU, and the events: -e, else the TMA recipe's events
 * when TMA runs (a recipe CPU and a PMU, or --dry-run), else DEFAULT_SW_EVENTS;
 * the TMA plan for --tma (default level 1 when the recipe chose the events).
 * RUN_OK, or RUN_BAD_INPUT after one line on stderr. */
enum run_status run_prepare(const struct options *o, struct run_prep *p);
/* May we load BPF and open system-wide perf events?  RUN_OK, or RUN_BAD_INPUT after one line. */
enum run_status run_check_privilege(void);
/* Right before loading: the host's facts, and one warning each for what is missing (no PMU:
 * software events only; no recipe: no TMA). */
void run_host(struct run_prep *p);

/* SIGINT/SIGTERM/SIGHUP seen (the signal), and whether the terminal sent it (to the whole process group). */
extern volatile sig_atomic_t run_stop_signal, run_stop_from_tty;
/* Catch SIGINT, SIGTERM and SIGHUP (a closed ssh session ends the run as SIGTERM does) into
 * run_stop_signal; SIGPIPE and SIGXFSZ become write errors. */
void run_install_signals(void);
/* "SIGINT", "SIGTERM" or "SIGHUP": the stop signal's name (the report's stop_reason). */
const char *run_stop_signal_name(void);

#endif
