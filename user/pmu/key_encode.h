/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A recipe's event keys (tma/tma_keys.h) encoded for perf_event_open: the
 * recipe's own entry, else libpfm4 for the recipe's CPU.  The TMA plan takes
 * tma_encode_key as its encoder, so that the engine's compute never calls
 * libpfm4; tma_plan_append turns a plan's events into an event list.
 */
#ifndef TMABPF_KEY_ENCODE_H
#define TMABPF_KEY_ENCODE_H
#include <stddef.h>
#include <linux/perf_event.h>
#include "pmu/events.h"
#include "tma/tma.h"

/* Encode a key for CPU c into attr (counting, exclude_guest as perf stat):
 * the recipe's entry, else (Intel) libpfm4's A:B:c=N:e=1:i=1 with the umask patched
 * (a tma_encode_fn). */
int tma_encode_key(const struct tma_cpu *c, const char *key, struct perf_event_attr *attr,
		   char *err, size_t errlen);
/* Append the events of perf's FLOPs metric for c (tma_flops_events) to out, each alone (the
 * kernel multiplexes them), those out has already kept: --roofline's measured FLOPs with a PMU.
 * The number appended (0: perf has no FLOPs metric for c), or -errno with err. */
int tma_flops_append(const struct tma_cpu *c, struct event_list *out, char *err, size_t errlen);
/* Append the plan's events to out (groups renumbered after out's, leaders marked). */
int tma_plan_append(const struct tma_plan *p, struct event_list *out, char *err, size_t errlen);

#endif
