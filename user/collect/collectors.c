// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The drivers that walk a run's table of collectors, and what the collectors share.  See collector.h. */
#include <string.h>
#include "collect/target_edges.h"
#include "lib/clock.h"
#include "lib/warn.h"
#include "collect/collector.h"

/* The state of an entry that runs and keeps none of its own. */
static char stateless;

void run_ctx_init(struct run_ctx *c, const struct options *o, struct run_prep *p, const struct collector *const *t,
		  int n)
{
	*c = (struct run_ctx){ .o = o, .prep = p, .table = t, .n = n < COLLECTORS_MAX ? n : COLLECTORS_MAX };
	c->links.thread_est_fd = c->links.percall_samples_fd = -1;
}

#define EACH(op, ...)								\
	for (int i = 0; i < c->n; i++)						\
		if (c->self[i] && c->table[i]->op)				\
			c->table[i]->op(c, c->self[i], ##__VA_ARGS__)

#define EACH_REVERSE(op)							\
	for (int i = c->n - 1; i >= 0; i--)					\
		if (c->self[i] && c->table[i]->op)				\
			c->table[i]->op(c, c->self[i])

/* op of every entry that runs, stopping at the first failure (said in one line). */
#define EACH_CHECKED(op)							\
	do {									\
		char err[1024];							\
		for (int i = 0; i < c->n; i++) {				\
			int r;							\
			if (c->self[i] && c->table[i]->op &&			\
			    (r = c->table[i]->op(c, c->self[i], err, sizeof(err)))) { \
				err_print("%s", err);				\
				return r;					\
			}							\
		}								\
		return RUN_OK;							\
	} while (0)

enum run_status collectors_init(struct run_ctx *c)
{
	char err[1024];

	for (int i = 0; i < c->n; i++) {
		const struct collector *k = c->table[i];
		int r;

		if (c->self[i] || (k->wanted && !k->wanted(c)))
			continue;
		if (!k->init) {
			c->self[i] = &stateless;
		} else if ((r = k->init(c, &c->self[i], err, sizeof(err)))) {
			err_print("%s", err);
			return r;
		}
	}
	return RUN_OK;
}

void collectors_preview(struct run_ctx *c, FILE *f)
{
	EACH(preview, f);
}

enum run_status collectors_load(struct run_ctx *c)
{
	EACH_CHECKED(load);
}

enum run_status collectors_attach(struct run_ctx *c)
{
	EACH_CHECKED(attach);
}

void collectors_start(struct run_ctx *c)
{
	EACH(start);
}

int collectors_poll_ms(struct run_ctx *c, int dflt_ms)
{
	int ms = dflt_ms;

	for (int i = 0; i < c->n; i++)
		if (c->self[i] && c->table[i]->poll_ms)
			ms = c->table[i]->poll_ms(c, c->self[i], ms);
	return ms;
}

void collectors_poll(struct run_ctx *c, int timeout_ms)
{
	EACH(poll, timeout_ms);
}

void collectors_read(struct run_ctx *c)
{
	EACH(read);
}

void collectors_interval(struct run_ctx *c)
{
	EACH(interval);
}

void collectors_tick(struct run_ctx *c, unsigned long long now_ns)
{
	EACH(tick, now_ns);
}

void collectors_exited(struct run_ctx *c, const struct thread_stats *s)
{
	EACH(exited, s);
}

enum run_status collectors_finish(struct run_ctx *c)
{
	int rc = RUN_OK;
	char err[1024];

	for (int i = 0; i < c->n; i++) {	/* every one finishes: a failed one does not lose the others' results */
		int r;

		if (c->self[i] && c->table[i]->finish && (r = c->table[i]->finish(c, c->self[i], err, sizeof(err)))) {
			err_print("%s", err);
			rc = rc ? rc : r;
		}
	}
	return rc;
}

void collectors_detach(struct run_ctx *c)
{
	EACH_REVERSE(detach);
}

void collectors_free(struct run_ctx *c)
{
	EACH_REVERSE(free);
	memset(c->self, 0, sizeof(c->self));
}

void run_thread_exited(struct run_ctx *c, const struct thread_stats *s)
{
	if (!c->acct.bounded && thread_table_add_exited(&c->tt, s))	/* the daemon aggregates its own */
		warn_add("out of memory keeping an exited thread's sums");
	collectors_exited(c, s);
}

void run_refresh(struct run_ctx *c)
{
	collectors_read(c);
	c->rep.mono_ns = c->stop_ns ? c->stop_ns : mono_ns();
	c->rep.duration_ns = c->rep.mono_ns - c->t0;
}

void run_accounting_stop(struct run_ctx *c, int ncpus)
{
	edges_switch_every_cpu(ncpus);
	c->stop_ns = mono_ns();
}
