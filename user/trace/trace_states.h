/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * --trace thread-state slices: drains the thread-state ring buffer (struct
 * state_rec, bpf/thread_states.bpf.c) and writes each tracked thread's time
 * as back-to-back complete events (ph X, cat "thread_state") named
 * "Running", "Runnable" (in a runqueue: preempted, or woken and not running
 * yet) and "Blocked", written when the state ends.
 *
 * They go on a track of their own beside the thread's (same pid, tid
 * TRACE_STATE_TID_BASE + tid, named "COMM TID state"): Chrome trace JSON keeps
 * one stack of nested slices per thread, and a state slice seldom nests in a
 * function span.
 *
 * Each thread's slices tile its time in the window [start, end): from the
 * window's start (or its birth: sched_wakeup_new) to its exit or the end.
 * Before its first record a thread was in the state that record leaves
 * (a switch-in: Runnable; a switch-out or exit: Running; a wakeup: Blocked);
 * a thread with no change in the window has the state the attach-time
 * iterator saw.  A record that repeats the state (a wakeup of a thread still
 * running) continues the slice.  Records before the start are taken as the
 * state then; times never go back per thread (clamped, counted).  A
 * switch-out of a thread not running: its switch-in was never traced (some
 * hosts skip switches away from some tasks); the Running slice then began
 * its runtime since its last switch-out ago (counted in `inferred`).
 */
#ifndef TMABPF_TRACE_STATES_H
#define TMABPF_TRACE_STATES_H
#include "bpf/thread_states.h"
#include "lib/u64map.h"
#include "trace/trace_ring.h"
#include "trace/trace_writer.h"

/* Above every real tid (PID_MAX_LIMIT): the state track of thread tid is BASE + tid. */
#define TRACE_STATE_TID_BASE 4194304u

enum trace_state { TS_RUNNING, TS_RUNNABLE, TS_BLOCKED, TS_NSTATES };

struct ring_buffer;
struct ring;

struct trace_states {
	struct trace_writer *w;
	struct u64map threads;		/* tid -> struct trace_state_thread */
	struct ring *ring;
	struct trace_ring_sink sink;	/* its records' way here */
	unsigned long long start_ns;	/* the window's start; 0: not started (records wait in the ring) */
	unsigned long long end_ns;	/* the window's end, once known (0: not yet) */
	const unsigned long long *stop_ns;	/* the run's accounting stop (0 while running), or NULL: once
						 * set, the window's end, whoever drains the ring after it */
	unsigned long long newest_ns;	/* the latest record's time */
	size_t gone;			/* exited threads still in the map */
	unsigned long long records;	/* records read */
	unsigned long long slices[TS_NSTATES];	/* slices written per state */
	unsigned long long clamped;	/* records earlier than their thread's previous one */
	unsigned long long inferred;	/* switch-ins never traced, inferred from the thread's runtime */
	unsigned long long bad;		/* malformed records */
};

void trace_states_init(struct trace_states *s, struct trace_writer *w);
/* Add the state ring (map fd) to the run's ring buffer manager rb.  0 or -errno. */
int trace_states_attach(struct trace_states *s, struct ring_buffer *rb, int map_fd);
/* The window starts at start_ns: records are read from then on.  stop_ns (may be NULL): where the
 * run keeps its accounting stop, 0 until then; records later than a nonzero *stop_ns count as at it. */
void trace_states_start(struct trace_states *s, unsigned long long start_ns, const unsigned long long *stop_ns);
/* Consume every record waiting in the ring. */
void trace_states_drain(struct trace_states *s);
/* One record (the ring's callback; also used by the unit test). */
void trace_states_record(struct trace_states *s, const struct state_rec *r);
/* Close every thread's open slice at end_ns (records later than end_ns count as at end_ns). */
void trace_states_close_all(struct trace_states *s, unsigned long long end_ns);
void trace_states_free(struct trace_states *s);

#endif
