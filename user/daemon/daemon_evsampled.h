/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The daemon's sampled accounting (--accounting=sampled; auto on PMU hosts whose events need
 * hardware counters): thread times and switches from the task iterator (tasks mode: nothing
 * at context switches), and every event estimated by event sampling (collect/evsamples_loader.h:
 * each event its own period, each sample weighted by it) into rows per thread, drained every
 * interval (lookup-and-delete, so rows hold one interval) and handed to the aggregation as the
 * threads' counts (daemon_agg_thread_counts), with the samples behind each estimate.
 */
#ifndef TMABPF_DAEMON_EVSAMPLED_H
#define TMABPF_DAEMON_EVSAMPLED_H
#include <stdbool.h>
#include <stddef.h>
#include "collect/evsamples_loader.h"
#include "collect/samples_loader.h"
#include "daemon/daemon_agg.h"
#include "daemon/daemon_sampling.h"
#include "lib/u64map.h"

#define DEVS_MAX_ROWS 16384	/* threads sampled per interval */
#define DEVS_MIN_HZ 10		/* the budget lowers the events' rate no further */

struct devs {
	struct samples_prog rows;	/* the row maps (no sampling event of its own) */
	struct evsamples_prog ev;
	bool rows_loaded, ev_loaded;
	const struct event_list *evs;
	struct sample_key *keys;	/* drain buffers */
	struct sample_stats *vals;
	unsigned long long samples[TMABPF_MAX_EVENTS];	/* samples of each event so far */
	bool shared_said;
	struct dsamp *prof;		/* profiles being taken (daemon_evsampled_profile_begin), else NULL */
	int nprof;			/* ... how many */
	struct u64map stacks_seen;	/* stack ids rows used since the store's last collection */
};

/* Load the row maps and the event-sampling program (system-wide, no stacks). */
int daemon_evsampled_load(struct devs *s, const struct event_list *evs, char *err, size_t errlen);
/* Every event sampling at hz samples per second per CPU, all events together; says on stderr
 * what samples (and in warnings what cannot). */
int daemon_evsampled_attach(struct devs *s, double hz, char *err, size_t errlen);
/* Periods from each event's rate (call often). */
void daemon_evsampled_tick(struct devs *s, unsigned long long now_ns);
/* The interval's estimates of every thread into a (after daemon_agg_begin/daemon_agg_thread_seen, before
 * daemon_agg_end); events sharing counters said once. */
void daemon_evsampled_drain(struct devs *s, struct agg *a);
/* A /debug/pprof/profile (daemon_sampling_profile_begin with the events) is being taken from now: the
 * events' samples take stacks (the store emptied first when no other profile is being taken, and
 * collected at each drain as the sampler's is: profiles that overlap for good never empty it), and
 * each drain adds its rows with stacks to prof's profiles too. */
void daemon_evsampled_profile_begin(struct devs *s, struct dsamp *prof);
/* ... the profile of slot until now: the rows with stacks not drained yet go into it as well (and
 * to the aggregation and the other profiles at the next drain); the last one: no more stacks.
 * Before daemon_sampling_profile_end. */
void daemon_evsampled_profile_end(struct devs *s, int slot);
void daemon_evsampled_run_stats(const struct devs *s, unsigned long long *ns, unsigned long long *cnt);
void daemon_evsampled_detach(struct devs *s);
void daemon_evsampled_free(struct devs *s);

#endif
