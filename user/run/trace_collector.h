/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* --trace's collector: spans, thread-state slices and counter tracks streamed to a Perfetto file. */
#ifndef TMABPF_TRACE_COLLECTOR_H
#define TMABPF_TRACE_COLLECTOR_H
#include "collect/collector.h"
#include "run/prepare.h"

extern const struct collector trace_collector;

#endif
