// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* --trace's collector: spans from the uprobes' ring buffer, thread-state slices from the state programs'
 * (collect/thread_states_loader.c), counter tracks from the table (trace/trace_run.c). */
#include <stdlib.h>
#include "collect/thread_states_loader.h"
#include "collect/threads_loader.h"
#include "collect/uprobes_loader.h"
#include "lib/clock.h"
#include "lib/warn.h"
#include "run/trace_collector.h"
#include "trace/trace_run.h"

struct trace_coll {
	struct trace_run *run;
	struct thread_states_prog states;
	bool states_loaded;
};

static bool trace_wanted(const struct run_ctx *c)
{
	return c->o->trace_path && !c->o->dry_run;
}

/* The file is opened before the run: a bad path fails before anything is loaded. */
static int trace_init(struct run_ctx *c, void **self, char *err, size_t errlen)
{
	struct trace_coll *s = calloc(1, sizeof(*s));

	if (!s) {
		err_set(err, errlen, "out of memory");
		return RUN_FAILED;
	}
	*self = s;
	if (trace_run_open(&s->run, c->o->trace_path, c->o->out_mode, err, errlen))
		return RUN_BAD_INPUT;
	return RUN_OK;
}

/* The state programs attach here, before the spine's attach starts the run's window (c->t0): every
 * thread's state at the window's start is then known from its first record. */
static int trace_load(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct trace_coll *s = self;
	struct threads_prog *spine = c->links.spine;
	char why[512];
	unsigned int ring = trace_run_ring_bytes();

	if (c->links.uprobes && trace_run_attach_spans(s->run, c->links.uset, spine->rb,
						       uprobes_trace_fd(c->links.uprobes), err, errlen))
		return RUN_FAILED;
	s->states_loaded = true;
	/* the ring joins the spine's ring buffer last: libbpf cannot take a ring out of it again, and a
	 * failed attach must not leave a dead one in its epoll set (records wait in the ring meanwhile) */
	if (thread_states_load(&s->states, spine, ring, trace_run_state_wake_bytes(ring), why, sizeof(why)) ||
	    thread_states_attach(&s->states, why, sizeof(why)) ||
	    trace_run_attach_states(s->run, spine->rb, thread_states_ring_fd(&s->states), why, sizeof(why))) {
		/* the spans and counter tracks do not need them: say so, go on */
		warn_add("--trace: no thread-state slices: %s", why);
		thread_states_destroy(&s->states);
		s->states_loaded = false;
	}
	return RUN_OK;
}

static void trace_start(struct run_ctx *c, void *self)
{
	struct trace_coll *s = self;

	trace_run_start(s->run, &c->prep->evs, c->prep->tma_level ? &c->prep->plan : NULL, c->t0, &c->stop_ns,
			c->o->interval_ms);
}

static void trace_poll(struct run_ctx *c, void *self, int timeout_ms)
{
	trace_run_poll(((struct trace_coll *)self)->run);
}

/* A counter sample at each -I interval, else every TRACE_DEFAULT_PERIOD_MS. */
static void trace_tick(struct run_ctx *c, void *self, unsigned long long now)
{
	struct trace_coll *s = self;

	if (c->interval_now) {
		trace_run_sample(s->run, &c->tt, mono_ns());
	} else if (trace_run_due(s->run, now)) {
		run_refresh(c);
		trace_run_sample(s->run, &c->tt, mono_ns());
	}
}

/* The state programs stay attached through the other collectors' detach, up to the spine's end of the
 * window (c->stop_ns), where the states close. */
static int trace_finish(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct trace_coll *s = self;
	int r = trace_run_finish(s->run, &c->tt, &c->rep.self, c->rep.target, c->rep.stop_reason, mono_ns(), c->stop_ns,
				 err, errlen);

	if (s->states_loaded)
		thread_states_detach(&s->states);
	return r ? RUN_FAILED : RUN_OK;
}

static void trace_free(struct run_ctx *c, void *self)
{
	struct trace_coll *s = self;

	trace_run_free(s->run);	/* before the ring buffer it reads goes */
	if (s->states_loaded)
		thread_states_destroy(&s->states);
	free(s);
}

const struct collector trace_collector = {
	.name = "trace", .wanted = trace_wanted, .init = trace_init, .load = trace_load, .start = trace_start,
	.poll = trace_poll, .tick = trace_tick, .finish = trace_finish, .free = trace_free,
};
