/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* CPU detection: /proc/cpuinfo vendor/family/model -> TMA recipe. */
#ifndef TMABPF_CPU_DETECT_H
#define TMABPF_CPU_DETECT_H
#include <stdbool.h>
#include <stddef.h>

#include "tma/tma_recipes.h"	/* the recipes, tma_cpu_by_name() */

/* Detect the host CPU. desc gets e.g. "GenuineIntel family 6 model 143 stepping 8
 * (sapphirerapids)"; returns NULL when there is no recipe (why says so).
 * TMABPF_CPUINFO=FILE reads another cpuinfo (tests). */
const struct tma_cpu *tma_cpu_detect(char *desc, size_t desclen, char *why, size_t whylen);
/* Same, from cpuinfo text. hybrid: the host has cpu_core/cpu_atom PMUs. */
const struct tma_cpu *tma_cpu_detect_text(const char *cpuinfo, bool hybrid, char *desc, size_t desclen,
					  char *why, size_t whylen);

#endif
