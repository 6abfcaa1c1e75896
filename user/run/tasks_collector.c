// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Task accounting's collector: thread sums from the task iterator and thread exits
 * (collect/tasks_loader.c), nothing at context switches. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "collect/task_acct.h"
#include "collect/tasks_loader.h"
#include "collect/threads_loader.h"
#include "lib/warn.h"
#include "run/tasks_collector.h"

struct tasks {
	struct tasks_prog prog;
	bool loaded;
	bool final;		/* the last iteration is in the table (at detach) */
};

static const struct event_list no_events;

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

static bool tasks_wanted(const struct run_ctx *c)
{
	return c->acct.use_tasks;
}

static int tasks_init(struct run_ctx *c, void **self, char *err, size_t errlen)
{
	if (!(*self = calloc(1, sizeof(struct tasks)))) {
		err_set(err, errlen, "out of memory");
		return RUN_FAILED;
	}
	return RUN_OK;
}

static void on_exit_record(void *ctx, const struct thread_stats *s)
{
	run_thread_exited(ctx, s);
}

static int tasks_load_op(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct tasks *t = self;
	enum tasks_counts counts = c->acct.tasks_counts;
	int bad = counts == TASKS_KERNEL_COUNTS ? task_acct_underivable(&c->prep->evs) : -1;
	struct threads_prog *spine = c->links.spine;	/* the CLI's filter-only spine; none in the daemon */
	struct tasks_est est = { .pids_fd = spine ? threads_pids_fd(spine) : -1,
				 .filter = spine ? spine->acfg.filter : 0, .main_id = spine ? spine->acfg.main_id : 0 };

	if (bad >= 0) {
		err_set(err, errlen, "event '%s' is not a per-thread kernel count (derivable: %s)",
			c->prep->evs.ev[bad].name, task_acct_derivable());
		return RUN_BAD_INPUT;
	}
	if (!spine)
		thread_table_init(&c->tt, c->prep->evs.n);
	t->loaded = true;
	if (tasks_load(&t->prog, counts == TASKS_NO_COUNTS ? &no_events : &c->prep->evs,
		       counts == TASKS_ESTIMATES ? &est : NULL, c->o->max_threads, on_exit_record, c, err, errlen))
		return RUN_FAILED;
	c->links.thread_est_fd = counts == TASKS_ESTIMATES ? tasks_thread_est_fd(&t->prog) : -1;
	if (!t->prog.run_stats && !spine)	/* the CLI's spine said it */
		warn_add("kernel BPF run-time stats unavailable (%s); tmabpf's own cost is not reported "
			 "(needs CAP_SYS_ADMIN, or sysctl kernel.bpf_stats_enabled=1)", strerror(errno));
	if (!t->prog.run_delay)
		warn_add("runqueue wait unavailable: kernel without CONFIG_SCHED_INFO (no /proc/PID/schedstat); "
			 "runqueue time reads 0 and counts as blocked");
	return RUN_OK;
}

static int tasks_attach_op(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct tasks *t = self;
	int r;

	if (tasks_attach(&t->prog, err, errlen))
		return RUN_FAILED;
	if (c->acct.tasks_counts == TASKS_ESTIMATES && (r = tasks_seed(&t->prog))) {	/* before the sampler attaches */
		err_set(err, errlen, "creating the targets' estimate storage (task iterator): %s", strerror(-r));
		return RUN_FAILED;
	}
	return RUN_OK;
}

static void tasks_poll_op(struct run_ctx *c, void *self, int timeout_ms)
{
	tasks_poll(&((struct tasks *)self)->prog, timeout_ms);
}

/* One iteration: the filter's threads into the table. */
static void tasks_iterate(struct run_ctx *c, struct tasks *t)
{
	struct thread_stats *live = NULL;
	size_t n = 0;

	if (tasks_read(&t->prog, &live, &n) == 0)
		thread_table_set_live(&c->tt, live, n);
}

static void tasks_start(struct run_ctx *c, void *self)
{
	if (!c->acct.bounded)	/* the CLI: threads older than the run count from here */
		tasks_iterate(c, self);
}

/* The threads up to now, until the last iteration; the programs' own stats, beside the
 * filter-only spine's (the CLI) or alone (the daemon). */
static void tasks_read_op(struct run_ctx *c, void *self)
{
	struct tasks *t = self;
	struct self_stats s;

	tasks_poll(&t->prog, 0);	/* exits up to now: a thread's samples then find it */
	if (!t->final)
		tasks_iterate(c, t);
	tasks_self_stats(&t->prog, &s);
	if (!c->links.spine) {
		c->rep.self = s;
		return;
	}
	c->rep.self.bpf_run_ns += s.bpf_run_ns;
	c->rep.self.bpf_run_cnt += s.bpf_run_cnt;
	c->rep.self.stat[STAT_EXIT_DROPS] += s.stat[STAT_EXIT_DROPS];
	c->rep.self.stat[STAT_THREADS_FULL] += s.stat[STAT_THREADS_FULL];
	c->rep.self.threads_in_map = s.threads_in_map;
	c->rep.self.max_threads = s.max_threads;
}

/* The CLI's accounting ends with one last iteration, the running slices folded (the daemon's
 * report is its last refresh). */
static void tasks_detach_op(struct run_ctx *c, void *self)
{
	struct tasks *t = self;

	if (!c->acct.bounded) {
		run_accounting_stop(c, c->prep->host.ncpus);
		tasks_flush(&t->prog, 200);	/* threads that exited: final, not held as live */
		tasks_iterate(c, t);
		t->final = true;
	}
	tasks_detach(&t->prog);
}

static void tasks_free_op(struct run_ctx *c, void *self)
{
	struct tasks *t = self;

	if (t->loaded)
		tasks_destroy(&t->prog);
	c->links.thread_est_fd = -1;
	free(t);
}

const struct collector tasks_collector = {
	.name = "tasks", .wanted = tasks_wanted, .init = tasks_init, .load = tasks_load_op, .attach = tasks_attach_op,
	.start = tasks_start, .poll = tasks_poll_op, .read = tasks_read_op, .detach = tasks_detach_op,
	.free = tasks_free_op,
};
