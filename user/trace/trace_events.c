// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* --trace spans from the uprobes' ring buffer (see trace_events.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "sym/itt_names.h"
#include "trace/trace_events.h"

#define NOTE_UNMATCHED "unmatched: skipped by longjmp or an exception"
#define NOTE_EXIT "unmatched: thread exited"
#define NOTE_AT_END "open at end of run"
#define NOTE_LOST "record lost"

struct trace_frame {
	unsigned long long start_ns;
	__u32 fn;
	bool valid;		/* its entry record was seen */
};

struct trace_thread {
	__u32 tid;		/* 0: free slot (tid 0, idle, is never traced) */
	__u32 pid;
	__u32 depth;
	unsigned long long last_ts;	/* its latest record's time: a thread's times never go back */
	struct trace_frame f[TMABPF_MAX_DEPTH];
};

void trace_spans_init(struct trace_spans *s, struct trace_writer *w, const struct uprobe_set *uset)
{
	memset(s, 0, sizeof(*s));
	s->w = w;
	s->uset = uset;
}

static size_t home(__u32 tid, size_t cap)
{
	return (tid * 2654435761u) & (cap - 1);
}

static size_t slot_of(const struct trace_thread *tab, size_t cap, __u32 tid)
{
	size_t i = home(tid, cap);

	while (tab[i].tid && tab[i].tid != tid)
		i = (i + 1) & (cap - 1);
	return i;
}

/* A thread with no open frame stays this long after its last record (its time, the clamp's
 * floor, with it); then a rebuild lets it go, so short-lived threads do not accumulate. */
#define TRACE_IDLE_NS 1000000000ULL

static bool keep(const struct trace_spans *s, const struct trace_thread *t)
{
	return t->tid && (t->depth || t->last_ts + TRACE_IDLE_NS >= s->newest_ts);
}

/* The table rebuilt at cap slots, without the threads idle for TRACE_IDLE_NS. */
static int rehash(struct trace_spans *s, size_t cap)
{
	struct trace_thread *tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	s->used = 0;
	for (size_t i = 0; i < s->cap; i++)
		if (keep(s, &s->tab[i])) {
			tab[slot_of(tab, cap, s->tab[i].tid)] = s->tab[i];
			s->used++;
		}
	free(s->tab);
	s->tab = tab;
	s->cap = cap;
	return 0;
}

static struct trace_thread *thread_get(struct trace_spans *s, __u32 tid, __u32 pid)
{
	struct trace_thread *t;

	if ((s->used + 1) * 2 > s->cap) {
		if (!s->cap ? rehash(s, 256) : rehash(s, s->cap))	/* idle threads go first */
			return NULL;
		/* still over a quarter full: double, or nearly every new thread would rebuild again */
		if ((s->used + 1) * 4 > s->cap && rehash(s, s->cap * 2))
			return NULL;
	}
	t = &s->tab[slot_of(s->tab, s->cap, tid)];
	if (!t->tid) {
		*t = (struct trace_thread){ .tid = tid, .pid = pid };
		s->used++;
	}
	return t;
}

static const char *fn_name(const struct trace_spans *s, __u32 pid, __u32 fn, char *buf, size_t len)
{
	int itt = fn & ITT_FN && s->uset ? itt_names_fn(s->uset->itt, pid, fn & ~ITT_FN) : -1;

	if (itt >= 0)	/* --itt: a span of the collector, named as its rows are */
		fn = (__u32)itt;
	if (s->uset && fn < (__u32)s->uset->nr_funcs && s->uset->funcs[fn].symbol)
		return s->uset->funcs[fn].symbol;
	snprintf(buf, len, "function#%u", fn);
	return buf;
}

static void emit(struct trace_spans *s, const struct trace_thread *t, __u32 d, unsigned long long end_ns,
		 const char *note)
{
	char buf[32];

	trace_writer_span(s->w, t->pid, t->tid, fn_name(s, t->pid, t->f[d].fn, buf, sizeof(buf)), t->f[d].start_ns, end_ns,
			  note);
	s->spans++;
}

/* Close the frames at depth >= from (innermost first) at end_ns. */
static void close_from(struct trace_spans *s, struct trace_thread *t, __u32 from, unsigned long long end_ns,
		       const char *note, unsigned long long *count)
{
	while (t->depth > from) {
		__u32 d = --t->depth;

		if (!t->f[d].valid)
			continue;
		emit(s, t, d, end_ns, note);
		(*count)++;
	}
}

void trace_spans_record(struct trace_spans *s, const struct trace_rec *rec)
{
	struct trace_rec clamped = *rec, *r = &clamped;
	struct trace_thread *t;
	__u32 d = r->depth;

	s->records++;
	if (d >= TMABPF_MAX_DEPTH || !r->tid || r->kind > TRACE_EXIT) {
		s->bad++;
		return;
	}
	t = thread_get(s, r->tid, r->pid);
	if (!t)
		return;
	if (t->pid != r->pid) {		/* tid reused by another process */
		close_from(s, t, 0, r->ts, NOTE_LOST, &s->lost_end);
		t->pid = r->pid;
		t->last_ts = 0;
	}
	/* The BPF side's times come from each CPU's perf clock (account_clock): a thread that moved to
	 * another CPU can read a few us earlier than its previous record there, and sequential calls
	 * would overlap.  Records of one thread come in program order: keep its times monotonic. */
	if (r->ts < t->last_ts) {
		r->ts = t->last_ts;
		s->clamped++;
	}
	t->last_ts = r->ts;
	if (r->ts > s->newest_ts)
		s->newest_ts = r->ts;
	if (r->kind == TRACE_ENTRY) {
		/* frames at this depth or deeper ended without their record */
		close_from(s, t, d, r->ts, NOTE_LOST, &s->lost_end);
		for (__u32 i = t->depth; i < d; i++)
			t->f[i].valid = false;	/* entered while records were lost */
		t->f[d] = (struct trace_frame){ .start_ns = r->ts, .fn = r->fn, .valid = true };
		t->depth = d + 1;
		return;
	}
	close_from(s, t, d + 1, r->ts, NOTE_LOST, &s->lost_end);
	if (d >= t->depth || !t->f[d].valid || t->f[d].fn != r->fn) {
		s->lost_entry++;
		if (d < t->depth)
			t->depth = d;
		return;
	}
	if (r->kind == TRACE_RETURN) {
		emit(s, t, d, r->ts, NULL);
	} else {
		emit(s, t, d, r->ts, r->kind == TRACE_EXIT ? NOTE_EXIT : NOTE_UNMATCHED);
		if (r->kind == TRACE_EXIT)
			s->exited++;
		else
			s->unmatched++;
	}
	t->depth = d;
}

static void on_record(void *self, const void *rec)
{
	trace_spans_record(self, rec);
}

int trace_spans_attach(struct trace_spans *s, struct ring_buffer *rb, int map_fd)
{
	int err = 0;

	s->sink = (struct trace_ring_sink){ .size = sizeof(struct trace_rec), .record = on_record, .self = s,
					    .bad = &s->bad };
	s->ring = trace_ring_add(rb, map_fd, &s->sink, &err);
	return err;
}

void trace_spans_drain(struct trace_spans *s)
{
	if (s->ring)
		ring__consume(s->ring);
}

void trace_spans_close_all(struct trace_spans *s, unsigned long long end_ns)
{
	for (size_t i = 0; i < s->cap; i++)
		if (s->tab[i].tid)
			close_from(s, &s->tab[i], 0, end_ns, NOTE_AT_END, &s->open_at_end);
}

void trace_spans_free(struct trace_spans *s)
{
	free(s->tab);
	s->tab = NULL;
	s->cap = s->used = 0;
	s->ring = NULL;
}
