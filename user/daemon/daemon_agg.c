// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collect/uprobes_loader.h"
#include "daemon/daemon_agg.h"
#include "lib/grow.h"
#include "model/thread_table.h"

#define SCORE_DECAY 0.5		/* weight of the past in the on-CPU score */
#define STEAL_FACTOR 2.0	/* a candidate takes a slot from one this many times less busy */

int daemon_agg_init(struct agg *a, const struct agg_cfg *cfg)
{
	memset(a, 0, sizeof(*a));
	a->cfg = *cfg;
	a->names.mnt_fd = -1;
	snprintf(a->overflow.label, sizeof(a->overflow.label), "[other]");
	if (cfg->resolve_cgroups)
		return cgroup_names_init(&a->names, 4096);
	return 0;
}

static void free_all(struct u64map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->vals[i]);
	u64map_free(m);
}

void daemon_agg_free(struct agg *a)
{
	free_all(&a->threads);
	free_all(&a->procs);
	free_all(&a->cgroups);
	cgroup_names_free(&a->names);
	free(a->exited_tids);
	memset(a, 0, sizeof(*a));
}

const char *daemon_agg_cgroup_label(const struct agg_proc *p)
{
	return p->cg ? p->cg->label : "";
}

/* The record holding label, if any. */
static struct agg_cgroup *cgroup_by_label(const struct agg *a, const char *label)
{
	for (size_t i = 0; i < a->cgroups.cap; i++) {
		struct agg_cgroup *c = a->cgroups.vals[i];

		if (c && !strcmp(c->label, label))
			return c;
	}
	return NULL;
}

static struct agg_cgroup *cgroup_get(struct agg *a, uint64_t id)
{
	struct agg_cgroup *c = u64map_get(&a->cgroups, id), *old;
	const char *path;
	char label[sizeof(c->label)] = "";

	if (c)
		return c;
	path = a->cfg.resolve_cgroups ? cgroup_names_get(&a->names, id) : NULL;
	if (path)
		snprintf(label, sizeof(label), "%s", path);
	else if (id)
		snprintf(label, sizeof(label), "cgroup-id:%llu", (unsigned long long)id);
	/* A cgroup made again at the same path (a restarted service) has a new id: it takes the old
	 * one's record, whose series go on.  Two records of one label would export every series of
	 * it twice, and Prometheus rejects a scrape with a duplicate series whole. */
	if ((old = cgroup_by_label(a, label)) && !u64map_put(&a->cgroups, id, old)) {
		u64map_del(&a->cgroups, old->id);
		old->id = id;
		return old;
	}
	if ((int)a->cgroups.n >= a->cfg.max_cgroups || !(c = calloc(1, sizeof(*c))))
		return &a->overflow;
	c->id = id;
	snprintf(c->label, sizeof(c->label), "%s", label);
	if (u64map_put(&a->cgroups, id, c)) {
		free(c);
		return &a->overflow;
	}
	return c;
}

static void proc_set_cgroup(struct agg *a, struct agg_proc *p, uint64_t id)
{
	if (p->cg && p->cgroup_id == id)
		return;
	if (p->cg)
		p->cg->nprocs--;
	p->cgroup_id = id;
	p->cg = cgroup_get(a, id);
	p->cg->nprocs++;
}

/* Reset a record for a new process (first sight, or its pid reused).  A
 * reused pid with the same labels (comm, cgroup) is the same series for
 * Prometheus: it keeps its sums so that it stays monotonic. */
static void proc_reset(struct agg *a, struct agg_proc *p, const struct thread_stats *s)
{
	struct agg_cgroup *cg = p->cg;
	struct agg_sums keep = p->s.total;
	bool same = cg && !memcmp(p->comm, s->comm, sizeof(p->comm)) && p->cgroup_id == s->cgroup_id;

	if (p->exported)
		a->exported_procs--;
	memset(p, 0, sizeof(*p));
	if (same)
		p->s.total = keep;
	p->cg = cg;
	p->pid = s->pid;
	memcpy(p->comm, s->comm, sizeof(p->comm));
	p->comm_main = s->tid == s->pid;
	proc_set_cgroup(a, p, s->cgroup_id);
}

static struct agg_proc *proc_get(struct agg *a, const struct thread_stats *s)
{
	struct agg_proc *p = u64map_get(&a->procs, s->pid);

	if (p) {
		if (p->dead)	/* pid reused */
			proc_reset(a, p, s);
		return p;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (u64map_put(&a->procs, s->pid, p)) {
		free(p);
		return NULL;
	}
	proc_reset(a, p, s);
	return p;
}

/* Labels follow the main thread: its comm, its cgroup. */
static void proc_update_labels(struct agg *a, struct agg_proc *p, const struct thread_stats *s)
{
	if (s->tid == s->pid || !p->comm_main) {
		memcpy(p->comm, s->comm, sizeof(p->comm));
		p->comm_main = s->tid == s->pid;
	}
	if (s->tid == s->pid || !p->cg || p->cg == &a->overflow)
		proc_set_cgroup(a, p, s->cgroup_id);
}

static void add_delta(struct agg *a, struct agg_thread *t, const struct thread_stats *cur)
{
	struct thread_stats d;
	struct agg_proc *p = t->proc;
	int ne = a->cfg.nr_events;

	thread_stats_sub(&d, cur, &t->s, ne);
	t->pend_oncpu_ns += d.oncpu_ns;
	thread_stats_add(&p->pend, &d, ne);
	for (int e = 0; e < ne; e++) {
		double v = counter_scaled(&d.c[e]);

		t->scaled[e] += v;
		p->pend_scaled[e] += v;
	}
	t->s = *cur;
}

static struct agg_thread *thread_new(struct agg *a, const struct thread_stats *s)
{
	struct agg_thread *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->proc = proc_get(a, s);
	if (!t->proc || u64map_put(&a->threads, s->tid, t)) {
		free(t);
		return NULL;
	}
	/* t->s stays zero: the first delta is everything the thread did */
	t->s.pid = s->pid;
	t->s.tid = s->tid;
	t->s.first_seen_ns = s->first_seen_ns;
	t->proc->nthreads++;
	a->threads_new++;
	return t;
}

static void thread_drop(struct agg *a, struct agg_thread *t)
{
	if (!t->exited)
		t->proc->nthreads--;
	if (t->exported)
		a->exported_threads--;
	u64map_del(&a->threads, t->s.tid);
	free(t);
}

/* An older record of this tid that the new one replaces: what it did after its
 * last sighting is lost (evicted from the LRU map, or exit record dropped). */
static struct agg_thread *thread_current(struct agg *a, const struct thread_stats *s)
{
	struct agg_thread *t = u64map_get(&a->threads, s->tid);

	if (t && t->s.first_seen_ns != s->first_seen_ns) {
		if (!t->exited)
			a->threads_lost++;
		thread_drop(a, t);
		t = NULL;
	}
	return t;
}

void daemon_agg_begin(struct agg *a)
{
	a->gen++;
}

void daemon_agg_thread_seen(struct agg *a, const struct thread_stats *s)
{
	struct agg_thread *t;

	if (!s->tid)
		return;
	t = thread_current(a, s);
	if (t && t->exited)
		return;	/* read between its exit record and the map delete */
	if (!t && !(t = thread_new(a, s)))
		return;
	add_delta(a, t, s);
	t->gen = a->gen;
	proc_update_labels(a, t->proc, s);
}

static void note_exited_tid(struct agg *a, uint32_t tid)
{
	uint32_t *n = grow(a->exited_tids, &a->cap_exited_tids, a->n_exited_tids, sizeof(*n), 256);

	if (!n)
		return;
	a->exited_tids = n;
	a->exited_tids[a->n_exited_tids++] = tid;
}

void daemon_agg_thread_exit(struct agg *a, const struct thread_stats *s)
{
	struct agg_thread *t;

	if (!s->tid)
		return;
	t = thread_current(a, s);
	if (t && t->exited)
		return;	/* duplicate */
	if (!t) {
		a->exits_unknown++;	/* lived and died between two snapshots */
		if (!(t = thread_new(a, s)))
			return;
	}
	add_delta(a, t, s);
	proc_update_labels(a, t->proc, s);
	t->exited = true;
	t->proc->nthreads--;
	if (s->tid == s->pid)
		t->proc->main_exited = true;
	a->threads_exited++;
	note_exited_tid(a, s->tid);
}

void daemon_agg_thread_counts(struct agg *a, uint32_t pid, uint32_t tid, const char *comm, const struct counter_val *c,
		       const __u64 *samples)
{
	struct agg_thread *t = u64map_get(&a->threads, tid);
	struct agg_proc *p = t && t->s.pid == pid ? t->proc : u64map_get(&a->procs, pid);
	int ne = a->cfg.nr_events;

	if (!p) {
		struct thread_stats s = { .pid = pid, .tid = tid };

		memcpy(s.comm, comm, sizeof(s.comm));
		if (!(p = proc_get(a, &s)))
			return;
	}
	if (t && t->s.pid != pid)
		t = NULL;
	counters_add(p->pend.c, c, ne);
	for (int e = 0; e < ne; e++) {
		double v = counter_scaled(&c[e]);

		p->pend_scaled[e] += v;
		p->pend_samples[e] += (double)samples[e];
		if (t)
			t->scaled[e] += v;
	}
}

static void series_route(struct agg_series *dst, const struct thread_stats *d, const double *scaled,
			 const double *samples, int ne, unsigned long long now)
{
	dst->total.oncpu_ns += d->oncpu_ns;
	dst->total.blocked_ns += d->offcpu_blocked_ns;
	dst->total.runq_ns += d->offcpu_runqueue_ns;
	dst->total.sw_vol += d->switches_voluntary;
	dst->total.sw_invol += d->switches_involuntary;
	dst->total.migrations += d->migrations;
	for (int e = 0; e < ne; e++) {
		dst->total.counters[e] += scaled[e];
		dst->total.samples[e] += samples[e];
	}
	thread_stats_add(&dst->last, d, ne);
	dst->active_ns = now;
}

static bool pend_empty(const struct agg_proc *p, int ne)
{
	if (p->pend.oncpu_ns || p->pend.offcpu_blocked_ns || p->pend.offcpu_runqueue_ns || p->pend.switches_voluntary ||
	    p->pend.switches_involuntary)
		return false;
	for (int e = 0; e < ne; e++)
		if (p->pend.c[e].value)
			return false;
	return true;
}

static int cmp_score_desc(const void *x, const void *y)
{
	double a = (*(const struct agg_proc *const *)x)->score, b = (*(const struct agg_proc *const *)y)->score;

	return a > b ? -1 : a < b;
}

static int cmp_tscore_desc(const void *x, const void *y)
{
	double a = (*(const struct agg_thread *const *)x)->score, b = (*(const struct agg_thread *const *)y)->score;

	return a > b ? -1 : a < b;
}

/*
 * Give free slots to the busiest candidates; past that, a candidate takes the
 * slot of the least busy holder when it is STEAL_FACTOR times busier.  Holders
 * that may not lose their slot (dead processes lingering) are not in `held`.
 * Generic over processes and threads through the exported flag's offset.
 */
#define ASSIGN_SLOTS(cand, nc, held, nh, limit, count, cmp)						\
	do {												\
		size_t i_ = 0, w_ = (nh);								\
		qsort(cand, nc, sizeof(*(cand)), cmp);							\
		qsort(held, nh, sizeof(*(held)), cmp);	/* weakest last */				\
		for (; i_ < (nc) && (int)(count) < (limit); i_++) {					\
			(cand)[i_]->exported = true;							\
			(count)++;									\
		}											\
		for (; i_ < (nc) && w_ > 0; i_++, w_--) {						\
			if (!((cand)[i_]->score > STEAL_FACTOR * (held)[w_ - 1]->score))		\
				break;									\
			(held)[w_ - 1]->exported = false;						\
			(cand)[i_]->exported = true;							\
		}											\
	} while (0)

static void select_procs(struct agg *a, unsigned long long now, double interval_s)
{
	unsigned long long min_ns = (unsigned long long)(a->cfg.min_share * interval_s * 1e9);

	size_t n = a->procs.n, nc = 0, nh = 0;
	struct agg_proc **cand = calloc(n ? n : 1, sizeof(*cand)), **held = calloc(n ? n : 1, sizeof(*held));

	if (!cand || !held)
		goto out;
	for (size_t i = 0; i < a->procs.cap; i++) {
		struct agg_proc *p = a->procs.vals[i];

		if (!p)
			continue;
		if (p->exported && p->dead && now - p->dead_ns >= a->cfg.expire_ns) {
			p->exported = false;	/* lingered long enough: its series goes */
			a->exported_procs--;
		}
		if (p->exported && !p->dead)
			held[nh++] = p;
		else if (!p->exported && !pend_empty(p, a->cfg.nr_events) && p->pend.oncpu_ns >= min_ns)
			cand[nc++] = p;	/* busy enough: short commands stay in [other], series churn stays low */
	}
	ASSIGN_SLOTS(cand, nc, held, nh, a->cfg.top_procs, a->exported_procs, cmp_score_desc);
	for (size_t i = 0; i < nc; i++)
		if (cand[i]->exported && cand[i]->dead)
			cand[i]->dead_ns = now;	/* linger from when its series appeared */
out:
	free(cand);
	free(held);
}

static void select_threads(struct agg *a)
{
	size_t n = a->threads.n, nc = 0, nh = 0;
	struct agg_thread **cand = calloc(n ? n : 1, sizeof(*cand)), **held = calloc(n ? n : 1, sizeof(*held));

	if (!cand || !held)
		goto out;
	for (size_t i = 0; i < a->threads.cap; i++) {
		struct agg_thread *t = a->threads.vals[i];

		if (!t)
			continue;
		if (t->exported)
			held[nh++] = t;
		else if (t->score > 0)
			cand[nc++] = t;
	}
	ASSIGN_SLOTS(cand, nc, held, nh, a->cfg.top_threads, a->exported_threads, cmp_tscore_desc);
out:
	free(cand);
	free(held);
}

/* Collect keys first: deleting shrinks and rehashes the map. */
static size_t collect(const struct u64map *m, void ***out)
{
	void **v = malloc((m->n ? m->n : 1) * sizeof(*v));
	size_t k = 0;

	*out = v;
	if (!v)
		return 0;
	for (size_t i = 0; i < m->cap; i++)
		if (m->vals[i])
			v[k++] = m->vals[i];
	return k;
}

static void end_threads(struct agg *a, double interval_s)
{
	void **v;
	size_t n = collect(&a->threads, &v);

	for (size_t i = 0; i < n; i++) {
		struct agg_thread *t = v[i];

		if (t->exited) {
			thread_drop(a, t);
			continue;
		}
		if (t->gen != a->gen) {
			a->threads_lost++;	/* gone without an exit record: evicted, or the record was lost */
			thread_drop(a, t);
			continue;
		}
		t->score = SCORE_DECAY * t->score + (1 - SCORE_DECAY) * (t->pend_oncpu_ns / 1e9 / interval_s);
		t->pend_oncpu_ns = 0;
	}
	free(v);
}

static void end_procs(struct agg *a, unsigned long long now, double interval_s)
{
	void **v;
	size_t n = collect(&a->procs, &v);
	int ne = a->cfg.nr_events;

	for (size_t i = 0; i < n; i++) {
		struct agg_proc *p = v[i];

		if (!p->dead && p->main_exited && p->nthreads <= 0) {
			p->dead = true;
			p->dead_ns = now;
			a->procs_exited++;
		}
		p->score = SCORE_DECAY * p->score + (1 - SCORE_DECAY) * (p->pend.oncpu_ns / 1e9 / interval_s);
		if (p->nthreads > 0 || !pend_empty(p, ne))
			p->active_ns = now;
	}
	select_procs(a, now, interval_s);
	for (size_t i = 0; i < n; i++) {
		struct agg_proc *p = v[i];

		if (!pend_empty(p, ne)) {
			series_route(p->exported ? &p->s : &p->cg->other, &p->pend, p->pend_scaled, p->pend_samples, ne,
				     now);
			series_route(&p->cg->all, &p->pend, p->pend_scaled, p->pend_samples, ne, now);
			series_route(&a->host, &p->pend, p->pend_scaled, p->pend_samples, ne, now);
			counters_add(a->counted, p->pend.c, ne);
		}
		memset(&p->pend, 0, sizeof(p->pend));
		memset(p->pend_scaled, 0, sizeof(p->pend_scaled));
		memset(p->pend_samples, 0, sizeof(p->pend_samples));
		/* records with no thread left: dead ones once their series is gone,
		 * idle ones (threads evicted, exits lost) after expire */
		if (p->nthreads <= 0 && !p->exported && (p->dead || now - p->active_ns >= a->cfg.expire_ns)) {
			p->cg->nprocs--;
			u64map_del(&a->procs, p->pid);
			free(p);
		} else if (p->nthreads <= 0 && p->exported && !p->dead && now - p->active_ns >= a->cfg.expire_ns) {
			p->exported = false;	/* idle and threadless: free the slot */
			a->exported_procs--;
		}
	}
	free(v);
}

static void end_cgroups(struct agg *a, unsigned long long now)
{
	void **v;
	size_t n = collect(&a->cgroups, &v);

	for (size_t i = 0; i < n; i++) {
		struct agg_cgroup *c = v[i];

		/* its totals' last increments stay expire_ns too, to be scraped */
		if (c->nprocs <= 0 && now - c->all.active_ns >= a->cfg.expire_ns) {
			u64map_del(&a->cgroups, c->id);
			free(c);
		}
	}
	free(v);
}

/* Clear the last interval's raw deltas of every series before routing anew. */
static void reset_last(struct agg *a, unsigned long long interval_ns)
{
	for (size_t i = 0; i < a->procs.cap; i++) {
		struct agg_proc *p = a->procs.vals[i];

		if (p) {
			memset(&p->s.last, 0, sizeof(p->s.last));
			p->s.last_ns = interval_ns;
		}
	}
	for (size_t i = 0; i < a->cgroups.cap; i++) {
		struct agg_cgroup *c = a->cgroups.vals[i];

		if (c) {
			memset(&c->other.last, 0, sizeof(c->other.last));
			c->other.last_ns = interval_ns;
		}
	}
	memset(&a->overflow.other.last, 0, sizeof(a->overflow.other.last));
	a->overflow.other.last_ns = interval_ns;
}

void daemon_agg_end(struct agg *a, unsigned long long now)
{
	unsigned long long interval_ns = a->last_end_ns && now > a->last_end_ns ? now - a->last_end_ns : 1000000000ULL;
	double interval_s = interval_ns / 1e9;

	reset_last(a, interval_ns);
	end_threads(a, interval_s);
	end_procs(a, now, interval_s);
	end_cgroups(a, now);
	select_threads(a);
	a->n_exited_tids = 0;
	if (a->cap_exited_tids > 4096) {	/* a burst of exits does not pin memory */
		free(a->exited_tids);
		a->exited_tids = NULL;
		a->cap_exited_tids = 0;
	}
	a->last_end_ns = now;
}

struct func_prev {
	unsigned long long calls, wall_ns, oncpu_ns, self_oncpu_ns, blocked_ns, runq_ns;
};

int daemon_agg_funcs_init(struct agg_funcs *f, int nfuncs)
{
	memset(f, 0, sizeof(*f));
	f->n = nfuncs;
	f->sum = calloc(nfuncs ? nfuncs : 1, sizeof(*f->sum));
	f->last_calls = calloc(nfuncs ? nfuncs : 1, sizeof(*f->last_calls));
	return f->sum && f->last_calls ? 0 : -ENOMEM;
}

void daemon_agg_funcs_free(struct agg_funcs *f)
{
	free_all(&f->prev);
	free(f->sum);
	free(f->last_calls);
	memset(f, 0, sizeof(*f));
}

static unsigned long long dsub(unsigned long long a, unsigned long long b)
{
	return a > b ? a - b : 0;
}

static void keep_max(unsigned long long *p, unsigned long long v)
{
	if (v > *p)
		*p = v;
}

/* Room for function id fn (--itt's spans get ids as their names come, during the run); false when out of memory. */
static bool funcs_fit(struct agg_funcs *f, uint32_t fn)
{
	int n = f->n;
	struct agg_func_sums *sum;
	double *last;

	if (fn < (uint32_t)n)
		return true;
	if (fn >= UPROBE_MAX_FUNCS)	/* a span never named (ITT_FN | its id): not a function */
		return false;
	while (n <= (int)fn)
		n = n ? 2 * n : 64;
	if (!(sum = realloc(f->sum, n * sizeof(*sum))))
		return false;
	f->sum = sum;
	if (!(last = realloc(f->last_calls, n * sizeof(*last))))
		return false;
	f->last_calls = last;
	memset(sum + f->n, 0, (n - f->n) * sizeof(*sum));
	memset(last + f->n, 0, (n - f->n) * sizeof(*last));
	f->n = n;
	return true;
}

void daemon_agg_funcs_update(struct agg_funcs *f, const struct func_row *rows, size_t n)
{
	memset(f->last_calls, 0, f->n * sizeof(*f->last_calls));
	for (size_t i = 0; i < n; i++) {
		const struct func_stats *s = &rows[i].s;
		uint64_t key = (uint64_t)rows[i].key.fn << 32 | rows[i].key.tid;
		struct func_prev *p = u64map_get(&f->prev, key);
		struct agg_func_sums *d;

		if (!funcs_fit(f, rows[i].key.fn))
			continue;
		if (!p) {
			if (!(p = calloc(1, sizeof(*p))))
				continue;
			if (u64map_put(&f->prev, key, p)) {
				free(p);
				continue;
			}
		}
		d = &f->sum[rows[i].key.fn];
		d->calls += dsub(s->calls, p->calls);
		f->last_calls[rows[i].key.fn] += dsub(s->calls, p->calls);
		d->wall_ns += dsub(s->wall_ns, p->wall_ns);
		d->oncpu_ns += dsub(s->oncpu_ns, p->oncpu_ns);
		d->self_oncpu_ns += dsub(s->self_oncpu_ns, p->self_oncpu_ns);
		d->blocked_ns += dsub(s->offcpu_blocked_ns, p->blocked_ns);
		d->runq_ns += dsub(s->offcpu_runqueue_ns, p->runq_ns);
		/* open frames are counted by the reader and may close later: never go back */
		keep_max(&p->calls, s->calls);
		keep_max(&p->wall_ns, s->wall_ns);
		keep_max(&p->oncpu_ns, s->oncpu_ns);
		keep_max(&p->self_oncpu_ns, s->self_oncpu_ns);
		keep_max(&p->blocked_ns, s->offcpu_blocked_ns);
		keep_max(&p->runq_ns, s->offcpu_runqueue_ns);
	}
}

void daemon_agg_funcs_forget(struct agg_funcs *f, uint32_t fn, uint32_t tid)
{
	free(u64map_del(&f->prev, (uint64_t)fn << 32 | tid));
}
