// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "task_acct.h"

struct task_seen {
	uint64_t start_ns;
	struct task_rec base;	/* counts at the start of accounting (zeros for threads born after t0) */
	uint64_t blocked;	/* blocked ns last given: the value never goes down */
	unsigned int gen;
};

static const struct {
	__u64 config;
	enum task_field f;
} sw_fields[] = {
	{ PERF_COUNT_SW_TASK_CLOCK, TF_EXEC },
	{ PERF_COUNT_SW_PAGE_FAULTS, TF_FAULTS },
	{ PERF_COUNT_SW_PAGE_FAULTS_MIN, TF_MIN_FLT },
	{ PERF_COUNT_SW_PAGE_FAULTS_MAJ, TF_MAJ_FLT },
	{ PERF_COUNT_SW_CONTEXT_SWITCHES, TF_SWITCHES },
	{ PERF_COUNT_SW_CPU_MIGRATIONS, TF_MIGRATIONS },
};

enum task_field task_acct_event_field(const struct event_desc *d)
{
	const struct perf_event_attr *a = &d->attr;

	/* a modifier (:u, :k) splits what the task_struct counts as one */
	if (a->type != PERF_TYPE_SOFTWARE || a->exclude_user || a->exclude_kernel || a->exclude_hv ||
	    a->exclude_idle || a->config1 || a->config2)
		return TF_NONE;
	for (size_t i = 0; i < sizeof(sw_fields) / sizeof(sw_fields[0]); i++)
		if (sw_fields[i].config == a->config)
			return sw_fields[i].f;
	return TF_NONE;
}

const char *task_acct_derivable(void)
{
	return "task-clock, page-faults, minor-faults, major-faults, context-switches, cpu-migrations";
}

int task_acct_init(struct task_acct *a, const struct event_list *evs, size_t max_threads, char *err, size_t errlen)
{
	memset(a, 0, sizeof(*a));
	a->nr_events = evs->n;
	a->max_threads = max_threads;
	for (int e = 0; e < evs->n; e++) {
		a->field[e] = task_acct_event_field(&evs->ev[e]);
		if (a->field[e] == TF_NONE) {
			snprintf(err, errlen, "event '%s' is not a per-thread kernel count (derivable: %s)", evs->ev[e].name,
				 task_acct_derivable());
			return -EINVAL;
		}
	}
	return 0;
}

void task_acct_free(struct task_acct *a)
{
	for (size_t i = 0; i < a->seen.cap; i++)
		free(a->seen.vals[i]);
	u64map_free(&a->seen);
}

void task_acct_begin(struct task_acct *a, uint64_t now)
{
	uint64_t *gone = NULL;
	size_t n = 0;

	if (!a->t0)
		a->t0 = now;
	if (a->gen && a->seen.n && (gone = malloc(a->seen.n * sizeof(*gone)))) {
		for (size_t i = 0; i < a->seen.cap; i++) {
			struct task_seen *s = a->seen.vals[i];

			if (s && s->gen != a->gen)
				gone[n++] = a->seen.keys[i];
		}
		for (size_t i = 0; i < n; i++)	/* collect first: deleting rehashes */
			free(u64map_del(&a->seen, gone[i]));
		free(gone);
	}
	a->gen++;
}

static uint64_t field(const struct task_rec *r, enum task_field f)
{
	switch (f) {
	case TF_EXEC: return r->exec_ns;
	case TF_FAULTS: return r->min_flt + r->maj_flt;
	case TF_MIN_FLT: return r->min_flt;
	case TF_MAJ_FLT: return r->maj_flt;
	case TF_SWITCHES: return r->nvcsw + r->nivcsw;
	case TF_MIGRATIONS: return r->nr_migrations;
	default: return 0;
	}
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* Sums since base (NULL: since birth); blocked kept >= *blocked. */
static void convert(const struct task_acct *a, const struct task_rec *r, const struct task_rec *base,
		    uint64_t *blocked, struct thread_stats *out)
{
	static const struct task_rec zero;
	uint64_t life, busy;

	if (!base)
		base = &zero;
	memset(out, 0, sizeof(*out));
	out->pid = r->pid;
	out->tid = r->tid;
	memcpy(out->comm, r->comm, sizeof(out->comm));
	out->cgroup_id = r->cgroup_id;
	out->first_seen_ns = r->start_ns;
	out->oncpu_ns = sub0(r->exec_ns, base->exec_ns);
	out->offcpu_runqueue_ns = sub0(r->run_delay_ns, base->run_delay_ns);
	out->switches_voluntary = sub0(r->nvcsw, base->nvcsw);
	out->switches_involuntary = sub0(r->nivcsw, base->nivcsw);
	out->migrations = sub0(r->nr_migrations, base->nr_migrations);
	life = sub0(r->now_ns, base == &zero ? r->start_ns : base->now_ns);
	busy = out->oncpu_ns + out->offcpu_runqueue_ns;
	out->offcpu_blocked_ns = sub0(life, busy);
	if (blocked) {
		if (out->offcpu_blocked_ns < *blocked)
			out->offcpu_blocked_ns = *blocked;
		*blocked = out->offcpu_blocked_ns;
	}
	for (int e = 0; e < a->nr_events; e++) {
		out->c[e].value = sub0(field(r, a->field[e]), field(base, a->field[e]));
		out->c[e].enabled = out->c[e].running = out->oncpu_ns;	/* counted whenever it ran: no scaling */
	}
	if (r->exited) {
		out->exited = 1;
		out->exit_ns = r->now_ns;
	}
}

int task_acct_live(struct task_acct *a, const struct task_rec *r, struct thread_stats *out)
{
	struct task_seen *s = u64map_get(&a->seen, r->tid);

	if (s && s->start_ns != r->start_ns) {	/* tid reused: the old thread's exit was drained */
		free(u64map_del(&a->seen, r->tid));
		s = NULL;
	}
	if (!s) {
		if (a->seen.n >= a->max_threads || !(s = calloc(1, sizeof(*s)))) {
			a->over_cap++;
			return -1;
		}
		s->start_ns = r->start_ns;
		if (r->start_ns < a->t0)
			s->base = *r;	/* older than accounting: counts from now */
		if (u64map_put(&a->seen, r->tid, s)) {
			free(s);
			a->over_cap++;
			return -1;
		}
	}
	s->gen = a->gen;
	convert(a, r, r->start_ns < a->t0 ? &s->base : NULL, &s->blocked, out);
	return 0;
}

int task_acct_exit(struct task_acct *a, const struct task_rec *r, struct thread_stats *out)
{
	struct task_seen *s = u64map_get(&a->seen, r->tid);

	if (s && s->start_ns != r->start_ns)
		s = NULL;	/* not this thread's (cannot happen: tids are reused only after the exit) */
	if (!s && (!a->t0 || r->start_ns < a->t0)) {
		a->unknown_exits++;	/* older than accounting and never seen: no base to count from */
		return -1;
	}
	convert(a, r, s && r->start_ns < a->t0 ? &s->base : NULL, s ? &s->blocked : NULL, out);
	if (s)
		free(u64map_del(&a->seen, r->tid));
	return 0;
}
