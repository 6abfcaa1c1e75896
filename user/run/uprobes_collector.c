// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* --uprobe's collector: per-function deltas (collect/uprobe_run.c).  Its set of functions (with
 * the --per-call marker) and its program are what the trace, --per-call and the roofline use
 * (run_links.uset, run_links.uprobes). */
#include <stdlib.h>
#include "collect/bpf_util.h"
#include "collect/itt_run.h"
#include "collect/uprobe_run.h"
#include "lib/clock.h"
#include "lib/grow.h"
#include "lib/sorted.h"
#include "lib/warn.h"
#include "run/uprobes_collector.h"
#include "trace/trace_run.h"

struct uprobes {
	struct uprobe_run up;
	/* bounded (the daemon): the rows of threads that exited go once read after their exit */
	uint32_t *exited, *drop;
	size_t nexited, capexited, ndrop;
};

static bool uprobes_wanted(const struct run_ctx *c)
{
	return c->o->nr_uprobe_specs || c->o->per_call || c->o->itt;
}

/* The specs, resolved before anything is loaded so that bad input fails cleanly: the --per-call
 * marker first (a --uprobe glob that also matches it then leaves it alone). */
static int uprobes_init_op(struct run_ctx *c, void **self, char *err, size_t errlen)
{
	const struct options *o = c->o;
	struct uprobes *s = calloc(1, sizeof(*s));
	int pid = o->target.nr_pids ? o->target.pids[0] : -1;
	const char *exe = o->target.argv ? o->target.argv[0] : NULL;
	bool defer = (o->target.argv || o->target.nr_pids) && !o->dry_run;
	int n;

	if (!s) {
		err_set(err, errlen, "out of memory");
		return RUN_FAILED;
	}
	*self = s;
	s->up.set.probe_at = o->probe_at_symbol ? PROBE_AT_SYMBOL : PROBE_AT_AUTO;
	if (o->per_call && uprobe_run_resolve_marker(&s->up, o->per_call, pid, exe, defer, err, errlen)) {
		char why[1024];

		snprintf(why, sizeof(why), "%s", err);
		err_set(err, errlen, "--per-call: %s", why);
		return RUN_BAD_INPUT;
	}
	if (uprobe_run_resolve(&s->up, o->uprobe_specs, o->nr_uprobe_specs, pid, exe, defer, err, errlen))
		return RUN_BAD_INPUT;
	if (o->itt)	/* --itt: the collector's hooks, as the spans' rows */
		uprobe_run_enable_itt(&s->up, o->target.argv != NULL, o->target.pids, o->target.nr_pids);
	n = uprobe_run_wanted(&s->up);
	c->links.uset = &s->up.set;
	c->rep.uset = n ? &s->up.set : NULL;
	return RUN_OK;
}

static void uprobes_preview_op(struct run_ctx *c, void *self, FILE *f)
{
	uprobe_run_preview(&((struct uprobes *)self)->up, f);
}

static int uprobes_load_op(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct uprobe_run *u = &((struct uprobes *)self)->up;
	struct uprobes_cfg cfg = { .max_stacks = c->o->max_stacks, .max_funcs = c->o->max_funcs,
				   .trace_ring_bytes = c->o->trace_path ? trace_run_ring_bytes() : 0,
				   .percall_ring_bytes = c->o->per_call ? ringbuf_bytes(8u << 20) : 0,
				   .roofline = c->o->roofline };

	if (!uprobe_run_wanted(u))
		return RUN_OK;
	u->max_rate = c->o->max_rate;
	if (uprobe_run_load(u, c->links.spine, &cfg, err, errlen))
		return RUN_FAILED;
	c->links.uprobes = &u->prog;
	return RUN_OK;
}

static int uprobes_attach_op(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct uprobe_run *u = &((struct uprobes *)self)->up;
	int pids[TARGET_MAX_IDS + 1];

	if (!u->loaded)
		return RUN_OK;
	if (uprobe_run_attach(u, !c->o->target.child, err, errlen))
		return RUN_FAILED;
	if (!c->o->system_wide)
		uprobe_run_watch_start(u, pids, target_watched_pids(&c->o->target, pids));
	return RUN_OK;
}

static int uprobes_poll_ms_op(struct run_ctx *c, void *self, int dflt_ms)
{
	return uprobe_run_poll_ms(&((struct uprobes *)self)->up, dflt_ms);
}

static void uprobes_poll_op(struct run_ctx *c, void *self, int timeout_ms)
{
	struct uprobe_run *u = &((struct uprobes *)self)->up;

	if (u->loaded)
		uprobe_run_poll(u);
}

/* Bounded: the rows of the threads that exited before the last read go (read once more since:
 * their exit programs have surely run); those that exited since go at the next. */
static void forget_exited(struct uprobes *s)
{
	for (size_t i = 0; i < s->up.nrows && s->ndrop; i++) {
		uint32_t tid = s->up.rows[i].key.tid;

		if (bsearch(&tid, s->drop, s->ndrop, sizeof(tid), sorted_cmp_u32))
			uprobe_run_forget(&s->up, i);
	}
	for (size_t k = 0; s->up.itt && k < s->ndrop; k++)
		itt_run_forget_pid(s->up.itt, s->drop[k]);	/* a main thread's tid is its process' pid */
	free(s->drop);
	s->drop = s->exited;
	s->ndrop = s->nexited;
	s->exited = NULL;
	s->nexited = s->capexited = 0;
	if (s->ndrop)
		qsort(s->drop, s->ndrop, sizeof(*s->drop), sorted_cmp_u32);
}

static void uprobes_exited_op(struct run_ctx *c, void *self, const struct thread_stats *t)
{
	struct uprobes *s = self;
	uint32_t *n;

	if (!c->acct.bounded || !s->up.loaded)
		return;
	if (!(n = grow(s->exited, &s->capexited, s->nexited, sizeof(*n), 256)))
		return;
	s->exited = n;
	s->exited[s->nexited++] = t->tid;
}

static void uprobes_read_op(struct run_ctx *c, void *self)
{
	struct uprobes *s = self;
	struct uprobe_run *u = &s->up;

	if (!u->loaded)
		return;
	uprobe_run_read(u);
	if (c->acct.bounded)
		forget_exited(s);
	c->rep.frows = u->rows;
	c->rep.nfrows = u->nrows;
	c->rep.uprobe_run_ns = u->run_ns;
	c->rep.uprobe_run_cnt = u->run_cnt;
	c->rep.uprobe_attach_ns = u->prog.attach_ns;
}

/* The deferred specs wait for their library in the targets' maps; the guard checks once a second. */
static void uprobes_tick_op(struct run_ctx *c, void *self, unsigned long long now)
{
	struct uprobe_run *u = &((struct uprobes *)self)->up;

	if (!u->loaded)
		return;
	if (!c->o->system_wide && uprobe_run_watch_due(u, now, c->t0)) {
		int pids[TARGET_MAX_IDS + 1];

		uprobe_run_watch(u, pids, target_watched_pids(&c->o->target, pids), mono_ns());
	}
	if (uprobe_run_guard_due(u, now)) {
		struct thread_stats sum;

		run_refresh(c);
		thread_table_total(&c->tt, &sum);
		uprobe_run_guard(u, mono_ns(), sum.oncpu_ns);
	}
}

static void uprobes_detach_op(struct run_ctx *c, void *self)
{
	struct uprobe_run *u = &((struct uprobes *)self)->up;

	if (u->loaded)
		uprobe_run_detach(u);	/* before the spine: its returns fold through the spine's maps */
}

static int uprobes_finish_op(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct uprobe_run *u = &((struct uprobes *)self)->up;

	if (u->loaded)
		uprobe_run_finish(u, &c->rep.self, !c->o->system_wide);
	return RUN_OK;
}

static void uprobes_free_op(struct run_ctx *c, void *self)
{
	struct uprobes *s = self;

	uprobe_run_free(&s->up);
	free(s->exited);
	free(s->drop);
	free(s);
	c->links.uset = NULL;
	c->links.uprobes = NULL;
	c->rep.uset = NULL;
	c->rep.frows = NULL;
	c->rep.nfrows = 0;
}

const struct collector uprobes_collector = {
	.name = "uprobes", .wanted = uprobes_wanted, .init = uprobes_init_op, .preview = uprobes_preview_op,
	.load = uprobes_load_op, .attach = uprobes_attach_op, .poll_ms = uprobes_poll_ms_op,
	.poll = uprobes_poll_op, .read = uprobes_read_op,
	.tick = uprobes_tick_op, .exited = uprobes_exited_op, .detach = uprobes_detach_op, .finish = uprobes_finish_op,
	.free = uprobes_free_op,
};
