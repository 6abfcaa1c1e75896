/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * --trace spans: drains the uprobes' trace ring buffer (struct trace_rec, one
 * per frame boundary) and turns each thread's entry/return records into
 * complete events (ph X), written when the frame closes.
 *
 * Every span closes and nests: a frame skipped by longjmp or an exception
 * closes when the return of an outer frame arrives (the BPF side's
 * TRACE_UNMATCHED), a frame open at thread exit closes at the exit
 * (TRACE_EXIT), a frame still open when the run ends closes at the end.
 * Records carry the frame's depth, so a lost record (ring buffer full,
 * counted in STAT_TRACE_DROPS) costs only its own span: a frame whose end
 * record was lost closes when the next record at or above its depth arrives
 * (args.end "record lost"), a return whose entry was lost is counted and
 * dropped.
 */
#ifndef TMABPF_TRACE_EVENTS_H
#define TMABPF_TRACE_EVENTS_H
#include <stdbool.h>
#include <stddef.h>
#include "bpf/uprobes.h"
#include "sym/uprobe_targets.h"
#include "trace/trace_ring.h"
#include "trace/trace_writer.h"

struct trace_thread;
struct ring_buffer;
struct ring;

struct trace_spans {
	struct trace_writer *w;
	const struct uprobe_set *uset;	/* function id -> symbol */
	struct trace_thread *tab;	/* open frames per thread, hashed by tid */
	size_t cap, used;
	struct ring *ring;		/* the trace ring in the run's ring_buffer */
	struct trace_ring_sink sink;	/* its records' way here */
	unsigned long long records;	/* records read */
	unsigned long long spans;	/* spans written, all kinds */
	unsigned long long unmatched;	/* ... closed by a return for an outer frame (longjmp, exception) */
	unsigned long long exited;	/* ... open when their thread exited */
	unsigned long long open_at_end;	/* ... still open when the run ended */
	unsigned long long lost_end;	/* ... whose end record was lost */
	unsigned long long lost_entry;	/* ends whose entry record was lost (no span) */
	unsigned long long bad;		/* malformed records */
	unsigned long long newest_ts;	/* the latest record's time */
	unsigned long long clamped;	/* records earlier than their thread's previous one (another CPU's
					 * clock), given that one's time */
};

void trace_spans_init(struct trace_spans *s, struct trace_writer *w, const struct uprobe_set *uset);
/* Add the trace ring (map fd) to the run's ring buffer manager rb. 0 or -errno. */
int trace_spans_attach(struct trace_spans *s, struct ring_buffer *rb, int map_fd);
/* Consume every record waiting in the ring. */
void trace_spans_drain(struct trace_spans *s);
/* One record (the ring's callback; also used by the unit test). */
void trace_spans_record(struct trace_spans *s, const struct trace_rec *r);
/* Close every frame still open at end_ns (args.end "open at end of run"). */
void trace_spans_close_all(struct trace_spans *s, unsigned long long end_ns);
void trace_spans_free(struct trace_spans *s);

#endif
