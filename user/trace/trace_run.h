/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * --trace FILE for one run: the file (trace_writer), function spans from the
 * uprobes' ring buffer (trace_events), thread-state slices from the state
 * ring buffer (trace_states) and counter tracks from the thread table
 * (trace_tracks), driven by run.c's poll loop.
 */
#ifndef TMABPF_TRACE_RUN_H
#define TMABPF_TRACE_RUN_H
#include <stdbool.h>
#include "model/results.h"
#include "model/thread_table.h"
#include "pmu/events.h"
#include "sym/uprobe_targets.h"
#include "trace/trace_events.h"
#include "trace/trace_states.h"
#include "trace/trace_tracks.h"
#include "trace/trace_writer.h"

#define TRACE_DEFAULT_PERIOD_MS 250		/* counter samples without -I */
#define TRACE_RING_BYTES (16u << 20)		/* span records: 512 Ki of them */

struct ring_buffer;

struct trace_run {
	struct trace_writer w;
	struct trace_spans spans;
	struct trace_states states;
	struct trace_tracks tracks;
	bool spans_on;			/* --uprobe given: spans come from the ring */
	bool states_on;			/* thread-state slices come from their ring */
	bool started;
	unsigned long long period_ns;	/* counter samples when there is no -I */
	unsigned long long next_ns;
};

/* Create the file with mode (see outfile.h; a bad path is the caller's exit 2).  0 or -errno with one line in err. */
int trace_run_open(struct trace_run **out, const char *path, mode_t mode, char *err, size_t errlen);
/* Size of the span ring buffer (TMABPF_TEST_TRACE_RING=BYTES shrinks it for tests). */
unsigned int trace_run_ring_bytes(void);
/* The bytes waiting in the thread-state ring (of ring_bytes) that wake the reader: a quarter; with
 * TMABPF_TEST_TRACE_RING, never (the ring drains at each poll timeout, so a switch storm overflows it). */
unsigned int trace_run_state_wake_bytes(unsigned int ring_bytes);
/* Spans: drain the uprobes' trace ring (map_fd) through the run's ring buffer rb. */
int trace_run_attach_spans(struct trace_run *t, const struct uprobe_set *uset, struct ring_buffer *rb, int map_fd,
			   char *err, size_t errlen);
/* Thread states: drain the state ring (map_fd) through the run's ring buffer rb. */
int trace_run_attach_states(struct trace_run *t, struct ring_buffer *rb, int map_fd, char *err, size_t errlen);
/* Counter tracks and thread-state slices from start_ns (the run's window) on: every interval_ms (-I), else every
 * TRACE_DEFAULT_PERIOD_MS.  stop_ns: where the run keeps its accounting stop (0 until then; the slices' end). */
void trace_run_start(struct trace_run *t, const struct event_list *evs, const struct tma_plan *tma_plan,
		     unsigned long long start_ns, const unsigned long long *stop_ns, int interval_ms);
/* Read the span records waiting (every poll of the run loop). */
void trace_run_poll(struct trace_run *t);
/* Without -I: is a counter sample due at now_ns? */
bool trace_run_due(const struct trace_run *t, unsigned long long now_ns);
/* Counter sample at now_ns, after the run refreshed its thread table. */
void trace_run_sample(struct trace_run *t, const struct thread_table *tt, unsigned long long now_ns);
/*
 * End of run, after the uprobes are detached and the table refreshed: read
 * the last records, close the frames still open at end_ns and the thread
 * states at window_end_ns (the report's end; 0: end_ns), take the last
 * sample, say what was lost (warn_add), write the end marker and close the
 * file.  0, or -errno with one line in err when the file could not be written.
 */
int trace_run_finish(struct trace_run *t, const struct thread_table *tt, const struct self_stats *self,
		     const char *target, const char *why, unsigned long long end_ns, unsigned long long window_end_ns,
		     char *err, size_t errlen);
/* Close (still valid JSON, e.g. after a setup error) and free. */
void trace_run_free(struct trace_run *t);

#endif
