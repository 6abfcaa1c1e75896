/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The daemon's accounting mode (--accounting=auto|tasks|switch):
 *   tasks   the kernel's own per-thread counts (task_struct), read by a task
 *           iterator once per interval and at thread exit: nothing runs at
 *           context switches; software events that are such counts only;
 *   sampled tasks for times and switches, and every event sampled with its own
 *           period (daemon_evsampled.h): estimates with their samples, any
 *           event, TMA; nothing per context switch;
 *   switch  the spine at every sched_switch (~230 ns each): exact hardware
 *           counter deltas, TMA, per-function sums (--uprobe).
 * auto takes tasks when it is exact (every event derivable, no --uprobe, no
 * --tma), else sampled on a host with a PMU (no --uprobe), else switch, and
 * says which and why.
 */
#ifndef TMABPF_DAEMON_ACCOUNTING_H
#define TMABPF_DAEMON_ACCOUNTING_H
#include <stdbool.h>
#include "daemon/daemon_cli.h"
#include "run/prepare.h"

struct accounting_choice {
	bool tasks;		/* thread accounting by the task iterator (tasks and sampled) */
	bool sampled;		/* ... and the events sampled */
	char line[320];		/* "accounting: ... (why)", printed once the daemon serves */
};

/* Decide from the run's choice of events (run_prepare); 0, or EXIT_USAGE after one line
 * (--accounting=tasks that cannot be exact). */
int daemon_accounting_choose(const struct daemon_opts *d, const struct run_prep *p, struct accounting_choice *c);

#endif
