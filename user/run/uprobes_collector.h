/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* --uprobe's collector; its set and program are run_links.uset and run_links.uprobes. */
#ifndef TMABPF_UPROBES_COLLECTOR_H
#define TMABPF_UPROBES_COLLECTOR_H
#include "collect/collector.h"
#include "run/prepare.h"

extern const struct collector uprobes_collector;

#endif
