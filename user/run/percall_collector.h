/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* --per-call's collector: iterations of a marker; its --spin set is run_links.spin. */
#ifndef TMABPF_PERCALL_COLLECTOR_H
#define TMABPF_PERCALL_COLLECTOR_H
#include "collect/collector.h"
#include "run/prepare.h"

extern const struct collector percall_collector;

#endif
