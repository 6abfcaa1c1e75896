// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The spine's collector: per-thread accounting at sched_switch (collect/threads_loader.c), whose
 * program and maps the other features share (run_links.spine). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "collect/target_edges.h"
#include "collect/threads_loader.h"
#include "lib/warn.h"
#include "pmu/perf_open.h"
#include "run/spine_collector.h"

struct spine {
	struct perf_counters pc;	/* the spine's counters */
	struct threads_cfg cfg;		/* its filter and sizes */
	struct threads_prog prog;
	bool loaded;			/* threads_load ran (threads_destroy then cleans up) */
};

/* The spine's filter and map sizes from the options and the accounting chosen. */
static void spine_cfg(const struct run_ctx *c, struct threads_cfg *cfg)
{
	const struct options *o = c->o;
	const struct target *t = &o->target;

	*cfg = (struct threads_cfg){
		.filter = o->system_wide ? FILTER_ALL : t->nr_tids ? FILTER_TID : FILTER_TGID,
		.follow_fork = o->follow_fork,
		.max_threads = o->max_threads,
		.max_pids = o->max_pids,
		.main_id = t->nr_tids ? t->tids[0] : t->nr_pids ? t->pids[0] : 0,
		.exec_start = t->child > 0 ? (unsigned int)t->child : 0,
		.ids = t->nr_tids ? t->tids : t->pids,
		.nr_ids = t->nr_tids ? t->nr_tids : t->nr_pids,
		.seqlock = o->per_call != NULL,
		.seed = c->acct.seed,
		.lru = c->acct.bounded,		/* the least recently used thread goes when full (counted) */
		.cgroup = c->acct.bounded,
		.filter_only = c->acct.use_tasks,	/* the task programs have the threads' sums: no counters */
	};
}

static int spine_init(struct run_ctx *c, void **self, char *err, size_t errlen)
{
	struct spine *s = calloc(1, sizeof(*s));

	if (!s) {
		err_set(err, errlen, "out of memory");
		return RUN_FAILED;
	}
	*self = s;
	return RUN_OK;
}

static void on_exit_record(void *ctx, const struct thread_stats *s)
{
	run_thread_exited(ctx, s);
}

static int spine_load(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct spine *s = self;
	int r;

	spine_cfg(c, &s->cfg);
	if (c->acct.use_tasks)
		s->pc = (struct perf_counters){ .nr_cpus = c->prep->host.ncpus };
	else if ((r = perf_counters_open(&s->pc, &c->prep->evs, c->prep->host.ncpus, err, errlen)))
		return r == -E2BIG ? RUN_BAD_INPUT : RUN_FAILED;	/* a group that cannot fit: bad -e for this host */
	/* after the open: it drops the events this host cannot count */
	thread_table_init(&c->tt, c->prep->evs.n);
	thread_table_set_limits(&c->tt, c->o->max_exited, THREAD_TABLE_MAX_FOLDED);
	s->loaded = true;
	if (threads_load(&s->prog, &s->cfg, &s->pc, &c->prep->evs, on_exit_record, c, err, errlen))
		return RUN_FAILED;
	c->links.spine = &s->prog;
	if (c->o->target.child && threads_track(&s->prog, c->o->target.child, err, errlen))
		return RUN_FAILED;
	if (!s->prog.run_stats)
		warn_add("kernel BPF run-time stats unavailable (%s); tmabpf's own cost is not reported "
			 "(needs CAP_SYS_ADMIN, or sysctl kernel.bpf_stats_enabled=1)", strerror(errno));
	return RUN_OK;
}

static int spine_attach(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct spine *s = self;

	if (threads_attach(&s->prog, &s->pc, err, errlen))
		return RUN_FAILED;
	c->t0 = s->prog.seed_ns;	/* the run's window starts where the threads' times do */
	return RUN_OK;
}

static void spine_poll(struct run_ctx *c, void *self, int timeout_ms)
{
	struct spine *s = self;

	threads_poll(&s->prog, s->cfg.filter_only ? 0 : timeout_ms);	/* the task programs wait */
}

static void spine_read(struct run_ctx *c, void *self)
{
	struct spine *s = self;
	struct thread_stats *live = NULL;
	size_t n = 0;

	if (!s->cfg.filter_only) {
		threads_poll(&s->prog, 0);	/* exits up to now: a thread missing from the map is in the table */
		if (threads_read(&s->prog, &live, &n) == 0)
			thread_table_set_live(&c->tt, live, n);
	}
	threads_self_stats(&s->prog, &c->rep.self);	/* the filter-only spine's stats hold the samplers' */
}

static void spine_detach(struct run_ctx *c, void *self)
{
	struct spine *s = self;

	if (!s->cfg.filter_only)	/* else the task programs' detach did */
		run_accounting_stop(c, c->prep->host.ncpus);
	threads_detach(&s->prog);	/* links only: programs and maps stay readable */
}

static int spine_finish(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct spine *sp = self;
	const struct self_stats *s = &c->rep.self;
	const struct thread_table *tt = &c->tt;
	unsigned long long untraced_ns = 0;
	int untraced = sp->cfg.filter_only ? 0 : edges_close_slices(&c->tt, c->stop_ns, &untraced_ns);

	if (untraced)
		warn_add("%d threads were switched in and their switch-out never traced (this host's kernel skips "
			 "some): their on-CPU time is their runtime, the rest of that slice (%.3f s in all) is counted "
			 "as blocked", untraced, untraced_ns / 1e9);
	if (c->o->target.nr_pids)
		edges_add_idle_threads(&c->tt, c->o->target.pids, c->o->target.nr_pids, c->t0, c->rep.duration_ns);
	if (s->stat[STAT_THREADS_FULL])
		warn_add("threads map full: %llu thread switches not accounted (raise --max-threads)",
			 s->stat[STAT_THREADS_FULL]);
	if (s->stat[STAT_EXIT_DROPS])
		warn_add("%llu exited threads' final sums lost (ring buffer full)", s->stat[STAT_EXIT_DROPS]);
	if (tt->threads_folded)
		warn_add("%llu exited threads folded into their processes' sums (the latest %zu are kept one by one; "
			 "--max-exited)%s", tt->threads_folded, tt->max_exited, tt->procs_folded ?
			 ", and the oldest processes' into per-comm sums (JSON \"folded\")" : "");
	if (s->stat[STAT_PIDS_FULL])
		warn_add("pid filter full: %llu forked processes not followed (raise --max-pids)", s->stat[STAT_PIDS_FULL]);
	if (s->stat[STAT_THREAD_EST_LOST])
		warn_add("%llu event samples not in their thread's estimate (no task storage for the thread); the "
			 "functions' and processes' estimates have them", s->stat[STAT_THREAD_EST_LOST]);
	return RUN_OK;
}

static void spine_free(struct run_ctx *c, void *self)
{
	struct spine *s = self;

	if (s->loaded)
		threads_destroy(&s->prog);
	perf_counters_close(&s->pc);
	c->links.spine = NULL;
	free(s);
}

const struct collector spine_collector = {
	.name = "spine", .init = spine_init, .load = spine_load, .attach = spine_attach, .poll = spine_poll,
	.read = spine_read, .detach = spine_detach, .finish = spine_finish, .free = spine_free,
};
