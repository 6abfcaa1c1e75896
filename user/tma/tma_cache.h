/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The TMA engine's cache of compiled recipe formulas (user/tma/tma.c). */
#ifndef TMABPF_TMA_CACHE_H
#define TMABPF_TMA_CACHE_H

/* Drop every compiled formulation and cached plan: the next tma_* call
 * compiles again (benchmarks and tests: cold vs warm).  Not while another
 * thread is inside tma_compute. */
void tma_cache_reset(void);

#endif
