// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The daemon's aggregation, driven with synthetic snapshots and exit records:
 * series equal what the threads did (exits folded, races not double counted,
 * evicted threads kept as seen), every series is monotonic, the sum over all
 * series equals the sum over all threads, and the tables stay bounded under
 * churn of 10,000 threads.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "daemon/daemon_agg.h"
#include "daemon/daemon_slots.h"

#define MS 1000000ULL
#define SEC 1000000000ULL

static struct thread_stats ts(unsigned pid, unsigned tid, unsigned long long first, unsigned long long oncpu,
			      unsigned long long faults)
{
	struct thread_stats s = { .pid = pid, .tid = tid, .first_seen_ns = first, .oncpu_ns = oncpu, .cgroup_id = 0 };

	snprintf(s.comm, sizeof(s.comm), "t%u", tid);
	s.c[0] = (struct counter_val){ .value = faults, .enabled = oncpu, .running = oncpu };
	return s;
}

/* Sum of a field over every series (processes' own, shown or not, and cgroups' others). */
static double total_oncpu(const struct agg *a, double *faults)
{
	double on = 0;

	*faults = 0;
	for (size_t i = 0; i < a->procs.cap; i++) {
		const struct agg_proc *p = a->procs.vals[i];

		if (p) {
			on += p->s.total.oncpu_ns;
			*faults += p->s.total.counters[0];
		}
	}
	for (size_t i = 0; i < a->cgroups.cap; i++) {
		const struct agg_cgroup *c = a->cgroups.vals[i];

		if (c) {
			on += c->other.total.oncpu_ns;
			*faults += c->other.total.counters[0];
		}
	}
	on += a->overflow.other.total.oncpu_ns;
	*faults += a->overflow.other.total.counters[0];
	return on;
}

static const struct agg_proc *proc(const struct agg *a, unsigned pid)
{
	return u64map_get(&a->procs, pid);
}

static struct agg_cfg cfg(int top_procs, int top_threads)
{
	return (struct agg_cfg){ .nr_events = 1, .top_procs = top_procs, .top_threads = top_threads,
				 .max_cgroups = 16, .expire_ns = 10 * SEC };
}

static void basics(void)
{
	struct agg a;
	struct agg_cfg c = cfg(10, 2);
	struct thread_stats s1 = ts(100, 100, 5, 10 * MS, 7), s2 = ts(100, 101, 6, 20 * MS, 3);
	unsigned long long now = SEC;
	double f;

	daemon_agg_init(&a, &c);
	daemon_agg_begin(&a);
	daemon_agg_thread_seen(&a, &s1);
	daemon_agg_thread_seen(&a, &s2);
	daemon_agg_end(&a, now);
	const struct agg_proc *p = proc(&a, 100);
	check(p && p->exported, "a new busy process gets a slot");
	check(p && p->s.total.oncpu_ns == 30 * MS && p->s.total.counters[0] == 10, "process series = sum of its threads");
	check(!strcmp(p->comm, "t100"), "process comm is the main thread's (%s)", p->comm);

	/* second snapshot: deltas only */
	s1.oncpu_ns += 5 * MS;
	s1.c[0].value += 2;
	daemon_agg_begin(&a);
	daemon_agg_thread_seen(&a, &s1);
	daemon_agg_thread_seen(&a, &s2);
	daemon_agg_end(&a, now += SEC);
	check(p->s.total.oncpu_ns == 35 * MS && p->s.total.counters[0] == 12, "second snapshot adds deltas (%.0f)",
	      p->s.total.oncpu_ns);
	check(p->s.last.oncpu_ns == 5 * MS, "last interval's raw delta kept for TMA (%llu)",
	      (unsigned long long)p->s.last.oncpu_ns);

	/* thread 101 exits between snapshots with more work */
	s2.oncpu_ns += 4 * MS;
	s2.exited = 1;
	daemon_agg_thread_exit(&a, &s2);
	check(p->nthreads == 1 && a.n_exited_tids == 1 && a.exited_tids[0] == 101, "exit noted (tid 101)");
	/* racy snapshot: the map still shows the exited thread (delete not yet done) */
	daemon_agg_begin(&a);
	daemon_agg_thread_seen(&a, &s1);
	daemon_agg_thread_seen(&a, &s2);
	daemon_agg_end(&a, now += SEC);
	check(p->s.total.oncpu_ns == 39 * MS, "exit folded once, racy snapshot entry ignored (%.0f)", p->s.total.oncpu_ns);

	/* thread 100 is in the snapshot, then exits in the drain after it */
	s1.oncpu_ns += 1 * MS;
	daemon_agg_begin(&a);
	daemon_agg_thread_seen(&a, &s1);
	s1.oncpu_ns += 2 * MS;
	daemon_agg_thread_exit(&a, &s1);
	daemon_agg_end(&a, now += SEC);
	check(p->s.total.oncpu_ns == 42 * MS, "exit after the snapshot adds only the rest (%.0f)", p->s.total.oncpu_ns);
	check(p->dead && p->exported, "process dead, its series lingers");
	check(a.threads.n == 0, "no thread record left (%zu)", a.threads.n);

	daemon_agg_begin(&a);
	daemon_agg_end(&a, now += 5 * SEC);
	check(proc(&a, 100) != NULL, "still there before expire");
	daemon_agg_begin(&a);
	daemon_agg_end(&a, now += 6 * SEC);
	check(proc(&a, 100) == NULL && a.exported_procs == 0, "dead process expired after expire_ns");
	total_oncpu(&a, &f);
	check(a.threads_lost == 0 && a.threads_exited == 2, "counts: 0 lost, 2 exited");
	daemon_agg_free(&a);
}

static void eviction(void)
{
	struct agg a;
	struct agg_cfg c = cfg(10, 2);
	struct thread_stats s = ts(200, 201, 10, 50 * MS, 100), main = ts(200, 200, 9, 1 * MS, 0);
	unsigned long long now = SEC;
	double f;

	daemon_agg_init(&a, &c);
	daemon_agg_begin(&a);
	daemon_agg_thread_seen(&a, &main);
	daemon_agg_thread_seen(&a, &s);
	daemon_agg_end(&a, now);
	/* evicted from the LRU map: not in the next snapshot, no exit record */
	daemon_agg_begin(&a);
	daemon_agg_thread_seen(&a, &main);
	daemon_agg_end(&a, now += SEC);
	check(a.threads_lost == 1, "thread gone without exit record counted as lost");
	check(total_oncpu(&a, &f) == 51 * MS && f == 100, "what was seen of it stays (%.0f)", total_oncpu(&a, &f));
	/* re-created by BPF: new first_seen, sums from zero */
	struct thread_stats s2 = ts(200, 201, 2 * SEC, 3 * MS, 4);
	daemon_agg_begin(&a);
	daemon_agg_thread_seen(&a, &main);
	daemon_agg_thread_seen(&a, &s2);
	daemon_agg_end(&a, now += SEC);
	check(total_oncpu(&a, &f) == 54 * MS && f == 104, "re-created thread adds from zero (%.0f, %.0f)",
	      total_oncpu(&a, &f), f);
	/* tid reused by a new thread while the old record is live: old one is lost, new one counted */
	struct thread_stats s3 = ts(200, 201, 3 * SEC, 1 * MS, 1);
	daemon_agg_begin(&a);
	daemon_agg_thread_seen(&a, &main);
	daemon_agg_thread_seen(&a, &s3);
	daemon_agg_end(&a, now += SEC);
	check(total_oncpu(&a, &f) == 55 * MS && a.threads_lost == 2, "tid reuse: new incarnation counted (%.0f)",
	      total_oncpu(&a, &f));
	/* exit record of a thread never seen in a snapshot */
	struct thread_stats s4 = ts(200, 202, 4 * SEC, 2 * MS, 0);
	daemon_agg_thread_exit(&a, &s4);
	daemon_agg_begin(&a);
	daemon_agg_thread_seen(&a, &main);
	daemon_agg_thread_seen(&a, &s3);
	daemon_agg_end(&a, now += SEC);
	check(total_oncpu(&a, &f) == 57 * MS && a.exits_unknown == 1, "short thread seen only at exit counted (%.0f)",
	      total_oncpu(&a, &f));
	daemon_agg_free(&a);
}

/* Many processes, few slots: bounded exported series, conservation (when
 * nothing expires during the run), monotonic. */
static void slots_and_churn(unsigned long long expire_ns)
{
	struct agg a;
	struct agg_cfg c = cfg(5, 3);
	unsigned long long now = 0, want_on = 0, want_f = 0;
	double prev_sum[4096] = { 0 }, f;
	bool monotonic = true, bounded = true;
	size_t max_threads = 0, max_procs = 0;
	unsigned tid = 1000;
	struct thread_stats live[64];
	int nlive = 0;

	c.expire_ns = expire_ns;
	daemon_agg_init(&a, &c);
	printf("# churn with expire %.1f s\n", expire_ns / 1e9);
	/* 10,000 threads in 2,000 processes of 5 threads, a few alive at a time, 10 refreshes per batch */
	for (int round = 0; round < 2000; round++) {
		unsigned pid = tid;

		nlive = 0;
		for (int k = 0; k < 5; k++, tid++) {
			live[nlive] = ts(pid, tid, now + 1, 0, 0);
			live[nlive].cgroup_id = 1 + round % 3;
			nlive++;
		}
		for (int step = 0; step < 3; step++) {
			daemon_agg_begin(&a);
			for (int k = 0; k < nlive; k++) {
				unsigned long long on = (unsigned long long)(k + 1 + (round % 7)) * MS;

				live[k].oncpu_ns += on;
				live[k].c[0].value += k + 1;
				live[k].c[0].enabled = live[k].c[0].running = live[k].oncpu_ns;
				want_on += on;
				want_f += k + 1;
				if (step == 2) {	/* last step: exits in the drain after the snapshot ... */
					live[k].oncpu_ns += MS;
					live[k].c[0].value += 1;
					want_on += MS;
					want_f += 1;
					if (k % 2)
						daemon_agg_thread_seen(&a, &live[k]);
					daemon_agg_thread_exit(&a, &live[k]);	/* ... or before it ever was seen */
				} else {
					daemon_agg_thread_seen(&a, &live[k]);
				}
			}
			now += 100 * MS;
			daemon_agg_end(&a, now);
			if (a.threads.n > max_threads)
				max_threads = a.threads.n;
			if (a.procs.n > max_procs)
				max_procs = a.procs.n;
			if ((int)a.exported_procs > c.top_procs || (int)a.exported_threads > c.top_threads)
				bounded = false;
			/* every live series only grows: check the cgroup others */
			for (size_t i = 0; i < a.cgroups.cap; i++) {
				const struct agg_cgroup *cg = a.cgroups.vals[i];

				if (!cg)
					continue;
				if (cg->other.total.oncpu_ns < prev_sum[cg->id])
					monotonic = false;
				prev_sum[cg->id] = cg->other.total.oncpu_ns;
			}
		}
	}
	double on = total_oncpu(&a, &f);
	if (expire_ns > now)
		check(fabs(on - want_on) < 1 && fabs(f - want_f) < 1e-6,
		      "conservation over 10,000 threads: sum of series = sum of threads (%.0f vs %llu ns, %.0f vs %llu)",
		      on, want_on, f, want_f);
	check(bounded, "exported series never above top_procs=%d / top_threads=%d", c.top_procs, c.top_threads);
	check(monotonic, "cgroup [other] series monotonic under churn");
	check(max_threads <= 5 && a.threads.n == 0, "thread records bounded by live threads (max %zu, end %zu)", max_threads,
	      a.threads.n);
	check(max_procs <= (size_t)c.top_procs + 1, "process records bounded (max %zu)", max_procs);
	check(a.threads_lost == 0 && a.threads_exited == 10000, "10,000 exits folded, none lost (%llu, %llu)",
	      a.threads_exited, a.threads_lost);
	check(a.cgroups.n == 3, "three cgroups (%zu)", a.cgroups.n);
	for (int i = 0; i < 10; i++) {
		daemon_agg_begin(&a);
		daemon_agg_end(&a, now += expire_ns / 5);
	}
	check(a.procs.n == 0 && a.cgroups.n == 0 && a.exported_procs == 0, "all expired once idle (%zu procs, %zu cgroups)",
	      a.procs.n, a.cgroups.n);
	daemon_agg_free(&a);
}

static void stealing(void)
{
	struct agg a;
	struct agg_cfg c = cfg(2, 1);
	unsigned long long now = 0;
	struct thread_stats p1 = ts(1, 1, 1, 0, 0), p2 = ts(2, 2, 1, 0, 0), p3 = ts(3, 3, 1, 0, 0);

	daemon_agg_init(&a, &c);
	/* p1, p2 busy a little; p3 very busy later */
	for (int i = 0; i < 3; i++) {
		p1.oncpu_ns += 10 * MS;
		p2.oncpu_ns += 10 * MS;
		daemon_agg_begin(&a);
		daemon_agg_thread_seen(&a, &p1);
		daemon_agg_thread_seen(&a, &p2);
		daemon_agg_end(&a, now += SEC);
	}
	check(proc(&a, 1)->exported && proc(&a, 2)->exported, "two slots taken");
	double p2_before = proc(&a, 2)->s.total.oncpu_ns;
	for (int i = 0; i < 3; i++) {
		p1.oncpu_ns += 10 * MS;
		p3.oncpu_ns += 500 * MS;
		daemon_agg_begin(&a);
		daemon_agg_thread_seen(&a, &p1);
		daemon_agg_thread_seen(&a, &p2);
		daemon_agg_thread_seen(&a, &p3);
		daemon_agg_end(&a, now += SEC);
	}
	check(proc(&a, 3)->exported && !proc(&a, 2)->exported && proc(&a, 1)->exported,
	      "a much busier process takes the idle one's slot");
	check(proc(&a, 2)->s.total.oncpu_ns == p2_before, "the demoted series keeps its value for when it comes back");
	check(a.exported_procs == 2, "still two exported (%zu)", a.exported_procs);
	const struct agg_thread *t3 = u64map_get(&a.threads, 3);
	check(t3 && t3->exported && a.exported_threads == 1, "top thread is the busiest");
	/* pid 3 dies; pid reused by another program */
	p3.oncpu_ns += MS;
	daemon_agg_thread_exit(&a, &p3);
	daemon_agg_begin(&a);
	daemon_agg_thread_seen(&a, &p1);
	daemon_agg_thread_seen(&a, &p2);
	daemon_agg_end(&a, now += SEC);
	check(proc(&a, 3)->dead, "process 3 dead");
	struct thread_stats n3 = ts(3, 3, now, 2 * MS, 0);
	snprintf(n3.comm, sizeof(n3.comm), "newprog");
	daemon_agg_begin(&a);
	daemon_agg_thread_seen(&a, &p1);
	daemon_agg_thread_seen(&a, &p2);
	daemon_agg_thread_seen(&a, &n3);
	daemon_agg_end(&a, now += SEC);
	check(!proc(&a, 3)->dead && !strcmp(proc(&a, 3)->comm, "newprog"), "pid reuse starts a new process record");
	check(proc(&a, 3)->s.total.oncpu_ns == 2 * MS, "other labels: its series starts from zero");
	/* newprog exits; the same program gets the pid again: same labels, same series, still monotonic */
	n3.oncpu_ns += MS;
	daemon_agg_thread_exit(&a, &n3);
	daemon_agg_begin(&a);
	daemon_agg_end(&a, now += SEC);
	struct thread_stats m3 = ts(3, 3, now, 4 * MS, 0);
	snprintf(m3.comm, sizeof(m3.comm), "newprog");
	daemon_agg_begin(&a);
	daemon_agg_thread_seen(&a, &m3);
	daemon_agg_end(&a, now += SEC);
	check(proc(&a, 3)->s.total.oncpu_ns == 7 * MS, "same labels: the series goes on (%.0f)", proc(&a, 3)->s.total.oncpu_ns);
	daemon_agg_free(&a);
}

/* A process below min_share never gets a slot, even a free one. */
static void min_share(void)
{
	struct agg a;
	struct agg_cfg c = cfg(10, 2);
	struct thread_stats small = ts(50, 50, 1, 2 * MS, 1), big = ts(60, 60, 1, 100 * MS, 1);

	c.min_share = 0.005;	/* 0.5 % of a CPU: 5 ms per second */
	daemon_agg_init(&a, &c);
	daemon_agg_begin(&a);
	daemon_agg_thread_seen(&a, &small);
	daemon_agg_thread_seen(&a, &big);
	daemon_agg_end(&a, SEC);
	daemon_agg_begin(&a);
	daemon_agg_thread_seen(&a, &small);
	daemon_agg_thread_seen(&a, &big);
	daemon_agg_end(&a, 2 * SEC);
	check(!proc(&a, 50)->exported && proc(&a, 60)->exported, "min_share: 2 ms/s stays in [other], 100 ms/s gets a slot");
	check(proc(&a, 50)->cg->other.total.oncpu_ns == 2 * MS, "its time is in its cgroup's [other] series");
	daemon_agg_free(&a);
}

/* An interval without samples (no candidates, no array): the slots only decay (the sanitized
 * build checks that nothing is sorted: qsort(NULL, 0) is undefined). */
static void slots_no_samples(void)
{
	struct dsamp_slots s;
	struct dsamp_cand c = { .kind = DS_PROC, .id = 7, .hash = 1, .module = "/bin/x", .symbol = "f", .count = 4 };

	check(daemon_slots_init(&s, 2, 10 * SEC) == 0, "slots: init");
	daemon_slots_route(&s, &c, 1, 1000.0, SEC);
	daemon_slots_route(&s, NULL, 0, 1000.0, 2 * SEC);
	check(s.fns[0].used && s.fns[0].s.samples == 4 && fabs(s.fns[0].score - 4 * DSAMP_DECAY) < 1e-9 &&
	      !s.fns[1].used && s.other.samples == 0,
	      "slots: an interval with no samples decays the score (%.2f) and moves no sums", s.fns[0].score);
	daemon_slots_free(&s);
}

int main(void)
{
	basics();
	slots_no_samples();
	eviction();
	slots_and_churn(3 * SEC);
	slots_and_churn(100000 * SEC);
	stealing();
	min_share();
	return check_exit();
}
