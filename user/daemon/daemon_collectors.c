// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The daemon's own collectors (event sampling, the sampler, the aggregation's exits), whose state
 * is the daemon's, and the daemon's table: the accounting (spine or tasks) first. */
#include <stddef.h>
#include "collect/samples_loader.h"
#include "daemon/daemon_collectors.h"
#include "lib/clock.h"
#include "run/spine_collector.h"
#include "run/tasks_collector.h"
#include "run/uprobes_collector.h"

#define DAEMON(c) ((struct daemon *)((char *)(c) - offsetof(struct daemon, c)))

/* ---- the daemon's own collectors: event sampling, the sampler, the aggregation's exits; their
 * state is the daemon's (self) ---- */

static int daemon_self(struct run_ctx *c, void **self, char *err, size_t errlen)
{
	*self = DAEMON(c);
	return RUN_OK;
}

static int evsampled_load_op(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	return daemon_evsampled_load(&((struct daemon *)self)->devs, &c->prep->evs, err, errlen) ? RUN_FAILED : RUN_OK;
}

static int evsampled_attach_op(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct daemon *D = self;

	return daemon_evsampled_attach(&D->devs, D->d->events_hz, err, errlen) ? RUN_FAILED : RUN_OK;
}

static void evsampled_poll_op(struct run_ctx *c, void *self, int timeout_ms)
{
	daemon_evsampled_tick(&((struct daemon *)self)->devs, mono_ns());
}

static void evsampled_detach_op(struct run_ctx *c, void *self)
{
	daemon_evsampled_detach(&((struct daemon *)self)->devs);
}

static void evsampled_free_op(struct run_ctx *c, void *self)
{
	daemon_evsampled_free(&((struct daemon *)self)->devs);
}

static const struct collector evsampled_collector = {
	.name = "event sampling", .init = daemon_self, .load = evsampled_load_op, .attach = evsampled_attach_op,
	.poll = evsampled_poll_op, .detach = evsampled_detach_op, .free = evsampled_free_op,
};

/* The sampler starts once the accounting is attached; it never stops the daemon (daemon_sampling_open says why). */
static int sampler_attach(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct daemon *D = self;

	D->sampler = daemon_sampling_open(&D->samp, D->acct.tasks ? NULL : c->links.spine, c->prep->host.pmu,
				c->links.uprobes != NULL, D->d);
	return RUN_OK;
}

static void sampler_poll(struct run_ctx *c, void *self, int timeout_ms)
{
	struct daemon *D = self;

	if (D->sampler)
		daemon_sampling_poll(&D->samp);
}

/* Its programs' stats beside the accounting's (standalone in tasks mode: its own slots). */
static void sampler_read(struct run_ctx *c, void *self)
{
	struct daemon *D = self;

	if (!D->sampler)
		return;
	samples_stats_add(&D->samp.prog, &c->rep.self);
	samples_run_stats(&D->samp.prog, &D->self.sample_run_ns, &D->self.sample_run_cnt);
}

static void sampler_detach(struct run_ctx *c, void *self)
{
	struct daemon *D = self;

	D->sampler = NULL;
	daemon_sampling_stop(&D->samp);
}

static const struct collector sampler_collector = {
	.name = "sampler", .init = daemon_self, .attach = sampler_attach, .poll = sampler_poll, .read = sampler_read,
	.detach = sampler_detach,
};

/* Exited threads' final sums, from whichever accounting runs, into the aggregation. */
static void agg_exited(struct run_ctx *c, void *self, const struct thread_stats *s)
{
	struct daemon *D = self;

	if (D->agg_ready)
		daemon_agg_thread_exit(&D->agg, s);
}

static const struct collector agg_collector = {
	.name = "aggregation", .init = daemon_self, .exited = agg_exited,
};

void daemon_collectors_table(struct daemon *D)
{
	D->table[D->ncollectors++] = D->acct.tasks ? &tasks_collector : &spine_collector;
	if (D->acct.sampled)
		D->table[D->ncollectors++] = &evsampled_collector;
	if (!D->acct.tasks)
		D->table[D->ncollectors++] = &uprobes_collector;
	D->table[D->ncollectors++] = &sampler_collector;
	D->table[D->ncollectors++] = &agg_collector;
}
