// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* --sample's collector (collect/sampling.c): the sampled functions, their folded stacks and the
 * pprof profile into the report; with --per-call, each sample's time and row for the iterations
 * (run_links.percall_samples_fd). */
#include <stdlib.h>
#include "collect/sampling.h"
#include "lib/warn.h"
#include "run/sampling_collector.h"

static bool sampling_wanted(const struct run_ctx *c)
{
	return c->o->sample_hz > 0 || c->o->sample_events_hz > 0;
}

static int sampling_init(struct run_ctx *c, void **self, char *err, size_t errlen)
{
	if (!(*self = calloc(1, sizeof(struct sampling)))) {
		err_set(err, errlen, "out of memory");
		return RUN_FAILED;
	}
	return RUN_OK;
}

static const char *leaf_of(void *ctx, const struct sample_key *k, const char **module)
{
	return sampling_leaf(ctx, k, module);
}

static int sampling_load_op(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct sampling *s = self;
	const struct options *o = c->o;
	struct sampling_cfg cfg = { .hz = o->sample_hz, .max_rows = o->max_sample_stacks, .pmu = c->prep->host.pmu,
				    .spin = o->per_call ? c->links.spin : NULL, .events_hz = o->sample_events_hz,
				    .evs = &c->prep->evs, .profile = o->pprof_path != NULL,
				    .percall = o->per_call && o->sample_hz > 0, .thread_est_fd = c->links.thread_est_fd };

	c->rep.samples_live = &s->live;
	if (sampling_load(s, c->links.spine, &cfg, err, errlen))
		return RUN_FAILED;
	c->links.folded = &s->folded;
	c->rep.folded = &s->folded;
	if (cfg.percall) {	/* --per-call: the iterations' top functions */
		c->links.percall_samples_fd = sampling_percall_fd(s);
		c->links.samples_leaf = leaf_of;
		c->links.samples_ctx = s;
	}
	return RUN_OK;
}

static int sampling_attach_op(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	int pids[TARGET_MAX_IDS + 1];

	if (sampling_attach(self, err, errlen))
		return RUN_FAILED;
	sampling_watch_mappings(self, pids, c->o->system_wide ? 0 : target_watched_pids(&c->o->target, pids));
	return RUN_OK;
}

static void sampling_poll_op(struct run_ctx *c, void *self, int timeout_ms)
{
	sampling_poll(self);
}

static void sampling_interval(struct run_ctx *c, void *self)
{
	sampling_snapshot(self, &c->prep->evs);	/* the live view's rep.samples_live */
}

static void sampling_tick_op(struct run_ctx *c, void *self, unsigned long long now)
{
	sampling_tick(self, now);
}

static void sampling_detach_op(struct run_ctx *c, void *self)
{
	sampling_detach(self);	/* before the spine, like uprobes: samples fold through its maps */
}

static int sampling_finish(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct sampling *s = self;
	struct thread_stats sum;

	thread_table_total(&c->tt, &sum);
	if (sampling_collect(s, &c->prep->evs, &c->rep.self, sum.oncpu_ns) == 0)
		c->rep.samples = &s->res;
	if (s->profile_ok)
		c->rep.profile = &s->profile;
	return RUN_OK;
}

static void sampling_free_op(struct run_ctx *c, void *self)
{
	sampling_free(self);
	free(self);
	c->links.folded = NULL;
	c->links.percall_samples_fd = -1;
	c->rep.folded = NULL;
	c->rep.profile = NULL;
	c->rep.samples = c->rep.samples_live = NULL;
}

const struct collector sampling_collector = {
	.name = "sampling", .wanted = sampling_wanted, .init = sampling_init, .load = sampling_load_op,
	.attach = sampling_attach_op, .poll = sampling_poll_op, .interval = sampling_interval, .tick = sampling_tick_op,
	.detach = sampling_detach_op, .finish = sampling_finish, .free = sampling_free_op,
};
