/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* --sample's collector; its folded stacks are run_links.folded, its per-call ring
 * run_links.percall_samples_fd. */
#ifndef TMABPF_SAMPLING_COLLECTOR_H
#define TMABPF_SAMPLING_COLLECTOR_H
#include "collect/collector.h"
#include "run/prepare.h"

extern const struct collector sampling_collector;

#endif
