// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/kernel_file.h"
#include "model/thread_table.h"

void thread_table_init(struct thread_table *tt, int nr_events)
{
	memset(tt, 0, sizeof(*tt));
	tt->nr_events = nr_events;
	tt->max_exited = THREAD_TABLE_MAX_EXITED;
	tt->max_folded = THREAD_TABLE_MAX_FOLDED;
}

void thread_table_set_limits(struct thread_table *tt, size_t max_exited, size_t max_folded)
{
	tt->max_exited = max_exited ? max_exited : 1;
	tt->max_folded = max_folded ? max_folded : 1;
	if (tt->max_folded > tt->max_exited)
		tt->max_folded = tt->max_exited;	/* memory in proportion to --max-exited */
}

void thread_table_free(struct thread_table *tt)
{
	free(tt->exited);
	free(tt->fproc);
	free(tt->fcomm);
	u64map_free(&tt->fproc_by_pid);
	strmap_free(&tt->fcomm_by_comm);
	free(tt->live);
	memset(tt, 0, sizeof(*tt));
}

/* Add one set of sums into a folded record. */
static void fold_into(struct thread_table *tt, struct folded_rec *f, const struct thread_stats *s)
{
	thread_stats_add(&f->s, s, tt->nr_events);
	if (!f->s.first_seen_ns || (s->first_seen_ns && s->first_seen_ns < f->s.first_seen_ns))
		f->s.first_seen_ns = s->first_seen_ns;
	if (s->exit_ns > f->s.exit_ns)
		f->s.exit_ns = s->exit_ns;
}

/* The per-comm record of comm (past max_folded of them: "[other]"). */
static struct folded_rec *comm_rec(struct thread_table *tt, const char *comm_in)
{
	char comm[TMABPF_COMM_LEN + 1];
	size_t i;

	snprintf(comm, sizeof(comm), "%.*s", TMABPF_COMM_LEN, comm_in);
	i = (size_t)(uintptr_t)strmap_get(&tt->fcomm_by_comm, comm);

	if (!i && tt->n_fcomm >= tt->max_folded && strcmp(comm, "[other]"))
		return comm_rec(tt, "[other]");
	if (!i) {
		struct folded_rec *v = realloc(tt->fcomm, (tt->n_fcomm + 1) * sizeof(*v));

		if (!v)
			return NULL;
		tt->fcomm = v;
		if (strmap_put(&tt->fcomm_by_comm, comm, (void *)(uintptr_t)(tt->n_fcomm + 1), NULL))
			return NULL;
		i = ++tt->n_fcomm;
		memset(&v[i - 1], 0, sizeof(v[i - 1]));
		v[i - 1].s.exited = 1;
		snprintf(v[i - 1].s.comm, sizeof(v[i - 1].s.comm), "%.*s", TMABPF_COMM_LEN - 1, comm);
	}
	return &tt->fcomm[i - 1];
}

/* The per-process record of pid; a new one takes the oldest's slot when there are max_folded. */
static struct folded_rec *proc_rec(struct thread_table *tt, const struct thread_stats *s)
{
	size_t slot = (size_t)(uintptr_t)u64map_get(&tt->fproc_by_pid, s->pid);
	struct folded_rec *f;

	if (slot)
		return &tt->fproc[slot - 1];
	if (!tt->fproc && !(tt->fproc = calloc(tt->max_folded, sizeof(*tt->fproc))))
		return NULL;
	if (tt->n_fproc < tt->max_folded) {
		slot = (tt->fhead + tt->n_fproc++) % tt->max_folded;
	} else {
		struct folded_rec *old = &tt->fproc[tt->fhead], *c = comm_rec(tt, old->s.comm);

		if (!c)
			return NULL;
		fold_into(tt, c, &old->s);
		c->threads += old->threads;
		c->procs++;
		tt->procs_folded++;
		u64map_del(&tt->fproc_by_pid, old->s.pid);
		slot = tt->fhead;
		tt->fhead = (tt->fhead + 1) % tt->max_folded;
	}
	if (u64map_put(&tt->fproc_by_pid, s->pid, (void *)(uintptr_t)(slot + 1)))
		return NULL;
	f = &tt->fproc[slot];
	memset(f, 0, sizeof(*f));
	f->s.pid = s->pid;
	f->s.exited = 1;
	memcpy(f->s.comm, s->comm, sizeof(f->s.comm));
	return f;
}

int thread_table_add_exited(struct thread_table *tt, const struct thread_stats *s)
{
	if (tt->n_exited == tt->max_exited) {
		/* full: the oldest exited thread goes into its process' record */
		const struct thread_stats *old = &tt->exited[tt->head];
		struct folded_rec *f = proc_rec(tt, old);

		if (!f)
			return -ENOMEM;
		if (old->tid == old->pid)
			memcpy(f->s.comm, old->comm, sizeof(f->s.comm));
		fold_into(tt, f, old);
		f->threads++;
		tt->threads_folded++;
		tt->exited[tt->head] = *s;
		tt->head = (tt->head + 1) % tt->cap_exited;
		return 0;
	}
	if (tt->n_exited == tt->cap_exited) {
		size_t cap = tt->cap_exited ? tt->cap_exited * 2 : 64;
		struct thread_stats *n;

		if (cap > tt->max_exited)
			cap = tt->max_exited;
		n = realloc(tt->exited, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		tt->exited = n;	/* (not wrapped yet: head is 0 until the ring is full) */
		tt->cap_exited = cap;
	}
	tt->exited[tt->n_exited++] = *s;
	return 0;
}

int thread_stats_cmp(const void *a, const void *b)
{
	const struct thread_stats *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->first_seen_ns != y->first_seen_ns)
		return x->first_seen_ns < y->first_seen_ns ? -1 : 1;
	return 0;
}

void thread_table_set_live(struct thread_table *tt, struct thread_stats *arr, size_t n)
{
	free(tt->live);
	qsort(arr, n, sizeof(*arr), thread_stats_cmp);
	tt->live = arr;
	tt->n_live = n;
}

const struct thread_stats *thread_find(const struct thread_stats *arr, size_t n, const struct thread_stats *key)
{
	return bsearch(key, arr, n, sizeof(*arr), thread_stats_cmp);
}

size_t thread_table_all(const struct thread_table *tt, const struct thread_stats ***out)
{
	size_t n = tt->n_fcomm + tt->n_fproc + tt->n_exited + tt->n_live, k = 0;
	const struct thread_stats **v = calloc(n ? n : 1, sizeof(*v));

	if (!v) {
		*out = NULL;
		return 0;
	}
	for (size_t i = 0; i < tt->n_fcomm; i++)
		v[k++] = &tt->fcomm[i].s;
	for (size_t i = 0; i < tt->n_fproc; i++)
		v[k++] = &tt->fproc[(tt->fhead + i) % tt->max_folded].s;
	for (size_t i = 0; i < tt->n_exited; i++)
		v[k++] = &tt->exited[(tt->head + i) % tt->cap_exited];
	for (size_t i = 0; i < tt->n_live; i++)
		v[k++] = &tt->live[i];
	*out = v;
	return k;
}

static int cmp_pid(const void *a, const void *b)
{
	const struct thread_stats *x = *(const struct thread_stats *const *)a;
	const struct thread_stats *y = *(const struct thread_stats *const *)b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

size_t thread_table_processes(const struct thread_table *tt, struct thread_stats **out)
{
	const struct thread_stats **all;
	size_t n = thread_table_all(tt, &all), np = 0;
	struct thread_stats *procs = calloc(n ? n : 1, sizeof(*procs));

	if (!procs || !all) {
		free(all);
		free(procs);
		*out = NULL;
		return 0;
	}
	qsort(all, n, sizeof(*all), cmp_pid);
	for (size_t i = 0; i < n; i++) {
		struct thread_stats *p = np ? &procs[np - 1] : NULL;

		if (all[i]->pid == 0)
			continue;	/* per-comm records: processes no longer kept one by one */
		if (!p || p->pid != all[i]->pid) {
			p = &procs[np++];
			memset(p, 0, sizeof(*p));
			p->pid = all[i]->pid;
			p->tid = all[i]->pid;
			memcpy(p->comm, all[i]->comm, sizeof(p->comm));
			p->first_seen_ns = all[i]->first_seen_ns;
		}
		if (all[i]->tid == all[i]->pid)
			memcpy(p->comm, all[i]->comm, sizeof(p->comm));
		thread_stats_add(p, all[i], tt->nr_events);
	}
	free(all);
	*out = procs;
	return np;
}

void thread_table_total(const struct thread_table *tt, struct thread_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (size_t i = 0; i < tt->n_fcomm; i++)
		thread_stats_add(sum, &tt->fcomm[i].s, tt->nr_events);
	for (size_t i = 0; i < tt->n_fproc; i++)
		thread_stats_add(sum, &tt->fproc[i].s, tt->nr_events);
	for (size_t i = 0; i < tt->n_exited; i++)
		thread_stats_add(sum, &tt->exited[i], tt->nr_events);
	for (size_t i = 0; i < tt->n_live; i++)
		thread_stats_add(sum, &tt->live[i], tt->nr_events);
}

unsigned long long thread_close_slice(struct thread_stats *s, unsigned long long now)
{
	unsigned long long span, on, exec;

	if (s->exited)
		return 0;
	if (s->last_in_ns) {
		span = now > s->last_in_ns ? now - s->last_in_ns : 0;
		exec = kernel_thread_runtime_ns(s->pid, s->tid);
		on = exec > s->exec_in ? exec - s->exec_in : 0;
		if (!exec || on > span)
			on = span;	/* gone since (its exit record has it), or ran past now */
		s->oncpu_ns = (s->exec_in > s->exec_base ? s->exec_in - s->exec_base : 0) + on;
		s->last_in_ns = 0;
		if (span - on < THREAD_UNTRACED_MIN_NS)
			return 0;	/* the runtime's lag on a running thread: in no state */
		s->offcpu_blocked_ns += span - on;
		return span - on;
	}
	if (s->last_out_ns && now > s->last_out_ns) {
		if (s->out_blocked)
			s->offcpu_blocked_ns += now - s->last_out_ns;
		else
			s->offcpu_runqueue_ns += now - s->last_out_ns;
	}
	s->last_out_ns = 0;
	return 0;
}
