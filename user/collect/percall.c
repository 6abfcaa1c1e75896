// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The --per-call feature: snapshots into iterations.  See percall.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "bpf/samples.h"
#include "bpf/uprobes.h"
#include "collect/bpf_util.h"
#include "collect/percall.h"
#include "lib/clock.h"
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

#define EXITS_KEEP_NS 2000000000ULL	/* exit records older than this and than every open entry go */

void percall_thread_exit(struct percall *p, const struct thread_stats *s)
{
	struct percall_exit *x;

	if (!p->rb)
		return;
	if (p->nex == p->capex) {
		size_t cap = p->capex ? 2 * p->capex : 64;
		struct percall_exit *v = realloc(p->ex, cap * sizeof(*v));

		if (!v)
			return;		/* the thread counts as absent in its window */
		p->ex = v;
		p->capex = cap;
	}
	x = &p->ex[p->nex++];
	*x = (struct percall_exit){ .pid = s->pid, .exit_ns = s->exit_ns, .first_seen_ns = s->first_seen_ns };
	x->th = (struct percall_thread){ .tid = s->tid, .oncpu_ns = s->slices_ns, .blocked_ns = s->offcpu_blocked_ns,
					 .runq_ns = s->offcpu_runqueue_ns, .runtime_ns = s->exec_base + s->oncpu_ns,
					 .samples = s->samples, .spin_samples = s->spin_samples,
					 .spin_probe_ns = s->spin_probe_ns };
	memcpy(x->c, s->c, sizeof(x->c));
}

/* The exit of thread tid of pid in (from, to]; NULL when none is known. */
static const struct percall_exit *exit_in(const struct percall *p, unsigned int pid, unsigned int tid,
					  unsigned long long from, unsigned long long to)
{
	for (size_t i = 0; i < p->nex; i++)
		if (p->ex[i].pid == pid && p->ex[i].th.tid == tid && p->ex[i].exit_ns > from && p->ex[i].exit_ns <= to)
			return &p->ex[i];
	return NULL;
}

/* Exit records no window can still want: older than EXITS_KEEP_NS and than every open entry. */
static void exits_prune(struct percall *p, unsigned long long now)
{
	unsigned long long keep = now > EXITS_KEEP_NS ? now - EXITS_KEEP_NS : 0;
	size_t n = 0;

	for (size_t i = 0; i < p->open.cap; i++)
		if (p->open.vals && p->open.vals[i]) {
			const struct percall_rec *a = p->open.vals[i];

			keep = a->ts < keep ? a->ts : keep;
		}
	for (size_t i = 0; i < p->nex; i++)
		if (p->ex[i].exit_ns >= keep)
			p->ex[n++] = p->ex[i];
	p->nex = n;
}

/* A thread that exited in the window: its times up to its exit (x; a NULL: it began in the window
 * too), absent for the rest. */
static void exited_window(const struct percall_thread *a, const struct percall_exit *x, unsigned long long wall,
			  struct iter_time *t)
{
	unsigned long long known;

	thread_window(a, &x->th, wall, t);
	known = t->compute_ns + t->spin_ns + t->blocked_ns + t->runq_ns;
	t->absent_ns = wall > known ? wall - known : 0;
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
	/* the exit records so far: a thread gone at the return wrote its own before the return's
	 * snapshot left it out */
	if (p->drain_exits)
		p->drain_exits(p->drain_ctx);
	/* threads of the entry snapshot gone at the return: exited in the window, their times up to
	 * the exit from their exit record, else absent throughout (record lost, or never tracked) */
	for (__u32 i = 0; i < a->nthreads && i < PERCALL_MAX_THREADS; i++) {
		const struct percall_exit *x;
		struct iter_thread *t;

		if (thread_in(b, a->th[i].tid))
			continue;
		x = exit_in(p, b->pid, a->th[i].tid, a->ts, b->ts);
		t = &it.th[it.nthreads++];
		t->tid = a->th[i].tid;
		if (x && !a->th[i].untracked) {
			exited_window(&a->th[i], x, it.wall_ns, &t->t);
			counters_add(it.pc, x->c, p->nr_events);	/* its counts up to the exit */
			it.exited++;
		} else {
			t->t.absent_ns = it.wall_ns;
		}
		iter_time_add(&it.sum, &t->t);
	}
	/* threads that began and exited in the window: in neither snapshot */
	for (size_t i = 0; i < p->nex && it.nthreads < PERCALL_MAX_THREADS * 2; i++) {
		const struct percall_exit *x = &p->ex[i];
		struct iter_thread *t;

		if (x->pid != b->pid || x->exit_ns <= a->ts || x->exit_ns > b->ts || x->first_seen_ns <= a->ts ||
		    thread_in(a, x->th.tid) || thread_in(b, x->th.tid))
			continue;
		t = &it.th[it.nthreads++];
		t->tid = x->th.tid;
		exited_window(NULL, x, it.wall_ns, &t->t);
		counters_add(it.pc, x->c, p->nr_events);
		it.exited++;
		iter_time_add(&it.sum, &t->t);
	}
	for (__u32 f = 0; f < b->nslots && f < PERCALL_MAX_FUNCS; f++) {
		static const struct percall_fn none;
		const struct percall_fn *af = f < a->nslots ? &a->fns[f] : &none;	/* given since a: 0 then */
		unsigned long long calls = sub0(b->fns[f].calls, af->calls);
		int fn = f < PERCALL_DIRECT_FUNCS ? (int)f : p->slot_fn ? p->slot_fn(p->slot_ctx, f) : -1;
		int x = 0;

		if (!calls)
			continue;
		if (fn < 0) {	/* a slot whose function is not known (its span's name never came) */
			p->unnamed_calls += calls;
			continue;
		}
		while (x < nfn && it.fns[x].fn != (unsigned int)fn)	/* spans of one name in several slots: one row */
			x++;
		if (x == nfn)
			it.fns[nfn++] = (struct iter_fn){ .fn = (unsigned int)fn };
		it.fns[x].calls += calls;
		it.fns[x].wall_ns += sub0(b->fns[f].wall_ns, af->wall_ns);
		it.fns[x].oncpu_ns += sub0(b->fns[f].oncpu_ns, af->oncpu_ns);
	}
	it.nfns = nfn;
	memcpy(it.c, b->c, sizeof(it.c));
	counters_sub(it.c, a->c, p->nr_events);
	/* the process': b's sums and the exited threads' (added above), less a's */
	counters_add(it.pc, b->pc, p->nr_events);
	counters_sub(it.pc, a->pc, p->nr_events);
	it.pc_unfolded_ns = a->unfolded_ns + b->unfolded_ns;
	if (a->roof_unknown || b->roof_unknown)
		it.work = (struct iter_work){ .unknown = true };
	else
		it.work = (struct iter_work){ .calls = sub0(b->roof.calls, a->roof.calls),
					      .wall_ns = sub0(b->roof.wall_ns, a->roof.wall_ns),
					      .flops = sub0(b->roof.flops, a->roof.flops),
					      .bytes = sub0(b->roof.bytes, a->roof.bytes) };
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

/* ---- --sample: the windows' top functions ---- */

#define SAMPLES_MAX (1u << 21)		/* samples kept at most (64 MiB): a window open that long loses the rest */
#define HORIZON_SLACK_NS 20000000ULL	/* a sample committed this long after its time is still binned */

static int on_sample(void *ctx, void *data, size_t size)
{
	struct percall *p = ctx;
	const struct percall_sample *x = data;
	size_t i;

	if (size < sizeof(*x))
		return 0;
	if (p->sn == p->scap) {
		size_t cap = p->scap ? 2 * p->scap : 4096;
		struct percall_sample *v = cap <= SAMPLES_MAX ? realloc(p->smp, cap * sizeof(*v)) : NULL;

		if (!v) {
			p->samples_over++;
			return 0;
		}
		p->smp = v;
		p->scap = cap;
	}
	/* per CPU the ring holds them in time order; across CPUs nearly: insert from the end */
	for (i = p->sn; i > 0 && p->smp[i - 1].ts > x->ts; i--)
		;
	memmove(&p->smp[i + 1], &p->smp[i], (p->sn - i) * sizeof(*p->smp));
	p->smp[i] = *x;
	p->sn++;
	return 0;
}

int percall_samples_open(struct percall *p, int map_fd, percall_leaf_fn leaf, void *ctx, char *err,
			 size_t errlen)
{
	p->leaf = leaf;
	p->leaf_ctx = ctx;
	p->srb = ringbuf_open(map_fd, on_sample, p, "per-call samples", err, errlen);
	return p->srb ? 0 : -EINVAL;
}

/* The first sample at or after ts. */
static size_t sample_at(const struct percall *p, unsigned long long ts)
{
	size_t lo = 0, hi = p->sn;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->smp[mid].ts < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* it's process' samples in its window, added up per leaf function; the ITER_TOP most sampled
 * (distinct functions past TOP_DISTINCT count in it->samples only). */
#define TOP_DISTINCT 256
static void window_top(struct percall *p, struct iteration *it)
{
	struct iter_top fns[TOP_DISTINCT];
	int n = 0;

	it->sampled = true;
	for (size_t i = sample_at(p, it->start_ns); i < p->sn && p->smp[i].ts <= it->start_ns + it->wall_ns; i++) {
		const char *module = "[unknown]", *sym;

		if (p->smp[i].key.pid != it->pid)
			continue;
		it->samples++;
		sym = p->leaf(p->leaf_ctx, &p->smp[i].key, &module);
		if (!sym) {
			sym = "[no stack]";
			module = "[unknown]";
		}
		n = iter_top_add(fns, n, TOP_DISTINCT, module, sym, 1);
	}
	it->ntop = iter_top_pick(fns, n, it->top, ITER_TOP);
}

/* Give the iterations whose window ended before upto their top functions, then drop the samples
 * no window can still want: before upto, before every open entry and every window not binned. */
static void bin_samples(struct percall *p, unsigned long long upto)
{
	unsigned long long keep = upto;
	size_t k, drop;

	for (k = p->binned; k < p->res.n && p->res.v[k].start_ns + p->res.v[k].wall_ns <= upto; k++)
		window_top(p, &p->res.v[k]);
	p->binned = k;
	for (; k < p->res.n; k++)
		keep = p->res.v[k].start_ns < keep ? p->res.v[k].start_ns : keep;
	for (size_t i = 0; i < p->open.cap; i++)
		if (p->open.vals && p->open.vals[i]) {
			const struct percall_rec *a = p->open.vals[i];

			keep = a->ts < keep ? a->ts : keep;
		}
	drop = sample_at(p, keep);
	memmove(p->smp, p->smp + drop, (p->sn - drop) * sizeof(*p->smp));
	p->sn -= drop;
}

void percall_poll(struct percall *p)
{
	unsigned long long horizon = mono_ns();

	/* the samples first: a window that ended before horizon then has all of its samples (up to
	 * the slack of a commit after its time) */
	if (p->srb)
		ring_buffer__consume(p->srb);
	if (p->rb)
		ring_buffer__consume(p->rb);
	if (p->srb && horizon > HORIZON_SLACK_NS)
		bin_samples(p, horizon - HORIZON_SLACK_NS);
	exits_prune(p, horizon);
}

void percall_finish(struct percall *p, unsigned long long lost, unsigned long long samples_lost)
{
	size_t untracked = 0;

	percall_poll(p);
	if (p->srb)
		bin_samples(p, ~0ULL);	/* sampling has stopped: every sample is in */
	p->res.open = p->open.n;
	p->res.lost = lost;
	p->res.samples_lost = samples_lost + p->samples_over;
	if (lost)
		warn_add("--per-call: %llu snapshots lost (ring buffer full): their iterations are missing", lost);
	if (p->res.samples_lost)
		warn_add("--per-call: %llu samples lost (ring buffer full, or a window open too long): the iterations' "
			 "top functions miss them", p->res.samples_lost);
	if (p->unnamed_calls)
		warn_add("--per-call: %llu calls of the iterations are of spans whose name never came: left out of "
			 "their totals", p->unnamed_calls);
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
	if (p->srb)
		ring_buffer__free(p->srb);
	p->srb = NULL;
	free(p->smp);
	p->smp = NULL;
	free(p->ex);
	p->ex = NULL;
	p->nex = p->capex = 0;
	p->sn = p->scap = p->binned = 0;
	iterations_free(&p->res);
}
