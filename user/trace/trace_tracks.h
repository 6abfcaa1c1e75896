/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * --trace counter tracks and names, from the run's thread table at each
 * sample (every -I interval):
 *   per process (pid) and for all tracked threads together (TRACE_SYSTEM_PID):
 *     "sched"  oncpu, offcpu_blocked, offcpu_runqueue: thread-seconds per
 *              second over the interval (1.0 = one thread all the time)
 *     "rate"   each counter per second (multiplex-scaled)
 *     "tma"    TMA level-1 percentages of the interval's deltas (PMU hosts)
 *   process_name / thread_name metadata for every thread seen (again when a
 *   thread renames itself).
 * Each counter event sits at the start of the interval it describes.  Times
 * of live threads are brought forward to the sample time (a thread running
 * or sleeping through the interval has not reached an accounting point yet)
 * and kept monotonic, so a track's integral is the run's total.
 */
#ifndef TMABPF_TRACE_TRACKS_H
#define TMABPF_TRACE_TRACKS_H
#include <stddef.h>
#include "model/report.h"
#include "model/thread_table.h"
#include "pmu/events.h"
#include "trace/trace_writer.h"

/* The all-tracked-threads track: PID_MAX_LIMIT, which no real process has (and
 * not 0, which Perfetto keeps for the idle task). */
#define TRACE_SYSTEM_PID 4194304

struct trace_proc;
struct trace_name;

struct trace_tracks {
	struct trace_writer *w;
	const struct event_list *evs;
	const struct tma_plan *tma_plan;	/* NULL: no "tma" track */
	unsigned long long prev_ns;	/* start of the current interval */
	struct trace_proc *procs;	/* per pid at the last sample, sorted */
	size_t nprocs;
	struct thread_stats sys;	/* all tracked threads at the last sample */
	bool sys_active;
	struct trace_name *names;	/* threads named so far, sorted by tid */
	size_t nnames;
	unsigned long long samples;	/* counter samples written (per track) */
};

void trace_tracks_init(struct trace_tracks *tr, struct trace_writer *w, const struct event_list *evs,
		       const struct tma_plan *tma_plan, unsigned long long start_ns);
/* One sample at now_ns (CLOCK_MONOTONIC) of the interval since the last one. */
void trace_tracks_sample(struct trace_tracks *tr, const struct thread_table *tt, unsigned long long now_ns);
void trace_tracks_free(struct trace_tracks *tr);

#endif
