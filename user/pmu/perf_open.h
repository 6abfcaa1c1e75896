/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Open one counting perf event per (event, CPU), system-wide, respecting groups. */
#ifndef TMABPF_PERF_OPEN_H
#define TMABPF_PERF_OPEN_H
#include <sys/types.h>
#include "pmu/events.h"

struct perf_counters {
	int nr_events;
	int nr_cpus;
	int *fds;	/* [event * nr_cpus + cpu]; -1 where not open (offline CPU) */
};

/*
 * Open every event of evs on every CPU.  Events the host cannot count are
 * removed from evs with one warning each (never silently); a group is kept
 * or dropped whole.  Returns 0, or -errno with err set when nothing usable
 * remains or a privilege is missing; -E2BIG when a group the user gave
 * ({a,b}) does not fit in the PMU's counters (nothing is left open).
 */
int perf_counters_open(struct perf_counters *pc, struct event_list *evs, int nr_cpus,
		       char *err, size_t errlen);
void perf_counters_close(struct perf_counters *pc);
/* Which of evs this host counts: each opened as perf_counters_open does (every CPU, in its group)
 * and closed at once, nothing read.  errs[e]: 0, or the errno that refused event e (E2BIG: its group
 * does not fit; a group fails whole).  Returns how many would open, or -ENOMEM. */
int perf_counters_probe(const struct event_list *evs, int nr_cpus, int *errs);
/* "event 'NAME' (type T config C) cannot be opened: ERRNO: HINT" into buf. */
void perf_open_why(const struct event_desc *d, int err, char *buf, size_t len);
/* perf_event_open(2) itself: an fd, or -1 with errno. */
int perf_open_fd(struct perf_event_attr *a, pid_t pid, int cpu, int group_fd, unsigned long flags);
/* A one-line hint for a perf_event_open errno. */
const char *perf_open_hint(int err, const struct perf_event_attr *a);

#endif
