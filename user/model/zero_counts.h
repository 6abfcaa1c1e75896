/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Counters that read 0 over a run where they cannot have: events an emulated
 * or virtual PMU opens but does not model.  TMA built on them would show a
 * clean, false 0 % (or 100 %) breakdown. */
#ifndef TMABPF_ZERO_COUNTS_H
#define TMABPF_ZERO_COUNTS_H
#include <stddef.h>
#include "pmu/events.h"

/*
 * Of the events a TMA recipe added (need[] set), those that read 0 in total
 * while they were counting and another of them counted: their names, joined,
 * in "NAME read 0 over S s: the TMA nodes that need it are not meaningful on
 * this host" (why).  Returns how many; 0 leaves why empty.
 */
int zero_counts_tma(const struct event_list *evs, const struct counter_val *total, double seconds,
		    char *why, size_t len);

#endif
