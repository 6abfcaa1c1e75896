// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* --trace's collector: spans from the uprobes' ring buffer, counter tracks from the table
 * (trace/trace_run.c). */
#include "collect/threads_loader.h"
#include "collect/uprobes_loader.h"
#include "lib/clock.h"
#include "run/trace_collector.h"
#include "trace/trace_run.h"

static bool trace_wanted(const struct run_ctx *c)
{
	return c->o->trace_path && !c->o->dry_run;
}

/* The file is opened before the run: a bad path fails before anything is loaded. */
static int trace_init(struct run_ctx *c, void **self, char *err, size_t errlen)
{
	struct trace_run *t = NULL;

	if (trace_run_open(&t, c->o->trace_path, c->o->out_mode, err, errlen))
		return RUN_BAD_INPUT;
	*self = t;
	return RUN_OK;
}

static int trace_load(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	if (!c->links.uprobes)
		return RUN_OK;
	return trace_run_attach_spans(self, c->links.uset, c->links.spine->rb, uprobes_trace_fd(c->links.uprobes), err,
				      errlen) ? RUN_FAILED : RUN_OK;
}

static void trace_start(struct run_ctx *c, void *self)
{
	trace_run_start(self, &c->prep->evs, c->prep->tma_level ? &c->prep->plan : NULL, c->t0, c->o->interval_ms);
}

static void trace_poll(struct run_ctx *c, void *self, int timeout_ms)
{
	trace_run_poll(self);
}

/* A counter sample at each -I interval, else every TRACE_DEFAULT_PERIOD_MS. */
static void trace_tick(struct run_ctx *c, void *self, unsigned long long now)
{
	if (c->interval_now) {
		trace_run_sample(self, &c->tt, mono_ns());
	} else if (trace_run_due(self, now)) {
		run_refresh(c);
		trace_run_sample(self, &c->tt, mono_ns());
	}
}

static int trace_finish(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	return trace_run_finish(self, &c->tt, &c->rep.self, c->rep.target, c->rep.stop_reason, mono_ns(), err,
				errlen) ? RUN_FAILED : RUN_OK;
}

static void trace_free(struct run_ctx *c, void *self)
{
	trace_run_free(self);	/* before the ring buffer it reads goes */
}

const struct collector trace_collector = {
	.name = "trace", .wanted = trace_wanted, .init = trace_init, .load = trace_load, .start = trace_start,
	.poll = trace_poll, .tick = trace_tick, .finish = trace_finish, .free = trace_free,
};
