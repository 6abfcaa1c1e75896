/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* --roofline's collector (the run's table entry); its state is its own. */
#ifndef TMABPF_ROOFLINE_COLLECTOR_H
#define TMABPF_ROOFLINE_COLLECTOR_H
#include "collect/collector.h"
#include "run/prepare.h"

extern const struct collector roofline_collector;

#endif
