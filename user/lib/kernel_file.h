/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* One number from a kernel file (/proc/sys, /sys): sysctls, PMU types, SMT state. */
#ifndef TMABPF_KERNEL_FILE_H
#define TMABPF_KERNEL_FILE_H

/* The integer in a /proc or /sys file (its first number), dflt when unreadable. */
int kernel_file_int(const char *path, int dflt);

/* The number after "key:" on a line of a /proc status-style file (/proc/PID/status: "Tgid:",
 * "CapEff:"), in base (10, 16); dflt when unreadable or absent. */
unsigned long long kernel_file_field(const char *path, const char *key, int base, unsigned long long dflt);

/* The kernel's se.sum_exec_runtime of thread tid of process pid, in ns: the first field of
 * /proc/PID/task/TID/schedstat (CLOCK_THREAD_CPUTIME_ID's source; it lags a running thread by at
 * most a tick, and never runs ahead).  0 when unknown (gone, or no CONFIG_SCHED_INFO). */
unsigned long long kernel_thread_runtime_ns(unsigned int pid, unsigned int tid);

#endif
