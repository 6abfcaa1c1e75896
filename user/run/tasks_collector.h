/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Task accounting's collector: thread sums from the task iterator and thread exits. */
#ifndef TMABPF_TASKS_COLLECTOR_H
#define TMABPF_TASKS_COLLECTOR_H
#include "collect/collector.h"
#include "run/prepare.h"

extern const struct collector tasks_collector;
/* --sample-events in the CLI: what keeps the per-switch program (a feature that needs per-switch
 * deltas: "--uprobe", ...), or NULL when task accounting can replace it. */
const char *run_switch_needed(const struct options *o);

#endif
