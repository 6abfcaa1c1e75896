/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Host facts the TMA engine needs (#SMT_on, the NMI watchdog), read from
 * /sys and /proc; the engine itself reads nothing. */
#ifndef TMABPF_TMA_ENV_HOST_H
#define TMABPF_TMA_ENV_HOST_H

struct tma_env;

/* This host, counting per thread: smt_on from /sys/devices/system/cpu/smt/active,
 * nmi_watchdog from /proc/sys/kernel/nmi_watchdog (0 when unreadable),
 * core_wide 0, has_pmem 0, slots 0 (the recipe's width), prefer_perf 0. */
void tma_env_host(struct tma_env *e);

#endif
