/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* --dry-run: print every perf_event_attr that would be opened; opens nothing. */
#ifndef TMABPF_DRYRUN_H
#define TMABPF_DRYRUN_H
#include <stdio.h>
#include "pmu/cpu_detect.h"
#include "pmu/events.h"

/* One line per event:
 *   [i] NAME pmu=P type=T(name) config=0x.. config1=0x.. config2=0x.. group=G leader=yes|no
 *       exclude_user=0 exclude_kernel=0 exclude_hv=0 exclude_guest=1 [event=0x..,umask=0x..,cmask=N,inv=N,edge=N] need=METRICS
 * after the plan's note (struct tma_plan.note) on a "plan:" line.
 * c may be NULL (no recipe); level 0 = no TMA. Returns 0. */
int dryrun_print(const struct tma_cpu *c, int level, const char *plan_note, const struct event_list *evs, FILE *f);

#endif
