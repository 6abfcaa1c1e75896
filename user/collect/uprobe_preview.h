/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What --uprobe costs: the --dry-run preview (per library: matched functions,
 * their entry-instruction classes and the cost per call measured on this
 * host) and the run-time guard (one warning per function whose calls x cost
 * pass 5 % of the target's CPU time).
 */
#ifndef TMABPF_UPROBE_PREVIEW_H
#define TMABPF_UPROBE_PREVIEW_H
#include <stdio.h>
#include "collect/probe_calib.h"
#include "sym/uprobe_targets.h"

#define UPROBE_GUARD_SHARE 0.05	/* warn past this share of the target's CPU time */
#define UPROBE_PREVIEW_NAMES 8	/* functions listed per library */

/* The preview of a resolved set; calib NULL: costs not measured (why says so). */
void uprobe_preview_print(const struct uprobe_set *s, const struct probe_calib *calib, const char *why, FILE *f);

/* Cost of one probed call of f, ns: its class's trap cost plus the programs' time for an entry
 * and a return hit (bpf_ns_per_hit: kernel BPF stats, 0 when unknown). */
double uprobe_call_cost_ns(const struct uprobe_func *f, const struct probe_calib *calib, double bpf_ns_per_hit);

/* One warning line for a hot probe: f's rate (calls/s), cost per call (ns) and the target's CPU
 * use over the same time (CPUs busy, e.g. 1.0 = one CPU). */
void uprobe_guard_warn(const struct uprobe_func *f, double rate, double cost_ns, double target_cpus);

#endif
