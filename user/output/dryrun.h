/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* --dry-run: print every perf_event_attr that would be opened, and which would open on this host. */
#ifndef TMABPF_DRYRUN_H
#define TMABPF_DRYRUN_H
#include <stdbool.h>
#include <stdio.h>
#include "pmu/cpu_detect.h"
#include "pmu/events.h"

/* One line per event:
 *   [i] NAME pmu=P type=T(name) config=0x.. config1=0x.. config2=0x.. group=G leader=yes|no
 *       exclude_user=0 exclude_kernel=0 exclude_hv=0 exclude_guest=1 [event=0x..,umask=0x..,cmask=N,inv=N,edge=N] need=METRICS
 * after the plan's note (struct tma_plan.note) on a "plan:" line.
 * c may be NULL (no recipe); level 0 = no TMA. Returns 0. */
int dryrun_print(const struct tma_cpu *c, int level, const char *plan_note, const struct event_list *evs, FILE *f);
/* What a real run would open on this host: every event opened as the counters are (on every CPU,
 * in its group) and closed at once; the count that would open and one line per event that would
 * not, with why ("here: ..." lines).  other_cpu: --cpu planned for another machine; no_pmu_why:
 * why this host has no PMU (a "tma: off" line), NULL when it has one. */
void dryrun_print_here(const struct event_list *evs, bool other_cpu, const char *no_pmu_why, FILE *f);

#endif
