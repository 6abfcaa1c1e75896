/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The spine's collector: per-thread accounting at sched_switch; its program is run_links.spine. */
#ifndef TMABPF_SPINE_COLLECTOR_H
#define TMABPF_SPINE_COLLECTOR_H
#include "collect/collector.h"
#include "run/prepare.h"

extern const struct collector spine_collector;

#endif
