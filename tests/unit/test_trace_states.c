// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * --trace thread-state slices without BPF: synthetic state records (struct
 * state_rec) through trace_states_record(), and the slices it writes: the
 * state before a thread's first record, seeds, a wakeup of a running thread,
 * a switch-in the kernel never traced (inferred from the runtime), records
 * before the window, after an exit, a reused tid, records drained after the
 * run stopped, and the close at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "trace/trace_states.h"
#include "trace/trace_writer.h"

#define US 1000ULL

struct slice {
	char name[16];
	unsigned long long start, end;	/* ns since the origin (0) */
};

static void rec_delay(struct trace_states *s, __u32 tid, __u32 kind, unsigned long long ts, unsigned long long exec,
		      unsigned long long delay)
{
	struct state_rec r = { .ts = ts, .pid = 100, .tid = tid, .kind = kind, .cpu = 1, .exec = exec, .delay = delay };

	snprintf(r.comm, sizeof(r.comm), "t%u", tid);
	trace_states_record(s, &r);
}

static void rec(struct trace_states *s, __u32 tid, __u32 kind, unsigned long long ts, unsigned long long exec)
{
	rec_delay(s, tid, kind, ts, exec, 0);
}

/* The state slices of tid in the file, in the order written (at most max). */
static int slices_of(const char *path, __u32 tid, struct slice *out, int max)
{
	FILE *f = fopen(path, "r");
	char line[512], want[48];
	int n = 0;

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "\"tid\":%u,", TRACE_STATE_TID_BASE + tid);
	while (fgets(line, sizeof(line), f) && n < max) {
		const char *ts = strstr(line, "\"ts\":"), *name = strstr(line, "\"name\":\""), *dur = strstr(line, "\"dur\":");
		double a, d;

		if (!strstr(line, "\"thread_state\"") || !strstr(line, want) || !ts || !name || !dur)
			continue;
		sscanf(ts + 5, "%lf", &a);
		sscanf(dur + 6, "%lf", &d);
		sscanf(name + 8, "%15[^\"]", out[n].name);
		out[n].start = (unsigned long long)(a * 1000 + 0.5);
		out[n].end = out[n].start + (unsigned long long)(d * 1000 + 0.5);
		n++;
	}
	fclose(f);
	return n;
}

static void expect(const char *path, __u32 tid, const char *what, const struct slice *want, int n)
{
	struct slice got[32];
	int k = slices_of(path, tid, got, 32), ok = k == n;

	for (int i = 0; ok && i < n; i++)
		ok = !strcmp(got[i].name, want[i].name) && got[i].start == want[i].start && got[i].end == want[i].end;
	check(ok, "%s: %d slices (want %d)", what, k, n);
	if (!ok)
		for (int i = 0; i < k; i++)
			printf("#   %s [%llu, %llu)\n", got[i].name, got[i].start, got[i].end);
}

int main(void)
{
	char path[] = "/tmp/tmabpf-test-states-XXXXXX", err[256];
	struct trace_writer w;
	struct trace_states s;
	unsigned long long stop = 0;	/* the run's accounting stop, 0 while running */
	int fd = mkstemp(path);

	if (fd < 0)
		return 1;
	close(fd);
	check(trace_writer_open(&w, path, 0600, 0, err, sizeof(err)) == 0, "writer opens %s", path);
	trace_states_init(&s, &w);
	trace_states_start(&s, 10 * US, &stop);

	/* 1: first seen switching in: Runnable since the window's start; preempted, back, blocks, woken,
	 * runs, exits; a record before the window counts as at its start */
	rec(&s, 1, STATE_IN, 20 * US, 0);
	rec(&s, 1, STATE_PREEMPT, 30 * US, 1000);
	rec(&s, 1, STATE_IN, 35 * US, 0);
	rec(&s, 1, STATE_WAKE, 36 * US, 0);		/* woken while still running: nothing */
	rec(&s, 1, STATE_BLOCK, 40 * US, 6000);
	rec(&s, 1, STATE_WAKE, 50 * US, 0);
	rec(&s, 1, STATE_IN, 52 * US, 0);
	rec(&s, 1, STATE_EXIT, 60 * US, 14000);
	rec(&s, 1, STATE_PREEMPT, 61 * US, 14500);	/* preempted in do_exit: after its exit, nothing */
	/* 2: a seed (blocked at attach), then a switch-out with no switch-in traced: it ran its runtime
	 * since its last switch-out (3 us) before it; the seed after a change is ignored */
	rec(&s, 2, STATE_SEED_BLOCKED, 12 * US, 5000);
	rec(&s, 2, STATE_WAKE, 20 * US, 5000);
	rec(&s, 2, STATE_IN, 21 * US, 5000);
	rec(&s, 2, STATE_BLOCK, 25 * US, 9000);
	rec(&s, 2, STATE_BLOCK, 40 * US, 12000);	/* its switch-in untraced: running since 37 us */
	rec(&s, 2, STATE_SEED_RUNNING, 41 * US, 0);
	/* 3: born in the window, then its tid reused by another process' new thread after its exit */
	rec(&s, 3, STATE_NEW, 30 * US, 0);
	rec(&s, 3, STATE_IN, 31 * US, 0);
	rec(&s, 3, STATE_EXIT, 33 * US, 2000);
	rec(&s, 3, STATE_NEW, 45 * US, 0);
	/* 6: seen by the iterator between its fork and its first wakeup: one Runnable slice from the start */
	rec(&s, 6, STATE_SEED_RUNNABLE, 12 * US, 0);
	rec(&s, 6, STATE_NEW, 13 * US, 0);
	rec(&s, 6, STATE_IN, 15 * US, 0);
	/* 4: a record from another CPU a little earlier than the thread's previous one: clamped */
	rec(&s, 4, STATE_BLOCK, 20 * US, 0);
	rec(&s, 4, STATE_WAKE, 19 * US, 0);
	/* 7: a switch-out of a thread not running with no runtime since its last change: nothing ran */
	rec(&s, 7, STATE_PREEMPT, 20 * US, 3000);
	rec(&s, 7, STATE_PREEMPT, 30 * US, 3000);
	/* 8: blocked, then a switch-out with neither its wakeup nor its switch-in traced: it ran 4 us and
	 * waited 2 us in a runqueue (schedstat) before that */
	rec_delay(&s, 8, STATE_BLOCK, 20 * US, 1000, 500);
	rec_delay(&s, 8, STATE_PREEMPT, 40 * US, 5000, 2500);
	/* a malformed record */
	rec(&s, 5, STATE_KIND_MAX, 20 * US, 0);
	/* 9: the run stops at 70 us; its records drained after that (the final refresh drains the ring
	 * before the trace closes) count as at the stop: no slice runs past the window */
	rec(&s, 9, STATE_IN, 20 * US, 0);
	stop = 70 * US;
	rec(&s, 9, STATE_PREEMPT, 75 * US, 55000);
	rec(&s, 9, STATE_IN, 80 * US, 0);
	trace_states_close_all(&s, 70 * US);
	check(s.clamped == 1, "one record clamped (%llu)", s.clamped);
	check(s.inferred == 2, "two switch-ins inferred (%llu)", s.inferred);
	check(s.bad == 1, "one malformed record (%llu)", s.bad);
	check(trace_writer_close(&w, err, sizeof(err)) == 0, "writer closes");

	expect(path, 1, "a thread's whole life, from the window's start",
	       (struct slice[]){ { "Runnable", 10 * US, 20 * US }, { "Running", 20 * US, 30 * US },
				 { "Runnable", 30 * US, 35 * US }, { "Running", 35 * US, 40 * US },
				 { "Blocked", 40 * US, 50 * US }, { "Runnable", 50 * US, 52 * US },
				 { "Running", 52 * US, 60 * US } }, 7);
	expect(path, 2, "a seed, and a switch-in inferred from the runtime",
	       (struct slice[]){ { "Blocked", 10 * US, 20 * US }, { "Runnable", 20 * US, 21 * US },
				 { "Running", 21 * US, 25 * US }, { "Blocked", 25 * US, 37 * US },
				 { "Running", 37 * US, 40 * US }, { "Blocked", 40 * US, 70 * US } }, 6);
	expect(path, 3, "born in the window; its tid reused after its exit",
	       (struct slice[]){ { "Runnable", 30 * US, 31 * US }, { "Running", 31 * US, 33 * US },
				 { "Runnable", 45 * US, 70 * US } }, 3);
	expect(path, 4, "a record earlier than the thread's previous one",
	       (struct slice[]){ { "Running", 10 * US, 20 * US }, { "Runnable", 20 * US, 70 * US } }, 2);
	expect(path, 6, "seeded before its first wakeup",
	       (struct slice[]){ { "Runnable", 10 * US, 15 * US }, { "Running", 15 * US, 70 * US } }, 2);
	expect(path, 7, "no runtime, no switch-in inferred",
	       (struct slice[]){ { "Running", 10 * US, 20 * US }, { "Runnable", 20 * US, 70 * US } }, 2);
	expect(path, 8, "an untraced wakeup and switch-in, from the runtime and the runqueue wait",
	       (struct slice[]){ { "Running", 10 * US, 20 * US }, { "Blocked", 20 * US, 34 * US },
				 { "Runnable", 34 * US, 36 * US }, { "Running", 36 * US, 40 * US },
				 { "Runnable", 40 * US, 70 * US } }, 5);
	expect(path, 9, "records drained after the stop end at it",
	       (struct slice[]){ { "Runnable", 10 * US, 20 * US }, { "Running", 20 * US, 70 * US } }, 2);
	trace_states_free(&s);
	unlink(path);
	return check_exit();
}
