// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collect/task_acct.h"
#include "lib/warn.h"

struct task_seen {
	uint64_t start_ns;
	struct task_rec base;	/* counts at the start of accounting (zeros for threads born after t0) */
	struct task_rec exit;	/* the exit record, while held (exiting) */
	uint64_t blocked;	/* blocked ns last given: the value never goes down */
	unsigned int gen;	/* last iteration that showed it (or held it) */
	unsigned int exit_gen;	/* iteration in which its exit record came */
	bool exiting;		/* exit record held: shown as live until its final record */
	bool done;		/* final sums given (held too long, or flushed): a late final record is ignored */
	bool final_seen;	/* its final record came: kept as a tombstone until the next iteration
				 * begins, so that the records of an iteration read before it cannot
				 * bring the thread back as live */
	struct counter_val *est;	/* estimated: the base's estimates (nr_events), then the held exit
					 * record's (nr_events); NULL otherwise */
};

static void seen_free(struct task_seen *s)
{
	if (s)
		free(s->est);
	free(s);
}

/* The estimates of record r (the task_rec of a struct task_rec_est), or NULL when not estimated. */
static const struct counter_val *rec_est(const struct task_acct *a, const struct task_rec *r)
{
	return a->estimated ? ((const struct task_rec_est *)r)->est : NULL;
}

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

int task_acct_underivable(const struct event_list *evs)
{
	for (int e = 0; e < evs->n; e++)
		if (task_acct_event_field(&evs->ev[e]) == TF_NONE)
			return e;
	return -1;
}

int task_acct_init(struct task_acct *a, const struct event_list *evs, bool estimated, size_t max_threads, char *err,
		   size_t errlen)
{
	int bad = estimated ? -1 : task_acct_underivable(evs);

	memset(a, 0, sizeof(*a));
	a->estimated = estimated;
	if (bad >= 0) {
		err_set(err, errlen, "event '%s' is not a per-thread kernel count (derivable: %s)", evs->ev[bad].name,
			task_acct_derivable());
		return -EINVAL;
	}
	a->nr_events = evs->n;
	a->max_threads = max_threads;
	for (int e = 0; e < evs->n; e++)
		a->field[e] = task_acct_event_field(&evs->ev[e]);
	return 0;
}

void task_acct_free(struct task_acct *a)
{
	for (size_t i = 0; i < a->seen.cap; i++)
		seen_free(a->seen.vals[i]);
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

			if (!s)
				continue;
			if (s->final_seen ||
			    (s->done ? a->gen - s->exit_gen >= TASK_ACCT_DONE_ITERS : !s->exiting && s->gen != a->gen))
				gone[n++] = a->seen.keys[i];
		}
		for (size_t i = 0; i < n; i++)	/* collect first: deleting rehashes */
			seen_free(u64map_del(&a->seen, gone[i]));
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

/* Sums since base (NULL: since birth); blocked kept >= *blocked.  Estimated: est, r's estimates,
 * less base_est, the base's (NULL: zeros). */
static void convert(const struct task_acct *a, const struct task_rec *r, const struct counter_val *est,
		    const struct task_rec *base, const struct counter_val *base_est, uint64_t *blocked,
		    struct thread_stats *out)
{
	static const struct task_rec zero;
	static const struct counter_val zero_est[TMABPF_MAX_EVENTS];
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
		if (a->estimated) {	/* the sampled periods, scaled as the samples were */
			const struct counter_val *b = base_est ? &base_est[e] : &zero_est[e];

			out->c[e].value = est ? sub0(est[e].value, b->value) : 0;
			out->c[e].enabled = est ? sub0(est[e].enabled, b->enabled) : 0;
			out->c[e].running = est ? sub0(est[e].running, b->running) : 0;
			continue;
		}
		out->c[e].value = sub0(field(r, a->field[e]), field(base, a->field[e]));
		out->c[e].enabled = out->c[e].running = out->oncpu_ns;	/* counted whenever it ran: no scaling */
	}
	if (r->exited) {
		out->exited = 1;
		out->exit_ns = r->now_ns;
	}
}

/* The thread's state, created when there is room; NULL for an older thread's
 * record (dropped) or when full. */
static struct task_seen *seen_get(struct task_acct *a, const struct task_rec *r, bool create)
{
	struct task_seen *s = u64map_get(&a->seen, r->tid);

	if (s && s->start_ns != r->start_ns) {	/* tid reused: the old thread is gone */
		a->held -= s->exiting;
		seen_free(u64map_del(&a->seen, r->tid));
		s = NULL;
	}
	if (s || !create)
		return s;
	if (a->seen.n >= a->max_threads || !(s = calloc(1, sizeof(*s))))
		return NULL;
	if (a->estimated && !(s->est = calloc(2 * (size_t)a->nr_events + 1, sizeof(*s->est)))) {
		free(s);
		return NULL;
	}
	s->start_ns = r->start_ns;
	if (r->start_ns < a->t0) {	/* older than accounting: counts from now */
		s->base = *r;
		if (s->est)
			memcpy(s->est, rec_est(a, r), a->nr_events * sizeof(*s->est));
	}
	if (u64map_put(&a->seen, r->tid, s)) {
		seen_free(s);
		return NULL;
	}
	return s;
}

static const struct task_rec *base_of(const struct task_acct *a, const struct task_seen *s, const struct task_rec *r)
{
	return s && r->start_ns < a->t0 ? &s->base : NULL;
}

int task_acct_live(struct task_acct *a, const struct task_rec *r, struct thread_stats *out)
{
	struct task_seen *s = seen_get(a, r, true);

	if (!s) {
		a->over_cap++;
		return -1;
	}
	s->gen = a->gen;
	if (s->exiting || s->done)
		return -1;	/* read between its exit record and exit_notify(): the held record stands */
	convert(a, r, rec_est(a, r), base_of(a, s, r), s->est, &s->blocked, out);
	return 0;
}

/* The held exit record's estimates. */
static const struct counter_val *exit_est(const struct task_acct *a, const struct task_seen *s)
{
	return s && s->est ? s->est + a->nr_events : NULL;
}

/* Final sums from the exit record e and the final record f (NULL: none), with their estimates:
 * f's counts, e's time plus what ran after it. */
static void final_sums(struct task_acct *a, struct task_seen *s, const struct task_rec *e,
		       const struct counter_val *e_est, const struct task_rec *f, const struct counter_val *f_est,
		       struct thread_stats *out)
{
	struct task_rec m = f ? *f : *e;

	if (f && e) {
		m.now_ns = e->now_ns + (f->exec_ns > e->exec_ns ? f->exec_ns - e->exec_ns : 0);
		memcpy(m.comm, e->comm, sizeof(m.comm));
		m.cgroup_id = e->cgroup_id;
	}
	m.exited = 1;
	convert(a, &m, f ? f_est : e_est, base_of(a, s, &m), s ? s->est : NULL, s ? &s->blocked : NULL, out);
}

int task_acct_exit(struct task_acct *a, const struct task_rec *r, struct thread_stats *out)
{
	bool final = r->exited == TASK_REC_FINAL;
	struct task_seen *s = seen_get(a, r, false);

	if (!s && r->start_ns < a->t0) {
		a->unknown_exits += final;	/* older than accounting and never seen: no base to count from */
		return -1;
	}
	if (s && s->done) {
		if (final && !s->final_seen)
			seen_free(u64map_del(&a->seen, r->tid));	/* the late final record: it is all over */
		return -1;
	}
	if (!final) {
		if (!s && !(s = seen_get(a, r, true)))
			return -1;	/* full: its final record counts it from birth */
		if (!s->exiting) {
			s->exit = *r;
			if (s->est)
				memcpy(s->est + a->nr_events, rec_est(a, r), a->nr_events * sizeof(*s->est));
			s->exiting = true;
			s->exit_gen = a->gen;
			a->held++;
		}
		return -1;
	}
	final_sums(a, s, s && s->exiting ? &s->exit : NULL, s && s->exiting ? exit_est(a, s) : NULL, r, rec_est(a, r),
		   out);
	if (s) {	/* a tombstone until the next iteration begins (task_acct_begin) */
		a->held -= s->exiting;
		s->exiting = false;
		s->done = s->final_seen = true;
		s->exit_gen = a->gen;
	}
	return 0;
}

size_t task_acct_held(struct task_acct *a, struct thread_stats *out, size_t cap,
		      void (*final)(void *ctx, const struct thread_stats *s), void *ctx)
{
	size_t k = 0;

	for (size_t i = 0; i < a->seen.cap && a->held; i++) {
		struct task_seen *s = a->seen.vals[i];

		if (!s || !s->exiting)
			continue;
		if (a->gen - s->exit_gen >= TASK_ACCT_HOLD_ITERS || k >= cap) {
			struct thread_stats f;

			final_sums(a, s, &s->exit, exit_est(a, s), NULL, NULL, &f);	/* no final record in time: the exit's */
			s->exiting = false;
			s->done = true;
			a->held--;
			a->finals_late++;
			if (final)
				final(ctx, &f);
			continue;
		}
		s->gen = a->gen;
		convert(a, &s->exit, exit_est(a, s), base_of(a, s, &s->exit), s->est, &s->blocked, &out[k]);
		out[k].exited = 0;	/* live as far as the aggregation knows, until the final record */
		out[k].exit_ns = 0;
		k++;
	}
	return k;
}

void task_acct_flush(struct task_acct *a, void (*final)(void *ctx, const struct thread_stats *s), void *ctx)
{
	for (size_t i = 0; i < a->seen.cap && a->held; i++) {
		struct task_seen *s = a->seen.vals[i];
		struct thread_stats f;

		if (!s || !s->exiting)
			continue;
		final_sums(a, s, &s->exit, exit_est(a, s), NULL, NULL, &f);
		s->exiting = false;
		s->done = true;
		a->held--;
		if (final)
			final(ctx, &f);
	}
}
