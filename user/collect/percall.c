// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The --per-call feature: snapshots into iterations.  See percall.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "bpf/uprobes.h"
#include "collect/bpf_util.h"
#include "collect/percall.h"
#include "lib/warn.h"
#include "model/counters.h"

static const struct percall_thread *thread_in(const struct percall_rec *r, unsigned int tid)
{
	for (__u32 i = 0; i < r->nthreads && i < PERCALL_MAX_THREADS; i++)
		if (r->th[i].tid == tid)
			return &r->th[i];
	return NULL;
}

/* A thread's share of the window between snapshots a and b: b's times minus a's (a NULL: the
 * thread began in the window, all its times are in it).  Its on-CPU time is split into compute
 * and spin: spin is the share of its samples in the window that were in spin functions, or its
 * on-CPU time in probed spin functions (a spin in progress at a snapshot included), whichever is more (the two
 * measure the same time: a probed spin function's samples are spin samples). */
static void thread_window(const struct percall_thread *a, const struct percall_thread *b, unsigned long long wall,
			  struct iter_time *t)
{
	static const struct percall_thread none;
	unsigned long long oncpu, samples, spin, known, probed;
	bool untracked = b->untracked || (a && a->untracked);

	if (!a)
		a = &none;
	/* a thread the threads map left out in either snapshot: the kernel's runtime, the one measure
	 * both snapshots have (its slices and off-CPU sums start only when it got an entry) */
	oncpu = untracked ? sub0(b->runtime_ns, a->runtime_ns) : sub0(b->oncpu_ns, a->oncpu_ns);
	samples = sub0(b->samples, a->samples);
	spin = sub0(b->spin_samples, a->spin_samples);
	t->spin_ns = samples ? (unsigned long long)((double)oncpu * (spin < samples ? spin : samples) / samples) : 0;
	probed = sub0(b->spin_probe_ns, a->spin_probe_ns);
	if (probed > t->spin_ns)
		t->spin_ns = probed < oncpu ? probed : oncpu;
	t->compute_ns = oncpu - t->spin_ns;
	t->blocked_ns = untracked ? 0 : sub0(b->blocked_ns, a->blocked_ns);
	t->runq_ns = untracked ? 0 : sub0(b->runq_ns, a->runq_ns);
	t->runtime_ns = sub0(b->runtime_ns, a->runtime_ns);
	known = oncpu + t->blocked_ns + t->runq_ns;
	/* a thread that began in the window was absent for the rest of it; one the threads map left out
	 * has its on-CPU time only (its off-CPU time is not known, and counted as absent) */
	t->absent_ns = (a == &none || untracked) && wall > known ? wall - known : 0;
}

/* The iteration between entry snapshot a and return snapshot b of the same thread. */
static int iteration_of(struct percall *p, const struct percall_rec *a, const struct percall_rec *b)
{
	struct iteration it = { .pid = b->pid, .tid = b->tid, .marker = b->fn, .start_ns = a->ts,
				.wall_ns = sub0(b->ts, a->ts) };
	int nfn = 0;

	it.th = calloc(PERCALL_MAX_THREADS * 2, sizeof(*it.th));
	it.fns = calloc(PERCALL_MAX_FUNCS, sizeof(*it.fns));
	if (!it.th || !it.fns) {
		free(it.th);
		free(it.fns);
		return -ENOMEM;
	}
	it.threads_truncated = a->more_threads || b->more_threads;
	for (__u32 i = 0; i < b->nthreads && i < PERCALL_MAX_THREADS; i++) {
		struct iter_thread *t = &it.th[it.nthreads++];

		const struct percall_thread *at = thread_in(a, b->th[i].tid);

		t->tid = b->th[i].tid;
		it.torn += b->th[i].torn || (at && at->torn);
		it.untracked += b->th[i].untracked || (at && at->untracked);
		thread_window(at, &b->th[i], it.wall_ns, &t->t);
		iter_time_add(&it.sum, &t->t);
	}
	/* threads of the entry snapshot gone at the return: exited in the window */
	for (__u32 i = 0; i < a->nthreads && i < PERCALL_MAX_THREADS; i++) {
		struct iter_thread *t;

		if (thread_in(b, a->th[i].tid))
			continue;
		t = &it.th[it.nthreads++];
		t->tid = a->th[i].tid;
		t->t.absent_ns = it.wall_ns;
		iter_time_add(&it.sum, &t->t);
	}
	for (__u32 f = 0; f < PERCALL_MAX_FUNCS; f++) {
		unsigned long long calls = sub0(b->fns[f].calls, a->fns[f].calls);

		if (!calls)
			continue;
		it.fns[nfn++] = (struct iter_fn){ .fn = f, .calls = calls,
						  .wall_ns = sub0(b->fns[f].wall_ns, a->fns[f].wall_ns),
						  .oncpu_ns = sub0(b->fns[f].oncpu_ns, a->fns[f].oncpu_ns) };
	}
	it.nfns = nfn;
	memcpy(it.c, b->c, sizeof(it.c));
	counters_sub(it.c, a->c, p->nr_events);
	if (iterations_add(&p->res, &it)) {
		free(it.th);
		free(it.fns);
		return -ENOMEM;
	}
	return 0;
}

static int on_snapshot(void *ctx, void *data, size_t size)
{
	struct percall *p = ctx;
	const struct percall_rec *r = data;
	struct percall_rec *a;

	if (size < sizeof(*r))
		return 0;
	if (r->kind == PERCALL_BEGIN) {
		struct percall_rec *copy = malloc(sizeof(*copy));

		if (!copy)
			return 0;
		memcpy(copy, r, sizeof(*copy));
		a = u64map_get(&p->open, r->tid);
		if (a) {
			p->res.dropped++;	/* its return never came (longjmp out of the marker) */
			free(a);
		}
		if (u64map_put(&p->open, r->tid, copy))
			free(copy);
		return 0;
	}
	a = u64map_del(&p->open, r->tid);
	if (!a)
		return 0;	/* its entry was lost */
	/* another iteration's entry: this one's entry and that one's return were lost (counted) */
	if (a->seq == r->seq)
		iteration_of(p, a, r);
	free(a);
	return 0;
}

int percall_open(struct percall *p, int map_fd, int nr_events, char *err, size_t errlen)
{
	p->nr_events = nr_events;
	p->rb = ringbuf_open(map_fd, on_snapshot, p, "per-call", err, errlen);
	return p->rb ? 0 : -EINVAL;
}

void percall_poll(struct percall *p)
{
	if (p->rb)
		ring_buffer__consume(p->rb);
}

void percall_finish(struct percall *p, unsigned long long lost)
{
	size_t untracked = 0;

	percall_poll(p);
	p->res.open = p->open.n;
	p->res.lost = lost;
	if (lost)
		warn_add("--per-call: %llu snapshots lost (ring buffer full): their iterations are missing", lost);
	for (size_t k = 0; k < p->res.n; k++)
		untracked += p->res.v[k].untracked > 0;
	if (untracked)
		warn_add("--per-call: %zu iterations had threads the full threads map left out: their blocked and "
			 "runqueue time is missing (fix: raise --max-threads)", untracked);
	if (!p->res.n && !p->res.open && !p->res.dropped)
		warn_add("--per-call %s: the marker was never called: no iterations (check that the target calls "
			 "it, e.g. with --uprobe and the functions' calls)", p->spec);
}

void percall_free(struct percall *p)
{
	for (size_t i = 0; i < p->open.cap; i++)
		if (p->open.vals && p->open.vals[i])
			free(p->open.vals[i]);
	u64map_free(&p->open);
	if (p->rb)
		ring_buffer__free(p->rb);
	p->rb = NULL;
	iterations_free(&p->res);
}
