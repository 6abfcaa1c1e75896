/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* --offcpu-stacks' collector. */
#ifndef TMABPF_OFFCPU_COLLECTOR_H
#define TMABPF_OFFCPU_COLLECTOR_H
#include "collect/collector.h"
#include "run/prepare.h"

extern const struct collector offcpu_collector;

#endif
