/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * sampling: the --sample and --sample-events features.  Loads and attaches the
 * sample program (samples_loader.c) and, for --sample-events, the event
 * sampler writing into the same rows (evsamples_loader.c), snapshots the maps of each process as it is first
 * sampled (symbolize.c), and at the end turns the sample rows into the
 * per-function table (struct sample_result, printed by report_samples.c)
 * and the --folded stacks (folded.c).  During the run, sampling_snapshot()
 * gives the live view the table so far, and sample_funcs_since() its rows
 * new since the previous snapshot.
 */
#ifndef TMABPF_SAMPLING_H
#define TMABPF_SAMPLING_H
#include <stdbool.h>
#include <stddef.h>
#include "collect/evsamples_loader.h"
#include "collect/mmap_events.h"
#include "collect/samples_loader.h"
#include "collect/threads_loader.h"
#include "model/folded.h"
#include "model/profile.h"
#include "model/sample_sums.h"
#include "pmu/events.h"
#include "sym/symbolize.h"

struct named_stack;

/* Stacks named so far, per (pid, stack id); kernel stacks under pid 0. */
struct stack_memo {
	struct named_stack *v;
	size_t cap, n;
};

struct sampling {
	struct samples_prog prog;
	struct evsamples_prog evp;	/* --sample-events: writes into prog's rows */
	bool ev_loaded;
	const struct event_list *evs;	/* what evp samples */
	double events_hz;		/* ... at this rate per CPU, all events together */
	struct symbolizer *sym;
	struct mmap_events mev;		/* the sampled processes' mappings as they happen (sampling_watch_mappings) */
	struct stack_memo memo;
	bool loaded;
	struct sample_result res;	/* sampling_collect() */
	struct sample_result live;	/* sampling_snapshot() */
	struct folded folded;
	bool want_profile;		/* --pprof */
	struct profile profile;		/* sampling_collect(), when want_profile */
	bool profile_ok;
	unsigned long long start_mono_ns;
	double start_unix_s;
};

struct sampling_cfg {
	int hz;			/* --sample; 0: no stack samples of its own (--sample-events alone) */
	int max_rows;		/* --max-sample-stacks */
	bool pmu;		/* host has a hardware PMU: try cycles */
	const struct spin_set *spin;	/* --per-call: spin functions; NULL: none */
	double events_hz;	/* --sample-events: every event of evs sampled, this many samples/s per CPU */
	const struct event_list *evs;
	bool profile;		/* --pprof: sampling_collect() fills s->profile too */
	bool percall;		/* --per-call: each sample's time and row into a ring (sampling_percall_fd) */
	int thread_est_fd;	/* --sample-events with task accounting: each event sample into its thread's
				 * estimate too (tasks_thread_est_fd); -1: rows only */
};

int sampling_load(struct sampling *s, struct threads_prog *tp, const struct sampling_cfg *cfg, char *err,
		  size_t errlen);
int sampling_attach(struct sampling *s, char *err, size_t errlen);
/* Name the user stacks of new sample rows while their processes live (call often: every poll). */
void sampling_poll(struct sampling *s);
/* From now on, learn the executable mappings of pids[0..npids) (0: every process) from the kernel, so
 * that a process that exits before its stacks are named still has them named; where that fails,
 * one line says so. */
void sampling_watch_mappings(struct sampling *s, const int *pids, int npids);
/* Periodic work (every poll): --sample-events' periods follow the events' rates. */
void sampling_tick(struct sampling *s, unsigned long long now_ns);
/* Stop sampling; the rows stay readable. */
void sampling_detach(struct sampling *s);
/* Read, name and aggregate the rows; losses become warnings.  self: the run's stats slots;
 * oncpu_ns: the tracked threads' on-CPU time (what cpu-clock samples should match). */
int sampling_collect(struct sampling *s, const struct event_list *evs, const struct self_stats *self,
		     unsigned long long oncpu_ns);
/* The table so far, for a refresh of the live view: rows read and named now
 * (only stacks not named before are read), per thread, sorted by
 * sample_func_cmp, nprocs 0; sample totals only (no losses, warnings or
 * folded stacks: sampling_collect() does those once, at the end).  Valid
 * until the next call; NULL when sampling is off or the maps cannot be read. */
const struct sample_result *sampling_snapshot(struct sampling *s, const struct event_list *evs);
void sampling_free(struct sampling *s);
/* --per-call: the ring of struct percall_sample (each sample's time and row); -1 when off. */
int sampling_percall_fd(const struct sampling *s);
/* The leaf function of row key k, as the table names it (the kernel stack's leaf, else the user
 * stack's): its label, and its module into *module; NULL when neither stack can be named. */
const char *sampling_leaf(struct sampling *s, const struct sample_key *k, const char **module);

#endif
