// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* --offcpu-stacks' collector (collect/offcpu.c): its folded lines join the sampler's
 * (run_links.folded) when --sample runs, else they are the report's own. */
#include <stdlib.h>
#include "collect/offcpu.h"
#include "lib/warn.h"
#include "run/offcpu_collector.h"

struct offcpu_state {
	struct offcpu off;
	struct folded folded;	/* its own lines when --sample is off */
};

static bool offcpu_wanted(const struct run_ctx *c)
{
	return c->o->offcpu_stacks;
}

static int offcpu_init(struct run_ctx *c, void **self, char *err, size_t errlen)
{
	if (!(*self = calloc(1, sizeof(struct offcpu_state)))) {
		err_set(err, errlen, "out of memory");
		return RUN_FAILED;
	}
	return RUN_OK;
}

static int offcpu_load_op(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct offcpu_state *s = self;

	return offcpu_load(&s->off, c->links.spine, c->o->max_sample_stacks, err, errlen) ? RUN_FAILED : RUN_OK;
}

static int offcpu_attach_op(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct offcpu_state *s = self;

	return offcpu_attach(&s->off, err, errlen) ? RUN_FAILED : RUN_OK;
}

static void offcpu_poll_op(struct run_ctx *c, void *self, int timeout_ms)
{
	offcpu_poll(&((struct offcpu_state *)self)->off);
}

static void offcpu_detach_op(struct run_ctx *c, void *self)
{
	offcpu_detach(&((struct offcpu_state *)self)->off);
}

static int offcpu_finish(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct offcpu_state *s = self;
	struct folded *to = c->links.folded ? c->links.folded : &s->folded;

	if (offcpu_collect(&s->off, to) == 0)
		c->rep.offcpu = &s->off.res;
	c->rep.folded = to;
	return RUN_OK;
}

static void offcpu_free_op(struct run_ctx *c, void *self)
{
	struct offcpu_state *s = self;

	if (c->rep.folded == &s->folded)
		c->rep.folded = NULL;
	offcpu_free(&s->off);
	folded_free(&s->folded);
	free(s);
	c->rep.offcpu = NULL;
}

const struct collector offcpu_collector = {
	.name = "offcpu", .wanted = offcpu_wanted, .init = offcpu_init, .load = offcpu_load_op,
	.attach = offcpu_attach_op, .poll = offcpu_poll_op, .detach = offcpu_detach_op, .finish = offcpu_finish,
	.free = offcpu_free_op,
};
