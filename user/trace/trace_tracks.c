// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* --trace counter tracks and thread/process names (see trace_tracks.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace/trace_tracks.h"

struct trace_proc {
	__u32 pid;
	bool active;			/* non-zero deltas in the last interval */
	char comm[TMABPF_COMM_LEN];
	struct thread_stats s;		/* sums at the last sample (monotonic envelope) */
};

struct trace_name {
	__u32 tid, pid, exited;
	char comm[TMABPF_COMM_LEN];
};

void trace_tracks_init(struct trace_tracks *tr, struct trace_writer *w, const struct event_list *evs,
		       const struct tma_plan *tma_plan, unsigned long long start_ns)
{
	memset(tr, 0, sizeof(*tr));
	tr->w = w;
	tr->evs = evs;
	tr->tma_plan = tma_plan;
	tr->prev_ns = start_ns;
}

void trace_tracks_free(struct trace_tracks *tr)
{
	free(tr->procs);
	free(tr->names);
	tr->procs = NULL, tr->nprocs = 0;
	tr->names = NULL, tr->nnames = 0;
}

static unsigned long long max_u64(unsigned long long a, unsigned long long b)
{
	return a > b ? a : b;
}

/* a = max(a, b) field by field: sums never go back, so deltas add up to the total. */
static void envelope(struct thread_stats *a, const struct thread_stats *b, int nr_events)
{
	a->oncpu_ns = max_u64(a->oncpu_ns, b->oncpu_ns);
	a->offcpu_blocked_ns = max_u64(a->offcpu_blocked_ns, b->offcpu_blocked_ns);
	a->offcpu_runqueue_ns = max_u64(a->offcpu_runqueue_ns, b->offcpu_runqueue_ns);
	for (int e = 0; e < nr_events; e++) {
		a->c[e].value = max_u64(a->c[e].value, b->c[e].value);
		a->c[e].enabled = max_u64(a->c[e].enabled, b->c[e].enabled);
		a->c[e].running = max_u64(a->c[e].running, b->c[e].running);
	}
}

static bool any_change(const struct thread_stats *d, int nr_events)
{
	if (d->oncpu_ns || d->offcpu_blocked_ns || d->offcpu_runqueue_ns)
		return true;
	for (int e = 0; e < nr_events; e++)
		if (d->c[e].value)
			return true;
	return false;
}

static void emit_counters(struct trace_tracks *tr, unsigned int pid, const struct thread_stats *d,
			  unsigned long long ts, unsigned long long period_ns)
{
	static const char *const sched_keys[] = { "oncpu", "offcpu_blocked", "offcpu_runqueue" };
	const char *keys[TMA_MAX_NODES > TMABPF_MAX_EVENTS ? TMA_MAX_NODES : TMABPF_MAX_EVENTS];
	double vals[sizeof(keys) / sizeof(keys[0])], p = (double)period_ns;
	struct tma_result res;
	int n = 0;

	vals[0] = d->oncpu_ns / p;
	vals[1] = d->offcpu_blocked_ns / p;
	vals[2] = d->offcpu_runqueue_ns / p;
	trace_writer_counter(tr->w, pid, "sched", ts, 3, sched_keys, vals);
	for (int e = 0; e < tr->evs->n; e++) {
		keys[e] = tr->evs->ev[e].name;
		vals[e] = counter_scaled(&d->c[e]) / (p / 1e9);
	}
	trace_writer_counter(tr->w, pid, "rate", ts, tr->evs->n, keys, vals);
	if (!d->oncpu_ns || sums_tma(tr->tma_plan, tr->evs, d, &res))
		return;
	for (int i = 0; i < res.n; i++)
		if (res.node[i].depth == 1) {
			keys[n] = res.node[i].label;
			vals[n++] = res.node[i].value;
		}
	trace_writer_counter(tr->w, pid, "tma", ts, n, keys, vals);
}

static int cmp_pid_tid(const void *a, const void *b)
{
	const struct thread_stats *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int cmp_name(const void *a, const void *b)
{
	const struct trace_name *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (int)x->exited - (int)y->exited;	/* a live thread before an exited one of the same id */
}

static int cmp_proc(const void *a, const void *b)
{
	const struct trace_proc *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* thread_name for threads not named yet or renamed (exec, prctl). */
static void update_names(struct trace_tracks *tr, const struct thread_stats *v, size_t n)
{
	struct trace_name *cur = calloc(n ? n : 1, sizeof(*cur));
	size_t k = 0;

	if (!cur)
		return;
	for (size_t i = 0; i < n; i++) {
		cur[i] = (struct trace_name){ .tid = v[i].tid, .pid = v[i].pid, .exited = !!v[i].exited };
		memcpy(cur[i].comm, v[i].comm, sizeof(cur[i].comm));
		cur[i].comm[TMABPF_COMM_LEN - 1] = 0;
	}
	qsort(cur, n, sizeof(*cur), cmp_name);
	for (size_t i = 0; i < n; i++) {
		struct trace_name key = cur[i];
		const struct trace_name *old;

		if (k && cur[k - 1].tid == cur[i].tid && cur[k - 1].pid == cur[i].pid)
			continue;	/* one name per (tid, pid): the live thread's */
		cur[k++] = cur[i];
		key.exited = 0;
		old = tr->names ? bsearch(&key, tr->names, tr->nnames, sizeof(key), cmp_name) : NULL;
		if (!old && tr->names) {
			key.exited = 1;
			old = bsearch(&key, tr->names, tr->nnames, sizeof(key), cmp_name);
		}
		if (!old || strcmp(old->comm, cur[i].comm))
			trace_writer_thread_name(tr->w, cur[i].pid, cur[i].tid, cur[i].comm);
	}
	free(tr->names);
	tr->names = cur;
	tr->nnames = k;
}

/* Per-process sums of v (sorted by pid); comm from the main thread. */
static size_t aggregate(const struct thread_stats *v, size_t n, int nr_events, struct trace_proc **out)
{
	struct trace_proc *p = calloc(n ? n : 1, sizeof(*p));
	size_t k = 0;

	if (!p) {
		*out = NULL;
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (!k || p[k - 1].pid != v[i].pid) {
			p[k].pid = v[i].pid;
			p[k].s.pid = v[i].pid;
			memcpy(p[k].comm, v[i].comm, sizeof(p[k].comm));
			k++;
		}
		if (v[i].tid == v[i].pid)
			memcpy(p[k - 1].comm, v[i].comm, sizeof(p[k - 1].comm));
		thread_stats_add(&p[k - 1].s, &v[i], nr_events);
	}
	for (size_t i = 0; i < k; i++)
		p[i].comm[TMABPF_COMM_LEN - 1] = 0;
	*out = p;
	return k;
}

void trace_tracks_sample(struct trace_tracks *tr, const struct thread_table *tt, unsigned long long now_ns)
{
	const struct thread_stats **all;
	size_t n = thread_table_all(tt, &all), np;
	struct thread_stats *v = calloc(n ? n : 1, sizeof(*v)), sys = {}, d;
	struct trace_proc *procs;
	unsigned long long period = now_ns > tr->prev_ns ? now_ns - tr->prev_ns : 0;
	int ne = tr->evs->n;

	if (!v || !all || !period) {
		free(v);
		free(all);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		v[i] = *all[i];
		thread_close_slice(&v[i], now_ns);
	}
	free(all);
	update_names(tr, v, n);
	qsort(v, n, sizeof(*v), cmp_pid_tid);
	np = aggregate(v, n, ne, &procs);
	free(v);
	for (size_t i = 0; i < np; i++) {
		struct trace_proc *cur = &procs[i];
		const struct trace_proc *old = tr->procs ? bsearch(cur, tr->procs, tr->nprocs, sizeof(*cur), cmp_proc) : NULL;
		struct thread_stats base = old ? old->s : (struct thread_stats){};

		envelope(&cur->s, &base, ne);
		thread_stats_sub(&d, &cur->s, &base, ne);
		cur->active = any_change(&d, ne);
		if (cur->active || (old && old->active))
			emit_counters(tr, cur->pid, &d, tr->prev_ns, period);
		if (!old || strcmp(old->comm, cur->comm))
			trace_writer_process_name(tr->w, cur->pid, cur->comm);
		thread_stats_add(&sys, &cur->s, ne);
	}
	envelope(&sys, &tr->sys, ne);
	thread_stats_sub(&d, &sys, &tr->sys, ne);
	emit_counters(tr, TRACE_SYSTEM_PID, &d, tr->prev_ns, period);
	tr->sys = sys;
	free(tr->procs);
	tr->procs = procs;
	tr->nprocs = np;
	tr->prev_ns = now_ns;
	tr->samples++;
	trace_writer_flush(tr->w);
}
