// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* --trace FILE for one run (see trace_run.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/clock.h"
#include "lib/warn.h"
#include "trace/trace_run.h"


int trace_run_open(struct trace_run **out, const char *path, mode_t mode, char *err, size_t errlen)
{
	struct trace_run *t = calloc(1, sizeof(*t));
	int r;

	*out = NULL;
	if (!t) {
		err_set(err, errlen, "--trace: out of memory");
		return -ENOMEM;
	}
	/* the origin precedes every attach, so no timestamp is negative */
	r = trace_writer_open(&t->w, path, mode, mono_ns(), err, errlen);
	if (r) {
		free(t);
		return r;
	}
	trace_writer_process_name(&t->w, TRACE_SYSTEM_PID, "tmabpf: all tracked threads");
	trace_spans_init(&t->spans, &t->w, NULL);
	trace_states_init(&t->states, &t->w);
	*out = t;
	return 0;
}

unsigned int trace_run_ring_bytes(void)
{
	const char *v = getenv("TMABPF_TEST_TRACE_RING");
	unsigned long want = v ? strtoul(v, NULL, 0) : 0;
	unsigned int sz = 4096;

	if (!want)
		return TRACE_RING_BYTES;
	while (sz < want && sz < TRACE_RING_BYTES)
		sz <<= 1;
	return sz;
}

unsigned int trace_run_state_wake_bytes(unsigned int ring_bytes)
{
	return getenv("TMABPF_TEST_TRACE_RING") ? ring_bytes : ring_bytes / 4;
}

int trace_run_attach_spans(struct trace_run *t, const struct uprobe_set *uset, struct ring_buffer *rb, int map_fd,
			   char *err, size_t errlen)
{
	int r;

	t->spans.uset = uset;
	r = trace_spans_attach(&t->spans, rb, map_fd);
	if (r) {
		err_set(err, errlen, "--trace: reading the span ring buffer: %s", strerror(-r));
		return r;
	}
	t->spans_on = true;
	return 0;
}

int trace_run_attach_states(struct trace_run *t, struct ring_buffer *rb, int map_fd, char *err, size_t errlen)
{
	int r = trace_states_attach(&t->states, rb, map_fd);

	if (r) {
		err_set(err, errlen, "--trace: reading the thread-state ring buffer: %s", strerror(-r));
		return r;
	}
	t->states_on = true;
	return 0;
}

void trace_run_start(struct trace_run *t, const struct event_list *evs, const struct tma_plan *tma_plan,
		     unsigned long long start_ns, const unsigned long long *stop_ns, int interval_ms)
{
	trace_tracks_init(&t->tracks, &t->w, evs, tma_plan, start_ns);
	trace_states_start(&t->states, start_ns, stop_ns);
	t->period_ns = interval_ms ? 0 : TRACE_DEFAULT_PERIOD_MS * 1000000ULL;
	t->next_ns = start_ns + t->period_ns;
	t->started = true;
}

void trace_run_poll(struct trace_run *t)
{
	if (t->spans_on)
		trace_spans_drain(&t->spans);
	if (t->states_on)
		trace_states_drain(&t->states);
}

bool trace_run_due(const struct trace_run *t, unsigned long long now_ns)
{
	return t->started && t->period_ns && now_ns >= t->next_ns;
}

void trace_run_sample(struct trace_run *t, const struct thread_table *tt, unsigned long long now_ns)
{
	if (!t->started)
		return;
	trace_tracks_sample(&t->tracks, tt, now_ns);
	if (t->period_ns) {
		t->next_ns += t->period_ns;
		if (t->next_ns <= now_ns)
			t->next_ns = now_ns + t->period_ns;
	}
}

/* Never silent: what the trace lacks, in one line each. */
static void warn_losses(const struct trace_run *t, const struct self_stats *self)
{
	const struct trace_spans *s = &t->spans;
	unsigned long long drops = self->stat[STAT_TRACE_DROPS];

	if (drops)
		warn_add("--trace: %llu span records lost (trace ring buffer full): %llu spans end where the next "
			 "record came (args.end \"record lost\"), %llu returns without their entry left out",
			 drops, s->lost_end, s->lost_entry);
	if (t->spans_on && self->stat[STAT_DEPTH_OVERFLOW])
		warn_add("--trace: %llu calls nested deeper than %d probed frames are not in the trace",
			 self->stat[STAT_DEPTH_OVERFLOW], TMABPF_MAX_DEPTH);
	if (s->bad)
		warn_add("--trace: %llu malformed span records skipped", s->bad);
	if (self->stat[STAT_STATE_DROPS])
		warn_add("--trace: %llu thread-state records lost (state ring buffer full): the state "
			 "before a lost change runs on to the next change recorded", self->stat[STAT_STATE_DROPS]);
	if (t->states.bad)
		warn_add("--trace: %llu malformed thread-state records skipped", t->states.bad);
}

static void end_marker(struct trace_run *t, const struct self_stats *self, const char *target, const char *why,
		       unsigned long long end_ns)
{
	const struct trace_spans *s = &t->spans;
	struct json *j = trace_writer_event(&t->w, 'i', end_ns, TRACE_SYSTEM_PID, -1, "tmabpf: end of run", "tmabpf");

	json_str(j, "s", "g");
	json_obj_begin(j, "args");
	json_str(j, "stop_reason", why);
	json_str(j, "target", target);
	json_u64(j, "spans", s->spans);
	json_u64(j, "spans_unmatched", s->unmatched);
	json_u64(j, "spans_thread_exit", s->exited);
	json_u64(j, "spans_open_at_end", s->open_at_end);
	json_u64(j, "spans_record_lost", s->lost_end);
	json_u64(j, "records_lost", self->stat[STAT_TRACE_DROPS]);
	json_u64(j, "records_clock_clamped", s->clamped);
	json_u64(j, "counter_samples", t->tracks.samples);
	json_u64(j, "state_records", t->states.records);
	json_u64(j, "state_records_lost", self->stat[STAT_STATE_DROPS]);
	json_u64(j, "state_records_clock_clamped", t->states.clamped);
	json_u64(j, "switch_ins_inferred", t->states.inferred);
	json_u64(j, "slices_running", t->states.slices[TS_RUNNING]);
	json_u64(j, "slices_runnable", t->states.slices[TS_RUNNABLE]);
	json_u64(j, "slices_blocked", t->states.slices[TS_BLOCKED]);
	json_obj_end(j);
	trace_writer_event_end(&t->w);
}

int trace_run_finish(struct trace_run *t, const struct thread_table *tt, const struct self_stats *self,
		     const char *target, const char *why, unsigned long long end_ns, unsigned long long window_end_ns,
		     char *err, size_t errlen)
{
	trace_run_poll(t);
	if (t->spans_on)
		trace_spans_close_all(&t->spans, end_ns);
	if (t->states_on && t->started)
		trace_states_close_all(&t->states, window_end_ns ? window_end_ns : end_ns);
	trace_run_sample(t, tt, end_ns);
	warn_losses(t, self);
	end_marker(t, self, target, why, end_ns);
	return trace_writer_close(&t->w, err, errlen);
}

void trace_run_free(struct trace_run *t)
{
	if (!t)
		return;
	trace_writer_close(&t->w, NULL, 0);
	trace_spans_free(&t->spans);
	trace_states_free(&t->states);
	if (t->started)
		trace_tracks_free(&t->tracks);
	free(t);
}
