/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Clocks: CLOCK_MONOTONIC in ns (what bpf_ktime_get_ns() reads, so user and
 * BPF timestamps compare), wall-clock seconds, and tmabpf's own CPU time. */
#ifndef TMABPF_CLOCK_H
#define TMABPF_CLOCK_H
#include <sys/resource.h>
#include <time.h>

static inline unsigned long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* CLOCK_REALTIME as unix seconds. */
static inline double unix_time_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* This process' user + system CPU time so far, ns (getrusage); 0 when unknown. */
static inline unsigned long long self_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

#endif
