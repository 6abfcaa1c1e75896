// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The profiling run's collectors and the drivers that walk a table of them.  See collector.h. */
#include <errno.h>
#include <string.h>
#include "collect/bpf_util.h"
#include "collect/target_edges.h"
#include "collect/task_acct.h"
#include "lib/clock.h"
#include "lib/warn.h"
#include "pmu/mem_event.h"
#include "run/collector.h"
#include "run/roofline_collector.h"

/* ---- the drivers ---- */

static bool on(const struct run_ctx *c, int i)
{
	return c->on & (1u << i);
}

enum run_status collectors_load(const struct collector *const *t, int n, struct run_ctx *c)
{
	char err[1024];

	for (int i = 0; i < n; i++) {
		int r;

		if (t[i]->wanted && !t[i]->wanted(c))
			continue;
		c->on |= 1u << i;	/* its free() cleans up a partial load */
		if (t[i]->load && (r = t[i]->load(c, err, sizeof(err)))) {
			err_print("%s", err);
			return r;
		}
	}
	return RUN_OK;
}

enum run_status collectors_attach(const struct collector *const *t, int n, struct run_ctx *c)
{
	char err[1024];

	for (int i = 0; i < n; i++) {
		int r;

		if (on(c, i) && t[i]->attach && (r = t[i]->attach(c, err, sizeof(err)))) {
			err_print("%s", err);
			return r;
		}
	}
	return RUN_OK;
}

#define EACH(op, ...)						\
	for (int i = 0; i < n; i++)				\
		if (on(c, i) && t[i]->op)			\
			t[i]->op(c, ##__VA_ARGS__)

void collectors_start(const struct collector *const *t, int n, struct run_ctx *c)
{
	EACH(start);
}

void collectors_poll(const struct collector *const *t, int n, struct run_ctx *c, int timeout_ms)
{
	EACH(poll, timeout_ms);
}

void collectors_read(const struct collector *const *t, int n, struct run_ctx *c)
{
	EACH(read);
}

void collectors_interval(const struct collector *const *t, int n, struct run_ctx *c)
{
	EACH(interval);
}

void collectors_tick(const struct collector *const *t, int n, struct run_ctx *c, unsigned long long now_ns)
{
	EACH(tick, now_ns);
}

enum run_status collectors_finish(const struct collector *const *t, int n, struct run_ctx *c)
{
	int rc = RUN_OK;
	char err[1024];

	for (int i = 0; i < n; i++) {	/* every one finishes: a failed one does not lose the others' results */
		int r;

		if (on(c, i) && t[i]->finish && (r = t[i]->finish(c, err, sizeof(err)))) {
			err_print("%s", err);
			rc = rc ? rc : r;
		}
	}
	return rc;
}

void collectors_detach(const struct collector *const *t, int n, struct run_ctx *c)
{
	for (int i = n - 1; i >= 0; i--)
		if (on(c, i) && t[i]->detach)
			t[i]->detach(c);
}

void collectors_free(const struct collector *const *t, int n, struct run_ctx *c)
{
	for (int i = n - 1; i >= 0; i--)
		if (on(c, i) && t[i]->free)
			t[i]->free(c);
	c->on = 0;
}

void run_refresh(struct run_ctx *c, const struct collector *const *t, int n)
{
	collectors_read(t, n, c);
	c->rep.mono_ns = c->stop_ns ? c->stop_ns : mono_ns();
	c->rep.duration_ns = c->rep.mono_ns - c->t0;
}

void run_threads_cfg(const struct options *o, struct threads_cfg *cfg)
{
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
	};
}

/* ---- the spine: per-thread accounting at sched_switch (threads_loader.c) ---- */

static int spine_load(struct run_ctx *c, char *err, size_t errlen)
{
	int r;

	c->tcfg.filter_only = c->use_tasks;	/* the task programs have the threads' sums: no counters */
	if (c->use_tasks)
		c->pc = (struct perf_counters){ .nr_cpus = c->prep->host.ncpus };
	else if ((r = perf_counters_open(&c->pc, &c->prep->evs, c->prep->host.ncpus, err, errlen)))
		return r == -E2BIG ? RUN_BAD_INPUT : RUN_FAILED;	/* a group that cannot fit: bad -e for this host */
	/* after the open: it drops the events this host cannot count */
	thread_table_init(&c->tt, c->prep->evs.n);
	thread_table_set_limits(&c->tt, c->o->max_exited, THREAD_TABLE_MAX_FOLDED);
	c->spine_loaded = true;
	if (threads_load(&c->spine, &c->tcfg, &c->pc, &c->prep->evs, c->on_exit, c->exit_ctx, err, errlen))
		return RUN_FAILED;
	if (c->o->target.child && threads_track(&c->spine, c->o->target.child, err, errlen))
		return RUN_FAILED;
	if (!c->spine.run_stats)
		warn_add("kernel BPF run-time stats unavailable (%s); tmabpf's own cost is not reported "
			 "(needs CAP_SYS_ADMIN, or sysctl kernel.bpf_stats_enabled=1)", strerror(errno));
	return RUN_OK;
}

static int spine_attach(struct run_ctx *c, char *err, size_t errlen)
{
	if (threads_attach(&c->spine, &c->pc, err, errlen))
		return RUN_FAILED;
	c->t0 = c->spine.seed_ns;	/* the run's window starts where the threads' times do */
	return RUN_OK;
}

static void spine_poll(struct run_ctx *c, int timeout_ms)
{
	threads_poll(&c->spine, c->tcfg.filter_only ? 0 : timeout_ms);	/* the task programs wait */
}

static void spine_read(struct run_ctx *c)
{
	struct thread_stats *live = NULL;
	size_t n = 0;

	if (!c->tcfg.filter_only) {
		threads_poll(&c->spine, 0);	/* exits up to now: a thread missing from the map is in the table */
		if (threads_read(&c->spine, &live, &n) == 0)
			thread_table_set_live(&c->tt, live, n);
	}
	threads_self_stats(&c->spine, &c->rep.self);	/* the filter-only spine's stats hold the samplers' */
}

/* What is accounted ends here, not when the links are gone: the slices running now are folded.  By
 * whichever collector accounts the threads: the spine, or the task programs. */
static void accounting_stop(struct run_ctx *c)
{
	edges_switch_every_cpu(c->prep->host.ncpus);
	c->stop_ns = mono_ns();
}

static void spine_detach(struct run_ctx *c)
{
	if (!c->tcfg.filter_only)	/* else the task programs' detach did */
		accounting_stop(c);
	threads_detach(&c->spine);	/* links only: programs and maps stay readable */
}

static int spine_finish(struct run_ctx *c, char *err, size_t errlen)
{
	const struct self_stats *s = &c->rep.self;
	const struct thread_table *tt = &c->tt;
	unsigned long long untraced_ns = 0;
	int untraced = c->tcfg.filter_only ? 0 : edges_close_slices(&c->tt, c->stop_ns, &untraced_ns);

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

static void spine_free(struct run_ctx *c)
{
	if (c->spine_loaded)
		threads_destroy(&c->spine);
	c->spine_loaded = false;
	perf_counters_close(&c->pc);
}

const struct collector spine_collector = {
	.name = "spine", .load = spine_load, .attach = spine_attach, .poll = spine_poll, .read = spine_read,
	.detach = spine_detach, .finish = spine_finish, .free = spine_free,
};

/* ---- task accounting: thread sums from the task iterator and thread exits (tasks_loader.c) ---- */

const char *run_switch_needed(const struct options *o)
{
	if (o->nr_uprobe_specs || o->per_call)
		return o->per_call ? "--per-call" : "--uprobe";
	if (o->mem_source)
		return "--mem-samples";
	if (o->offcpu_stacks)
		return "--offcpu-stacks";
	return NULL;
}

static const struct event_list no_events;

static bool tasks_wanted(const struct run_ctx *c)
{
	return c->use_tasks;
}

static int tasks_load_op(struct run_ctx *c, char *err, size_t errlen)
{
	int bad = c->tasks_counts == TASKS_KERNEL_COUNTS ? task_acct_underivable(&c->prep->evs) : -1;
	bool cli = c->tcfg.filter_only;
	/* estimates (the CLI): their storage for the spine's targets */
	struct tasks_est est = { .pids_fd = cli ? threads_pids_fd(&c->spine) : -1, .filter = c->spine.acfg.filter,
				 .main_id = c->spine.acfg.main_id };

	if (bad >= 0) {
		err_set(err, errlen, "event '%s' is not a per-thread kernel count (derivable: %s)",
			c->prep->evs.ev[bad].name, task_acct_derivable());
		return RUN_BAD_INPUT;
	}
	c->tasks_loaded = true;
	if (tasks_load(&c->tasks, c->tasks_counts == TASKS_NO_COUNTS ? &no_events : &c->prep->evs,
		       c->tasks_counts == TASKS_ESTIMATES ? &est : NULL, c->o->max_threads, c->on_exit, c->exit_ctx,
		       err, errlen))
		return RUN_FAILED;
	if (!c->tasks.run_stats && !cli)	/* the CLI's spine said it */
		warn_add("kernel BPF run-time stats unavailable (%s); tmabpf's own cost is not reported "
			 "(needs CAP_SYS_ADMIN, or sysctl kernel.bpf_stats_enabled=1)", strerror(errno));
	if (!c->tasks.run_delay)
		warn_add("runqueue wait unavailable: kernel without CONFIG_SCHED_INFO (no /proc/PID/schedstat); "
			 "runqueue time reads 0 and counts as blocked");
	return RUN_OK;
}

static int tasks_attach_op(struct run_ctx *c, char *err, size_t errlen)
{
	int r;

	if (tasks_attach(&c->tasks, err, errlen))
		return RUN_FAILED;
	if (c->tasks_counts == TASKS_ESTIMATES && (r = tasks_seed(&c->tasks))) {	/* before the sampler attaches */
		err_set(err, errlen, "creating the targets' estimate storage (task iterator): %s", strerror(-r));
		return RUN_FAILED;
	}
	return RUN_OK;
}

static void tasks_poll_op(struct run_ctx *c, int timeout_ms)
{
	tasks_poll(&c->tasks, timeout_ms);
}

/* The CLI: one iteration, the filter's threads into the table. */
static void tasks_iterate(struct run_ctx *c)
{
	struct thread_stats *live = NULL;
	size_t n = 0;

	if (tasks_read(&c->tasks, &live, &n) == 0)
		thread_table_set_live(&c->tt, live, n);
}

/* The daemon reads on its own (daemon.c); the CLI at each refresh, until its last iteration. */
static void tasks_start(struct run_ctx *c)
{
	if (c->tcfg.filter_only)
		tasks_iterate(c);	/* threads older than the run count from here */
}

static void tasks_read_op(struct run_ctx *c)
{
	struct self_stats t;

	if (!c->tcfg.filter_only)
		return;
	if (!c->tasks_final)
		tasks_iterate(c);
	tasks_self_stats(&c->tasks, &t);	/* after the spine's: add to them */
	c->rep.self.bpf_run_ns += t.bpf_run_ns;
	c->rep.self.bpf_run_cnt += t.bpf_run_cnt;
	c->rep.self.stat[STAT_EXIT_DROPS] += t.stat[STAT_EXIT_DROPS];
	c->rep.self.stat[STAT_THREADS_FULL] += t.stat[STAT_THREADS_FULL];
	c->rep.self.threads_in_map = t.threads_in_map;
	c->rep.self.max_threads = t.max_threads;
}

static void tasks_detach_op(struct run_ctx *c)
{
	if (c->tcfg.filter_only) {	/* accounting ends with one last iteration, the running slices folded */
		accounting_stop(c);
		tasks_flush(&c->tasks, 200);	/* threads that exited: final, not held as live */
		tasks_iterate(c);
		c->tasks_final = true;
	}
	tasks_detach(&c->tasks);
}

static void tasks_free_op(struct run_ctx *c)
{
	if (c->tasks_loaded)
		tasks_destroy(&c->tasks);
	c->tasks_loaded = false;
}

const struct collector tasks_collector = {
	.name = "tasks", .wanted = tasks_wanted, .load = tasks_load_op, .attach = tasks_attach_op,
	.start = tasks_start, .poll = tasks_poll_op, .read = tasks_read_op, .detach = tasks_detach_op,
	.free = tasks_free_op,
};

/* ---- --uprobe: per-function deltas (uprobe_run.c) ---- */

static bool uprobes_wanted(const struct run_ctx *c)
{
	return uprobe_run_wanted(&c->up);
}

static int uprobes_load_op(struct run_ctx *c, char *err, size_t errlen)
{
	struct uprobes_cfg cfg = { .max_stacks = c->o->max_stacks, .max_funcs = c->o->max_funcs,
				   .trace_ring_bytes = c->trace ? trace_run_ring_bytes() : 0,
				   .percall_ring_bytes = c->o->per_call ? ringbuf_bytes(8u << 20) : 0 };

	c->up.max_rate = c->o->max_rate;
	return uprobe_run_load(&c->up, &c->spine, &cfg, err, errlen) ? RUN_FAILED : RUN_OK;
}

/* The target processes whose maps the uprobes watch: -p's, and the command (exec'd once released). */
static int watched_pids(const struct run_ctx *c, int *pids)
{
	const struct target *t = &c->o->target;
	int n = 0;

	for (int i = 0; i < t->nr_pids; i++)
		pids[n++] = t->pids[i];
	if (t->child && !t->child_reaped)
		pids[n++] = t->child;	/* exec'd: target_release waited for it */
	return n;
}

static int uprobes_attach_op(struct run_ctx *c, char *err, size_t errlen)
{
	int pids[TARGET_MAX_IDS + 1];

	if (uprobe_run_attach(&c->up, !c->o->target.child, err, errlen))
		return RUN_FAILED;
	if (!c->o->system_wide)
		uprobe_run_watch_start(&c->up, pids, watched_pids(c, pids));
	return RUN_OK;
}

static void uprobes_poll(struct run_ctx *c, int timeout_ms)
{
	uprobe_run_poll(&c->up);
}

static void uprobes_read_op(struct run_ctx *c)
{
	uprobe_run_read(&c->up);
	c->rep.frows = c->up.rows;
	c->rep.nfrows = c->up.nrows;
	c->rep.uprobe_run_ns = c->up.run_ns;
	c->rep.uprobe_run_cnt = c->up.run_cnt;
	c->rep.uprobe_attach_ns = c->up.prog.attach_ns;
}

/* The deferred specs wait for their library in the targets' maps; the guard checks once a second. */
static void uprobes_tick(struct run_ctx *c, unsigned long long now)
{
	if (!c->o->system_wide && uprobe_run_watch_due(&c->up, now, c->t0)) {
		int pids[TARGET_MAX_IDS + 1];

		uprobe_run_watch(&c->up, pids, watched_pids(c, pids), mono_ns());
	}
	if (uprobe_run_guard_due(&c->up, now)) {
		struct thread_stats sum;

		run_refresh(c, run_collectors, run_ncollectors);
		thread_table_total(&c->tt, &sum);
		uprobe_run_guard(&c->up, mono_ns(), sum.oncpu_ns);
	}
}

static void uprobes_detach_op(struct run_ctx *c)
{
	uprobe_run_detach(&c->up);	/* before the spine: its returns fold through the spine's maps */
}

static int uprobes_finish(struct run_ctx *c, char *err, size_t errlen)
{
	uprobe_run_finish(&c->up, &c->rep.self, !c->o->system_wide);
	return RUN_OK;
}

static void uprobes_free(struct run_ctx *c)
{
	uprobe_run_free(&c->up);
}

const struct collector uprobes_collector = {
	.name = "uprobes", .wanted = uprobes_wanted, .load = uprobes_load_op, .attach = uprobes_attach_op,
	.poll = uprobes_poll, .read = uprobes_read_op, .tick = uprobes_tick, .detach = uprobes_detach_op, .finish = uprobes_finish,
	.free = uprobes_free,
};

/* ---- --per-call: iterations of a marker (percall.c), from the uprobes' snapshots ---- */

static bool percall_wanted(const struct run_ctx *c)
{
	return c->o->per_call && c->up.loaded;
}

/* The spine's exit records so far (percall: a window whose thread is gone at its return). */
static void percall_drain_exits(void *ctx)
{
	struct run_ctx *c = ctx;

	threads_poll(&c->spine, 0);
}

static int percall_load(struct run_ctx *c, char *err, size_t errlen)
{
	c->percall.spec = c->o->per_call;
	c->percall.drain_exits = percall_drain_exits;
	c->percall.drain_ctx = c;
	c->rep.iters = &c->percall.res;	/* the live views read them as they come */
	c->rep.per_call = c->percall.spec;
	return percall_open(&c->percall, uprobes_percall_fd(&c->up.prog), c->prep->evs.n, err, errlen) ? RUN_FAILED : RUN_OK;
}

static void percall_poll_op(struct run_ctx *c, int timeout_ms)
{
	percall_poll(&c->percall);
}

static int percall_finish_op(struct run_ctx *c, char *err, size_t errlen)
{
	percall_finish(&c->percall, c->rep.self.stat[STAT_PERCALL_DROPS], c->rep.self.stat[STAT_PERCALL_SAMPLES_LOST]);
	c->rep.iters = &c->percall.res;
	c->rep.per_call = c->percall.spec;
	return RUN_OK;
}

static void percall_free_op(struct run_ctx *c)
{
	percall_free(&c->percall);
}

static const struct collector percall_collector = {
	.name = "percall", .wanted = percall_wanted, .load = percall_load, .poll = percall_poll_op,
	.finish = percall_finish_op, .free = percall_free_op,
};

/* ---- --trace: spans from the uprobes' ring buffer, counter tracks from the table (trace_run.c) ---- */

static bool trace_wanted(const struct run_ctx *c)
{
	return c->trace != NULL;
}

static int trace_load(struct run_ctx *c, char *err, size_t errlen)
{
	if (!c->up.loaded)
		return RUN_OK;
	return trace_run_attach_spans(c->trace, &c->up.set, c->spine.rb, uprobes_trace_fd(&c->up.prog), err,
				      errlen) ? RUN_FAILED : RUN_OK;
}

static void trace_start(struct run_ctx *c)
{
	trace_run_start(c->trace, &c->prep->evs, c->prep->tma_level ? &c->prep->plan : NULL, c->t0,
			c->o->interval_ms);
}

static void trace_poll(struct run_ctx *c, int timeout_ms)
{
	trace_run_poll(c->trace);
}

/* A counter sample at each -I interval, else every TRACE_DEFAULT_PERIOD_MS. */
static void trace_tick(struct run_ctx *c, unsigned long long now)
{
	if (c->interval_now) {
		trace_run_sample(c->trace, &c->tt, mono_ns());
	} else if (trace_run_due(c->trace, now)) {
		run_refresh(c, run_collectors, run_ncollectors);
		trace_run_sample(c->trace, &c->tt, mono_ns());
	}
}

static int trace_finish(struct run_ctx *c, char *err, size_t errlen)
{
	return trace_run_finish(c->trace, &c->tt, &c->rep.self, c->rep.target, c->rep.stop_reason, mono_ns(), err,
				errlen) ? RUN_FAILED : RUN_OK;
}

static void trace_free(struct run_ctx *c)
{
	trace_run_free(c->trace);	/* before the ring buffer it reads goes */
	c->trace = NULL;
}

static const struct collector trace_collector = {
	.name = "trace", .wanted = trace_wanted, .load = trace_load, .start = trace_start, .poll = trace_poll,
	.tick = trace_tick, .finish = trace_finish, .free = trace_free,
};

/* ---- --sample (sampling.c) ---- */

static bool sampling_wanted(const struct run_ctx *c)
{
	return c->o->sample_hz > 0 || c->o->sample_events_hz > 0;
}

static const char *sampling_leaf_of(void *ctx, const struct sample_key *k, const char **module)
{
	return sampling_leaf(ctx, k, module);
}

static int sampling_load_op(struct run_ctx *c, char *err, size_t errlen)
{
	struct sampling_cfg cfg = { .hz = c->o->sample_hz, .max_rows = c->o->max_sample_stacks,
				    .pmu = c->prep->host.pmu, .spin = c->o->per_call ? &c->percall.spin : NULL,
				    .events_hz = c->o->sample_events_hz, .evs = &c->prep->evs,
				    .profile = c->o->pprof_path != NULL,
				    .percall = c->o->per_call && c->o->sample_hz > 0,
				    .thread_est_fd = c->use_tasks ? tasks_thread_est_fd(&c->tasks) : -1 };

	c->rep.samples_live = &c->samp.live;
	if (sampling_load(&c->samp, &c->spine, &cfg, err, errlen))
		return RUN_FAILED;
	/* --per-call: the iterations' top functions (percall loaded before) */
	if (cfg.percall && percall_samples_open(&c->percall, sampling_percall_fd(&c->samp), sampling_leaf_of, &c->samp,
						err, errlen))
		return RUN_FAILED;
	return RUN_OK;
}

static int sampling_attach_op(struct run_ctx *c, char *err, size_t errlen)
{
	int pids[TARGET_MAX_IDS + 1];

	if (sampling_attach(&c->samp, err, errlen))
		return RUN_FAILED;
	sampling_watch_mappings(&c->samp, pids, c->o->system_wide ? 0 : watched_pids(c, pids));
	return RUN_OK;
}

static void sampling_poll_op(struct run_ctx *c, int timeout_ms)
{
	sampling_poll(&c->samp);
}

static void sampling_interval(struct run_ctx *c)
{
	sampling_snapshot(&c->samp, &c->prep->evs);	/* the live view's rep.samples_live */
}

static void sampling_tick_op(struct run_ctx *c, unsigned long long now)
{
	sampling_tick(&c->samp, now);
}

static void sampling_detach_op(struct run_ctx *c)
{
	sampling_detach(&c->samp);	/* before the spine, like uprobes: samples fold through its maps */
}

static int sampling_finish(struct run_ctx *c, char *err, size_t errlen)
{
	struct thread_stats sum;

	thread_table_total(&c->tt, &sum);
	if (sampling_collect(&c->samp, &c->prep->evs, &c->rep.self, sum.oncpu_ns) == 0)
		c->rep.samples = &c->samp.res;
	return RUN_OK;
}

static void sampling_free_op(struct run_ctx *c)
{
	sampling_free(&c->samp);
}

static const struct collector sampling_collector = {
	.name = "sampling", .wanted = sampling_wanted, .load = sampling_load_op, .attach = sampling_attach_op,
	.poll = sampling_poll_op, .interval = sampling_interval, .tick = sampling_tick_op, .detach = sampling_detach_op,
	.finish = sampling_finish, .free = sampling_free_op,
};

/* ---- --mem-samples (memsamples.c) ---- */

static bool mem_wanted(const struct run_ctx *c)
{
	return c->o->mem_source != NULL;
}

/* Choose the event (where the PMU lacks one, say so and carry on without) and load. */
static int mem_load(struct run_ctx *c, char *err, size_t errlen)
{
	struct mem_event ev;
	char why[256];

	if (!strcmp(c->o->mem_source, "pmu") && !c->prep->host.pmu) {
		warn_add("--mem-samples: no precise memory sampling here (%s); skipped (fix: bare metal or a VM whose "
			 "vPMU exposes PEBS/IBS; --mem-samples=page-faults samples page-fault addresses)",
			 c->prep->host.pmu_why);
		return RUN_OK;
	}
	if (mem_event_choose(c->o->mem_source, c->prep->cpu, true, &ev, why, sizeof(why))) {
		warn_add("--mem-samples: %s; skipped", why);
		return RUN_OK;
	}
	return memsamples_load(&c->mem, &ev, &c->spine, err, errlen) ? RUN_FAILED : RUN_OK;
}

/* An address-carrying event the PMU refuses leaves the rest of the run going; page faults cannot fail so. */
static int mem_attach(struct run_ctx *c, char *err, size_t errlen)
{
	char why[512];

	if (!c->mem.loaded || !memsamples_attach(&c->mem, why, sizeof(why)))
		return RUN_OK;
	if (!strcmp(c->mem.ev.source, "page-faults")) {
		err_set(err, errlen, "--mem-samples=page-faults: %s", why);
		return RUN_FAILED;
	}
	warn_add("--mem-samples: %s; memory samples skipped, the rest of the run goes on", why);
	memsamples_free(&c->mem);
	return RUN_OK;
}

static void mem_poll(struct run_ctx *c, int timeout_ms)
{
	if (c->mem.loaded)
		memsamples_poll(&c->mem);
}

static void mem_detach(struct run_ctx *c)
{
	if (c->mem.loaded)
		memsamples_detach(&c->mem);
}

static int mem_finish(struct run_ctx *c, char *err, size_t errlen)
{
	if (c->mem.loaded && memsamples_collect(&c->mem) == 0)
		c->rep.mem = &c->mem.res;
	return RUN_OK;
}

static void mem_free(struct run_ctx *c)
{
	memsamples_free(&c->mem);
}

static const struct collector mem_collector = {
	.name = "memsamples", .wanted = mem_wanted, .load = mem_load, .attach = mem_attach, .poll = mem_poll,
	.detach = mem_detach, .finish = mem_finish, .free = mem_free,
};

/* ---- --offcpu-stacks (offcpu.c) ---- */

static bool offcpu_wanted(const struct run_ctx *c)
{
	return c->o->offcpu_stacks;
}

static int offcpu_load_op(struct run_ctx *c, char *err, size_t errlen)
{
	return offcpu_load(&c->off, &c->spine, c->o->max_sample_stacks, err, errlen) ? RUN_FAILED : RUN_OK;
}

static int offcpu_attach_op(struct run_ctx *c, char *err, size_t errlen)
{
	return offcpu_attach(&c->off, err, errlen) ? RUN_FAILED : RUN_OK;
}

static void offcpu_poll_op(struct run_ctx *c, int timeout_ms)
{
	offcpu_poll(&c->off);
}

static void offcpu_detach_op(struct run_ctx *c)
{
	offcpu_detach(&c->off);
}

/* Its folded lines join the samples' when --sample is on. */
static int offcpu_finish(struct run_ctx *c, char *err, size_t errlen)
{
	if (offcpu_collect(&c->off, c->samp.loaded ? &c->samp.folded : &c->off_folded) == 0)
		c->rep.offcpu = &c->off.res;
	return RUN_OK;
}

static void offcpu_free_op(struct run_ctx *c)
{
	offcpu_free(&c->off);
	folded_free(&c->off_folded);
}

static const struct collector offcpu_collector = {
	.name = "offcpu", .wanted = offcpu_wanted, .load = offcpu_load_op, .attach = offcpu_attach_op,
	.poll = offcpu_poll_op, .detach = offcpu_detach_op, .finish = offcpu_finish, .free = offcpu_free_op,
};

/* Detached in reverse: off-CPU, memory samples, sampling, uprobes, then the spine (the others
 * fold through its maps). */
const struct collector *const run_collectors[] = {
	&spine_collector, &tasks_collector, &uprobes_collector, &roofline_collector, &percall_collector,
	&trace_collector, &sampling_collector, &mem_collector, &offcpu_collector,
};
const int run_ncollectors = sizeof(run_collectors) / sizeof(run_collectors[0]);
