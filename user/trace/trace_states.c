// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* --trace thread-state slices (see trace_states.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "trace/trace_states.h"

static const char *const state_names[TS_NSTATES] = { "Running", "Runnable", "Blocked" };

struct trace_state_thread {
	__u32 tid, pid;
	enum trace_state state;
	bool gone;			/* exited: later records of its tid are a new thread's only from its birth */
	unsigned long long since;	/* the open slice's start */
	__u32 cpu;			/* Running: the CPU it switched in on */
	unsigned long long exec_out;	/* its runtime at its last state change */
	unsigned long long delay_out;	/* its runqueue wait (schedstat) then */
	char comm[TMABPF_COMM_LEN];	/* the track's name, "" until named */
};

void trace_states_init(struct trace_states *s, struct trace_writer *w)
{
	memset(s, 0, sizeof(*s));
	s->w = w;
}

static void emit(struct trace_states *s, const struct trace_state_thread *t, unsigned long long end_ns)
{
	struct json *j;

	if (end_ns <= t->since)
		return;		/* nothing of it inside the window */
	j = trace_writer_event(s->w, 'X', t->since, t->pid, TRACE_STATE_TID_BASE + t->tid, state_names[t->state],
			       "thread_state");
	json_fixed3(j, "dur", end_ns - t->since);
	if (t->state == TS_RUNNING) {
		json_obj_begin(j, "args");
		json_u64(j, "cpu", t->cpu);
		json_obj_end(j);
	}
	trace_writer_event_end(s->w);
	s->slices[t->state]++;
}

/* The track's name when the thread's comm is new or changed (exec, prctl). */
static void name(struct trace_states *s, struct trace_state_thread *t, const char *comm)
{
	char buf[TMABPF_COMM_LEN + 32];
	char c[TMABPF_COMM_LEN];

	memcpy(c, comm, sizeof(c));
	c[TMABPF_COMM_LEN - 1] = 0;
	if (!strcmp(c, t->comm))
		return;
	memcpy(t->comm, c, sizeof(c));
	snprintf(buf, sizeof(buf), "%s %u state", c, t->tid);
	trace_writer_thread_name(s->w, t->pid, TRACE_STATE_TID_BASE + t->tid, buf);
}

/* The state a record's thread was in before it (seeds and births: none, -1). */
static int state_before(__u32 kind)
{
	switch (kind) {
	case STATE_IN:
		return TS_RUNNABLE;
	case STATE_PREEMPT:
	case STATE_BLOCK:
	case STATE_EXIT:
		return TS_RUNNING;
	case STATE_WAKE:
		return TS_BLOCKED;
	default:
		return -1;
	}
}

/* The state after it (exit: -1). */
static int state_after(__u32 kind)
{
	switch (kind) {
	case STATE_IN:
	case STATE_SEED_RUNNING:
		return TS_RUNNING;
	case STATE_PREEMPT:
	case STATE_WAKE:
	case STATE_NEW:
	case STATE_SEED_RUNNABLE:
		return TS_RUNNABLE;
	case STATE_BLOCK:
	case STATE_SEED_BLOCKED:
		return TS_BLOCKED;
	default:
		return -1;
	}
}

static bool is_seed(__u32 kind)
{
	return kind >= STATE_SEED_RUNNING && kind <= STATE_SEED_BLOCKED;
}

/* A thread's first record: its entry, in the state before the record since the window's start (a birth:
 * since the record).  NULL when the record starts nothing (out of memory). */
static struct trace_state_thread *first_sight(struct trace_states *s, const struct state_rec *r,
					      struct trace_state_thread *t)
{
	int before = state_before(r->kind);

	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t || u64map_put(&s->threads, r->tid, t)) {
			free(t);
			return NULL;
		}
	}
	*t = (struct trace_state_thread){ .tid = r->tid, .pid = r->pid, .cpu = r->cpu, .exec_out = r->exec,
						  .delay_out = r->delay };
	if (r->kind == STATE_NEW || before < 0) {	/* born now; a seed: as the iterator saw it */
		t->state = state_after(r->kind);
		t->since = r->kind == STATE_NEW && r->ts > s->start_ns ? r->ts : s->start_ns;
	} else {
		t->state = (enum trace_state)before;
		t->since = s->start_ns;
	}
	name(s, t, r->comm);
	return t;
}

/* A switch-out (or exit) of a thread not running: its switch-in was never traced (some hosts skip switches
 * away from some tasks).  It ran its runtime since its last change, up to r: the slice it was in ends
 * there (not before its start), and a Running slice begins.  No runtime: nothing ran, nothing changes.
 * Still Blocked: its wakeup was not traced either (the same hosts); it waited in a runqueue what its
 * schedstat wait grew by, just before it ran. */
static void missed_switch_in(struct trace_states *s, struct trace_state_thread *t, const struct state_rec *r)
{
	unsigned long long ran = r->exec > t->exec_out ? r->exec - t->exec_out : 0;
	unsigned long long waited = r->delay > t->delay_out ? r->delay - t->delay_out : 0;
	unsigned long long in = r->ts > ran ? r->ts - ran : 0;

	if (!ran)
		return;
	if (in < t->since)
		in = t->since;
	if (t->state == TS_BLOCKED && waited) {
		unsigned long long woken = in > waited ? in - waited : 0;

		if (woken < t->since)
			woken = t->since;
		emit(s, t, woken);
		t->since = woken;
		t->state = TS_RUNNABLE;
	}
	emit(s, t, in);
	t->since = in;
	t->state = TS_RUNNING;
	t->cpu = r->cpu;
	s->inferred++;
}

void trace_states_record(struct trace_states *s, const struct state_rec *rec)
{
	struct trace_state_thread *t;
	struct state_rec r = *rec;
	int after;

	s->records++;
	if (!r.tid || r.kind >= STATE_KIND_MAX) {
		s->bad++;
		return;
	}
	if (r.ts < s->start_ns)
		r.ts = s->start_ns;	/* before the window: the state at its start */
	if (!s->end_ns && s->stop_ns && *s->stop_ns)
		s->end_ns = *s->stop_ns;	/* drained after the stop (the final refresh), not past it */
	if (s->end_ns && r.ts > s->end_ns)
		r.ts = s->end_ns;
	if (r.ts > s->newest_ns)
		s->newest_ns = r.ts;
	t = u64map_get(&s->threads, r.tid);
	if (t && (t->gone || (r.kind == STATE_NEW && t->pid != r.pid))) {
		if (r.kind != STATE_NEW)
			return;		/* after its exit (preempted in do_exit; its last switch is not recorded) */
		if (!t->gone)		/* tid reused by another process, the old thread's exit lost: it ends here */
			emit(s, t, r.ts);
		else
			s->gone--;
		first_sight(s, &r, t);
		return;
	}
	if (!t) {
		t = first_sight(s, &r, NULL);
		if (!t || is_seed(r.kind) || r.kind == STATE_NEW)
			return;
	} else if (is_seed(r.kind)) {
		return;		/* it changed state already: that record knows better */
	}
	name(s, t, r.comm);
	if (r.ts < t->since) {
		r.ts = t->since;	/* another CPU's record, a little earlier */
		s->clamped++;
	}
	after = state_after(r.kind);
	if (state_before(r.kind) == TS_RUNNING && t->state != TS_RUNNING)
		missed_switch_in(s, t, &r);
	if (after == (int)t->state || (r.kind == STATE_WAKE && t->state != TS_BLOCKED))
		return;		/* woken while still running (ttwu_runnable) or queued: the slice goes on */
	emit(s, t, r.ts);
	t->exec_out = r.exec;
	t->delay_out = r.delay;
	t->since = r.ts;
	t->cpu = r.cpu;
	if (after >= 0) {
		t->state = (enum trace_state)after;
	} else {
		t->gone = true;
		s->gone++;
	}
}

static void on_record(void *self, const void *rec)
{
	trace_states_record(self, rec);
}

int trace_states_attach(struct trace_states *s, struct ring_buffer *rb, int map_fd)
{
	int err = 0;

	s->sink = (struct trace_ring_sink){ .size = sizeof(struct state_rec), .record = on_record, .self = s,
					    .bad = &s->bad };
	s->ring = trace_ring_add(rb, map_fd, &s->sink, &err);
	return err;
}

void trace_states_start(struct trace_states *s, unsigned long long start_ns, const unsigned long long *stop_ns)
{
	s->start_ns = start_ns;
	s->stop_ns = stop_ns;
}

/* Exited threads stay this long after their exit (their tid's late records are theirs), then go. */
#define TRACE_STATES_GONE_NS 1000000000ULL
#define TRACE_STATES_GONE_MAX 4096

static void forget_gone(struct trace_states *s)
{
	__u32 *old = calloc(s->gone, sizeof(*old));
	size_t n = 0;

	if (!old)
		return;
	for (size_t i = 0; i < s->threads.cap && n < s->gone; i++) {	/* collect, then delete (u64map.h) */
		const struct trace_state_thread *t = s->threads.vals[i];

		if (t && t->gone && t->since + TRACE_STATES_GONE_NS < s->newest_ns)
			old[n++] = t->tid;
	}
	for (size_t i = 0; i < n; i++)
		free(u64map_del(&s->threads, old[i]));
	s->gone -= n;
	free(old);
}

void trace_states_drain(struct trace_states *s)
{
	if (!s->ring || !s->start_ns)
		return;
	ring__consume(s->ring);
	if (s->gone > TRACE_STATES_GONE_MAX)
		forget_gone(s);
}

void trace_states_close_all(struct trace_states *s, unsigned long long end_ns)
{
	s->end_ns = end_ns;
	trace_states_drain(s);
	for (size_t i = 0; i < s->threads.cap; i++) {
		struct trace_state_thread *t = s->threads.vals[i];

		if (t && !t->gone) {
			emit(s, t, end_ns);
			t->gone = true;
		}
	}
}

void trace_states_free(struct trace_states *s)
{
	for (size_t i = 0; i < s->threads.cap; i++)
		free(s->threads.vals[i]);
	u64map_free(&s->threads);
	s->ring = NULL;
}
