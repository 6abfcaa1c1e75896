/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* --mem-samples' collector. */
#ifndef TMABPF_MEMSAMPLES_COLLECTOR_H
#define TMABPF_MEMSAMPLES_COLLECTOR_H
#include "collect/collector.h"
#include "run/prepare.h"

extern const struct collector mem_collector;

#endif
