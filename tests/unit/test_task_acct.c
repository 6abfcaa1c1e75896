// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Task records into per-thread sums (task_acct.c): threads older than the
 * first iteration count from their first sighting, newer ones from birth;
 * blocked = lifetime - on-CPU - runqueue never goes down; a thread's end (exit
 * record held as the live thread, then the final record) gives its final
 * counts once, never twice, whatever the order of iterations and records;
 * state stays bounded; only derivable events are accepted; an iteration's stale
 * record of a thread whose final record came does not revive it; the run's end
 * flushes held exit records as final sums.  Estimated
 * (--sample-events): any event, each thread's counts its own estimates, less
 * those at its first sighting, an ended thread's from its final record.
 */
#include <string.h>
#include "check.h"
#include "pmu/events.h"
#include "collect/task_acct.h"

#define MS 1000000ULL

static struct task_rec rec(unsigned pid, unsigned tid, unsigned long long start, unsigned long long now,
			   unsigned long long exec, unsigned long long delay, unsigned long long flt)
{
	struct task_rec r = { .pid = pid, .tid = tid, .start_ns = start, .now_ns = now, .exec_ns = exec,
			      .run_delay_ns = delay, .min_flt = flt, .maj_flt = 1, .nvcsw = exec / MS, .nivcsw = 2,
			      .nr_migrations = 3 };

	snprintf(r.comm, sizeof(r.comm), "t%u", tid);
	return r;
}

static int finals;
static struct thread_stats last_final;

static void on_final(void *ctx, const struct thread_stats *s)
{
	finals++;
	last_final = *s;
}

int main(void)
{
	struct event_list evs = { 0 }, bad = { 0 };
	struct task_acct a;
	struct thread_stats out[8], s;
	struct task_rec r;
	char err[256];

	check(events_parse_list("task-clock,page-faults,minor-faults,major-faults,context-switches,cpu-migrations", NULL, &evs,
				err, sizeof(err)) == 0 && evs.n == 6, "the six derivable events parse");
	check(task_acct_init(&a, &evs, false, 4, err, sizeof(err)) == 0, "derivable events accepted");
	check(events_parse_list("task-clock,cpu-clock", NULL, &bad, err, sizeof(err)) == 0, "cpu-clock parses");
	{
		struct task_acct b;

		check(task_acct_init(&b, &bad, false, 4, err, sizeof(err)) != 0 && strstr(err, "'cpu-clock'"),
		      "cpu-clock refused, named: %s", err);
		task_acct_free(&b);
	}

	/* first iteration at t=1000 ms: thread 10 is older (counts from now), none else */
	task_acct_begin(&a, 1000 * MS);
	r = rec(1, 10, 100 * MS, 1000 * MS, 400 * MS, 50 * MS, 1000);
	check(task_acct_live(&a, &r, &s) == 0 && s.oncpu_ns == 0 && s.c[1].value == 0 && s.offcpu_blocked_ns == 0,
	      "an older thread starts at zero");
	task_acct_begin(&a, 1100 * MS);
	r = rec(1, 10, 100 * MS, 1100 * MS, 450 * MS, 60 * MS, 1010);
	check(task_acct_live(&a, &r, &s) == 0 && s.oncpu_ns == 50 * MS && s.offcpu_runqueue_ns == 10 * MS &&
		      s.offcpu_blocked_ns == 40 * MS && s.c[0].value == 50 * MS && s.c[1].value == 10 &&
		      s.c[2].value == 10 && s.c[3].value == 0 && s.switches_voluntary == 50,
	      "an older thread's sums since its first sighting (on-CPU %llu blocked %llu)",
	      (unsigned long long)s.oncpu_ns, (unsigned long long)s.offcpu_blocked_ns);
	check(s.first_seen_ns == 100 * MS && s.pid == 1 && s.tid == 10 && !strcmp(s.comm, "t10"),
	      "identity: tid and start time");

	/* thread 11, born after t0: from birth; running at the read, then its slice is folded */
	r = rec(1, 11, 1050 * MS, 1100 * MS, 10 * MS, 0, 5);
	check(task_acct_live(&a, &r, &s) == 0 && s.oncpu_ns == 10 * MS && s.offcpu_blocked_ns == 40 * MS &&
		      s.c[1].value == 6, "a new thread counts from birth");
	task_acct_begin(&a, 1200 * MS);
	r = rec(1, 10, 100 * MS, 1200 * MS, 450 * MS, 60 * MS, 1010);
	task_acct_live(&a, &r, &s);
	r = rec(1, 11, 1050 * MS, 1200 * MS, 100 * MS, 0, 5);	/* lifetime 150, on-CPU 100: blocked 50 */
	check(task_acct_live(&a, &r, &s) == 0 && s.offcpu_blocked_ns == 50 * MS, "blocked grows");
	task_acct_begin(&a, 1300 * MS);
	r = rec(1, 10, 100 * MS, 1300 * MS, 450 * MS, 60 * MS, 1010);
	task_acct_live(&a, &r, &s);
	r = rec(1, 11, 1050 * MS, 1210 * MS, 160 * MS, 0, 5);	/* lifetime 160, on-CPU 160: computed 0 */
	check(task_acct_live(&a, &r, &s) == 0 && s.offcpu_blocked_ns == 50 * MS, "blocked never goes down");

	/* thread 11 ends: exit record (held, shown live), then its final record */
	r = rec(1, 11, 1050 * MS, 1320 * MS, 165 * MS, 0, 7);
	r.exited = TASK_REC_EXIT;
	check(task_acct_exit(&a, &r, &s) == -1 && a.held == 1, "the exit record is held");
	task_acct_begin(&a, 1400 * MS);
	r = rec(1, 10, 100 * MS, 1400 * MS, 450 * MS, 60 * MS, 1010);
	task_acct_live(&a, &r, &s);
	r = rec(1, 11, 1050 * MS, 1400 * MS, 165 * MS, 0, 7);	/* still listed: before exit_notify() */
	check(task_acct_live(&a, &r, &s) == -1, "a thread listed after its exit record is not counted again");
	finals = 0;
	check(task_acct_held(&a, out, 8, on_final, NULL) == 1 && out[0].tid == 11 && !out[0].exited &&
		      out[0].c[1].value == 8 && finals == 0, "the held exit record stands for the thread");
	r = rec(1, 11, 1050 * MS, 1390 * MS, 170 * MS, 0, 7);
	r.nvcsw += 1;
	r.exited = TASK_REC_FINAL;
	check(task_acct_exit(&a, &r, &s) == 0 && s.exited && s.oncpu_ns == 170 * MS && s.c[1].value == 8 &&
		      s.exit_ns == 1325 * MS && a.held == 0,
	      "final sums: the final record's counts, the exit's time plus what ran after it (exit at %llu)",
	      (unsigned long long)s.exit_ns);

	/* thread 12 lives and dies between two iterations: from birth, once */
	r = rec(1, 12, 1410 * MS, 1420 * MS, 5 * MS, 1 * MS, 3);
	r.exited = TASK_REC_EXIT;
	task_acct_exit(&a, &r, &s);
	r.exited = TASK_REC_FINAL;
	check(task_acct_exit(&a, &r, &s) == 0 && s.oncpu_ns == 5 * MS && s.c[1].value == 4,
	      "a thread seen only at its end counts from birth");

	/* an older thread never seen: no base, not counted */
	r = rec(2, 20, 10 * MS, 1430 * MS, 5 * MS, 0, 3);
	r.exited = TASK_REC_FINAL;
	check(task_acct_exit(&a, &r, &s) == -1 && a.unknown_exits == 1, "an older unseen thread's end is not counted");

	/* an exit record whose final record never comes: its sums after TASK_ACCT_HOLD_ITERS, once */
	r = rec(3, 30, 1440 * MS, 1450 * MS, 7 * MS, 0, 9);
	r.exited = TASK_REC_EXIT;
	task_acct_exit(&a, &r, &s);
	finals = 0;
	for (int i = 0; i < TASK_ACCT_HOLD_ITERS + 1; i++) {
		task_acct_begin(&a, (1500 + i) * MS);
		task_acct_held(&a, out, 8, on_final, NULL);
	}
	check(finals == 1 && last_final.tid == 30 && last_final.exited && last_final.oncpu_ns == 7 * MS,
	      "an exit record held too long gives its own sums");
	r.exited = TASK_REC_FINAL;
	check(task_acct_exit(&a, &r, &s) == -1, "its late final record is ignored");

	/* bounded: at most max_threads (4) states; the rest counted */
	task_acct_begin(&a, 2000 * MS);
	for (unsigned t = 40; t < 50; t++) {
		r = rec(4, t, 1900 * MS, 2000 * MS, 1 * MS, 0, 1);
		task_acct_live(&a, &r, &s);
	}
	check(a.seen.n <= 4 && a.over_cap > 0, "states bounded (%zu), the rest counted (%llu)", a.seen.n, a.over_cap);
	task_acct_begin(&a, 2100 * MS);
	task_acct_begin(&a, 2200 * MS);
	check(a.seen.n == 0, "threads gone from the iteration are forgotten (%zu left)", a.seen.n);
	task_acct_free(&a);

	/* estimated: cpu-clock is fine; counts are the records' estimates */
	{
		struct task_rec_est e = { 0 };

		check(task_acct_init(&a, &bad, true, 4, err, sizeof(err)) == 0, "estimated: any event accepted");
		task_acct_begin(&a, 1000 * MS);
		e.r = rec(1, 10, 100 * MS, 1000 * MS, 400 * MS, 0, 0);	/* older: counts from now */
		e.est[1] = (struct counter_val){ .value = 500, .enabled = 600, .running = 500 };
		check(task_acct_live(&a, &e.r, &s) == 0 && s.c[1].value == 0 && s.c[1].enabled == 0,
		      "an older thread's estimate counts from its first sighting");
		task_acct_begin(&a, 1100 * MS);
		e.r.now_ns = 1100 * MS;
		e.est[1] = (struct counter_val){ .value = 1500, .enabled = 1800, .running = 1500 };
		check(task_acct_live(&a, &e.r, &s) == 0 && s.c[1].value == 1000 && s.c[1].enabled == 1200 &&
		      s.c[1].running == 1000 && s.c[0].value == 0, "its estimate since then");
		e.r.exited = TASK_REC_EXIT;
		e.est[1].value = 1700;
		check(task_acct_exit(&a, &e.r, &s) == -1, "estimated: the exit record is held");
		e.r.exited = TASK_REC_FINAL;
		e.est[1] = (struct counter_val){ .value = 1900, .enabled = 1900, .running = 1900 };
		check(task_acct_exit(&a, &e.r, &s) == 0 && s.exited && s.c[1].value == 1400,
		      "the final record's estimate, less the base");
		e.r = rec(1, 11, 1150 * MS, 1200 * MS, 5 * MS, 0, 0);	/* born after the start: from birth */
		e.r.exited = TASK_REC_FINAL;
		e.est[0] = (struct counter_val){ .value = 42, .enabled = 42, .running = 42 };
		check(task_acct_exit(&a, &e.r, &s) == 0 && s.c[0].value == 42, "a young thread's whole estimate");
		task_acct_free(&a);
	}

	/* a final record consumed after an iteration read the thread: the stale live record does not
	 * bring it back (a tombstone until the next iteration but one) */
	check(task_acct_init(&a, &evs, false, 8, err, sizeof(err)) == 0, "init");
	task_acct_begin(&a, 1000 * MS);
	r = rec(5, 60, 1100 * MS, 1200 * MS, 5 * MS, 0, 1);
	task_acct_begin(&a, 1200 * MS);
	check(task_acct_live(&a, &r, &s) == 0, "thread 60 live");
	task_acct_begin(&a, 1300 * MS);
	r.now_ns = 1300 * MS;
	r.exited = TASK_REC_EXIT;
	task_acct_exit(&a, &r, &s);
	r.exited = TASK_REC_FINAL;
	check(task_acct_exit(&a, &r, &s) == 0 && s.exited, "its final sums, once");
	r.exited = 0;
	check(task_acct_live(&a, &r, &s) == -1, "the iteration's stale record of it is not live again");
	task_acct_begin(&a, 1400 * MS);
	check(a.seen.n == 0, "the tombstone goes when the next iteration begins (%zu left)", a.seen.n);

	/* the run ends with an exit record held: flushed as the thread's final sums, once */
	r = rec(5, 61, 1450 * MS, 1500 * MS, 3 * MS, 0, 1);
	r.exited = TASK_REC_EXIT;
	task_acct_exit(&a, &r, &s);
	finals = 0;
	task_acct_flush(&a, on_final, NULL);
	check(finals == 1 && last_final.tid == 61 && last_final.exited && last_final.oncpu_ns == 3 * MS && a.held == 0,
	      "a held exit record flushed as final sums");
	task_acct_flush(&a, on_final, NULL);
	r.exited = TASK_REC_FINAL;
	check(finals == 1 && task_acct_exit(&a, &r, &s) == -1, "flushed once; its late final record ignored");
	task_acct_free(&a);
	return check_exit();
}
