/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Loader for bpf/evsamples.bpf.c (--sample-events, the daemon's sampled
 * accounting): one sampling perf event per (event, CPU), the program attached
 * to each with the event's index as its BPF cookie, writing into the sample
 * program's rows and stacks (samples_loader.c).
 *
 * Each event has its own period, set for its share of the rate from the rate
 * the event runs at, measured on its own sampling events (their counts) and set
 * again at every evsamples_adapt(): within an interval the period is fixed, so
 * that an estimate (samples x period) is unbiased with a binomial error.  The
 * kernel's frequency mode (attr.freq) adapts the period at each overflow from
 * the time since the previous one, which for bursty events (page faults)
 * leaves periods of a burst on the sparse events after it: perf record -F 100
 * -e page-faults estimated 167,589 faults of a thread that took 50,000. */
#ifndef TMABPF_EVSAMPLES_LOADER_H
#define TMABPF_EVSAMPLES_LOADER_H
#include <stdbool.h>
#include <stddef.h>
#include "collect/samples_loader.h"
#include "pmu/events.h"

#define EVSAMPLE_DEFAULT_HZ 100	/* samples per second per CPU, all events together */

struct evsamples_bpf;
struct bpf_link;

struct evsamples_prog {
	struct evsamples_bpf *skel;
	int nr_cpus, nev;
	int *pfds;			/* [event * nr_cpus + cpu]; -1 where not open */
	struct bpf_link **links;	/* a link owns (closes) its pfd */
	double hz;			/* asked: samples per second per CPU, all events together */
	int freq;			/* each event's frequency: samples per second per CPU */
	unsigned long long period[TMABPF_MAX_EVENTS];	/* in force */
	unsigned long long count[TMABPF_MAX_EVENTS];	/* counts at the last evsamples_adapt */
	unsigned long long adapt_ns;	/* its time */
	unsigned long long next_ns;	/* the next one's */
	int ncpus_open;			/* CPUs whose events opened */
	bool open[TMABPF_MAX_EVENTS];	/* the event samples on at least one CPU */
	char why[TMABPF_MAX_EVENTS][160];	/* why an event does not sample ("" when it does) */
	struct evsample_times {		/* each event's, summed over its CPUs (kept at detach) */
		unsigned long long enabled, running;
	} times[TMABPF_MAX_EVENTS];
};

/* Load the program into the rows of a loaded sample program (s).  stacks: take stacks.
 * thread_est_fd: the task programs' thread_est map (tasks_thread_est_fd), into which each sample
 * is also added as its thread's estimate; -1: rows only. */
int evsamples_load(struct evsamples_prog *p, struct samples_prog *s, bool stacks, int thread_est_fd, char *err,
		   size_t errlen);
/* Take stacks from now on, or not (rows per thread only). */
void evsamples_set_stacks(struct evsamples_prog *p, bool on);
/* Open every event of evs as a sampling event on every CPU, at hz / evs->n samples per second
 * each, and attach.  An event that cannot sample is said in p->why[e] (the caller warns) and
 * the others go on; -errno with err set when none can. */
int evsamples_attach(struct evsamples_prog *p, const struct event_list *evs, double hz, char *err, size_t errlen);
/* Each event's period from its rate since the previous call (PERF_EVENT_IOC_PERIOD): at most
 * every EVSAMPLE_ADAPT_MS (the first after EVSAMPLE_FIRST_ADAPT_MS); call often. */
#define EVSAMPLE_ADAPT_MS 1000
#define EVSAMPLE_MAX_STEP_DOWN 4	/* a period falls at most 4x per step (bursty events) */
#define EVSAMPLE_MIN_PERIOD 2		/* see evsamples_adapt() */
#define EVSAMPLE_FIRST_ADAPT_MS 100
void evsamples_adapt(struct evsamples_prog *p, unsigned long long now_ns);
/* A new total rate: the periods follow at the next evsamples_adapt. */
void evsamples_set_rate(struct evsamples_prog *p, double hz);
/* Event e's enabled and running time, summed over its CPUs (read from its events while they
 * are open, else as they were at detach). */
void evsamples_times(const struct evsamples_prog *p, int e, struct evsample_times *t);
/* The events that share counters (running < enabled), as "a, b, c (running 33-50 %)"; "" when none. */
void evsamples_shared(const struct evsamples_prog *p, const struct event_list *evs, char *out, size_t len);
void evsamples_run_stats(const struct evsamples_prog *p, unsigned long long *ns, unsigned long long *cnt);
void evsamples_detach(struct evsamples_prog *p);
void evsamples_destroy(struct evsamples_prog *p);

#endif
