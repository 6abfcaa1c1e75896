// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* --per-call's collector: iterations of a marker (collect/percall.c), from the uprobes' snapshots
 * (run_links.uprobes) and, with --sample, the sampler's per-call ring. */
#include <stdlib.h>
#include "collect/threads_loader.h"
#include "collect/uprobes_loader.h"
#include "sym/itt_names.h"
#include "lib/warn.h"
#include "run/percall_collector.h"

struct percall_state {
	struct percall p;
	bool open;
};

static bool percall_wanted(const struct run_ctx *c)
{
	return c->o->per_call != NULL;
}

/* --spin's functions, resolved before anything is loaded; the marker's own (uprobes' init) marked. */
static int percall_init(struct run_ctx *c, void **self, char *err, size_t errlen)
{
	const struct options *o = c->o;
	struct percall_state *s = calloc(1, sizeof(*s));
	int pid = o->target.nr_pids ? o->target.pids[0] : -1;
	const char *exe = o->target.argv ? o->target.argv[0] : NULL;

	if (!s) {
		err_set(err, errlen, "out of memory");
		return RUN_FAILED;
	}
	*self = s;
	s->p.spec = o->per_call;
	if (spin_set_resolve(&s->p.spin, o->spin_specs, o->nr_spin_specs, pid, exe, err, errlen))
		return RUN_BAD_INPUT;
	if (c->links.uset)
		spin_set_mark(&s->p.spin, c->links.uset);
	c->links.spin = &s->p.spin;
	return RUN_OK;
}

/* The spine's exit records so far (a window whose thread is gone at its return). */
static void drain_exits(void *ctx)
{
	struct run_ctx *c = ctx;

	if (c->links.spine)
		threads_poll(c->links.spine, 0);
}

/* The function of a slot past the direct ones: a probed function's id, or a span's (its name
 * drained first when it is new). */
static int slot_fn(void *ctx, unsigned int slot)
{
	struct run_ctx *c = ctx;
	uint64_t key;

	if (!c->links.uprobes || uprobes_percall_slot_key(c->links.uprobes, slot, &key))
		return -1;
	if (!((uint32_t)key & ITT_FN))
		return (int)(uint32_t)key;
	if (!c->links.uset || !c->links.uset->itt)
		return -1;
	return itt_names_fn(c->links.uset->itt, (unsigned int)(key >> 32), (uint32_t)key & ~ITT_FN);
}

static int percall_load(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct percall_state *s = self;

	if (!c->links.uprobes)
		return RUN_OK;
	s->p.drain_exits = drain_exits;
	s->p.drain_ctx = c;
	s->p.slot_fn = slot_fn;
	s->p.slot_ctx = c;
	c->rep.iters = &s->p.res;	/* the live views read them as they come */
	c->rep.per_call = s->p.spec;
	if (percall_open(&s->p, uprobes_percall_fd(c->links.uprobes), c->prep->evs.n, err, errlen))
		return RUN_FAILED;
	s->open = true;
	return RUN_OK;
}

/* --sample: the iterations' top functions, from the sampler's ring (loaded by now). */
static int percall_attach(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct percall_state *s = self;

	if (!s->open || c->links.percall_samples_fd < 0)
		return RUN_OK;
	return percall_samples_open(&s->p, c->links.percall_samples_fd, c->links.samples_leaf, c->links.samples_ctx,
				    err, errlen) ? RUN_FAILED : RUN_OK;
}

static void percall_poll_op(struct run_ctx *c, void *self, int timeout_ms)
{
	struct percall_state *s = self;

	if (s->open)
		percall_poll(&s->p);
}

static void percall_exited(struct run_ctx *c, void *self, const struct thread_stats *t)
{
	struct percall_state *s = self;

	if (s->open)
		percall_thread_exit(&s->p, t);	/* its window's share up to the exit */
}

static int percall_finish_op(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct percall_state *s = self;

	if (!s->open)
		return RUN_OK;
	percall_finish(&s->p, c->rep.self.stat[STAT_PERCALL_DROPS], c->rep.self.stat[STAT_PERCALL_SAMPLES_LOST]);
	if (c->rep.self.stat[STAT_PERCALL_SLOTS_FULL])
		warn_add("--per-call: more than %d functions and spans returned: %llu returns of those past it are "
			 "not in the iterations' totals (their rows are)", PERCALL_MAX_FUNCS,
			 c->rep.self.stat[STAT_PERCALL_SLOTS_FULL]);
	c->rep.iters = &s->p.res;
	c->rep.per_call = s->p.spec;
	return RUN_OK;
}

static void percall_free_op(struct run_ctx *c, void *self)
{
	struct percall_state *s = self;

	percall_free(&s->p);
	free(s);
	c->links.spin = NULL;
	c->rep.iters = NULL;
}

const struct collector percall_collector = {
	.name = "percall", .wanted = percall_wanted, .init = percall_init, .load = percall_load,
	.attach = percall_attach, .poll = percall_poll_op, .exited = percall_exited, .finish = percall_finish_op,
	.free = percall_free_op,
};
