// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * live_cost: what the live view costs tmabpf itself, with many threads.
 *
 * A workload of N threads (default 1000), each waking every 100 ms to spin
 * about 20 us, is profiled with 'tmabpf -p PID' three ways, one after the
 * other in the same run:
 *   live   the ncurses view in a private tmux server, refreshing every 1 s
 *   batch  --batch -I 1000, text to /dev/null (the same model, text back end)
 *   none   no view: final report only (the polling loop and the BPF side)
 * and, with --sample=999, batch and none again: what reading and naming the
 * sampled functions at every refresh adds (sampling_snapshot + the deltas).
 * After a warm-up, tmabpf's user+system CPU time (/proc/PID/stat utime +
 * stime, all its threads) over the window, as a share of one core, is
 * printed for each, and the view's own share (live - none).  The kernel
 * side (BPF programs at each switch) is not tmabpf's process time; the live
 * header's "bpf" figure is printed too.  Goal: live <= 2 % of one core.
 *
 * This host has no PMU, so the runs above have no TMA columns.  The model's
 * TMA cost is measured apart, from synthetic counts (no hardware reading):
 * view_update + the text back end over 1000 threads with the skylakex
 * recipe at --tma=3, 40 rows shown, per refresh; and sorted by a TMA column
 * (every row's TMA).
 *
 * usage: live_cost TMABPF [SECONDS [THREADS]]
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lib/clock.h"
#include "view/report_text.h"
#include "tma/tma.h"
#include "view/view_model.h"
#include "pmu/key_encode.h"


/* ---------- workload ---------- */

static void *worker(void *arg)
{
	struct timespec nap = { 0, 100 * 1000 * 1000 };

	(void)arg;
	for (;;) {
		unsigned long long t = mono_ns();

		while (mono_ns() - t < 20000)
			;
		nanosleep(&nap, NULL);
	}
	return NULL;
}

/* Forks the workload; returns its pid once every thread runs. */
static pid_t start_workload(int nthreads)
{
	int fd[2];
	pid_t pid;
	char c;

	if (pipe(fd))
		return -1;
	pid = fork();
	if (pid == 0) {
		pthread_attr_t a;

		close(fd[0]);
		pthread_attr_init(&a);
		pthread_attr_setstacksize(&a, 64 * 1024);
		for (int i = 0; i < nthreads; i++) {
			pthread_t t;

			if (pthread_create(&t, &a, worker, NULL)) {
				fprintf(stderr, "live_cost: thread %d: %s\n", i, strerror(errno));
				_exit(1);
			}
		}
		if (write(fd[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(fd[1]);
	if (pid < 0 || read(fd[0], &c, 1) != 1) {
		close(fd[0]);
		return -1;
	}
	close(fd[0]);
	return pid;
}

/* ---------- measuring ---------- */

static int cpu_ticks(pid_t pid, unsigned long long *ticks)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	/* after ")": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	*ticks = ut + st;
	return 0;
}

struct result {
	double cpu_pct;
	char note[256];
};

/* tmabpf's CPU share over secs, after warm seconds. */
static int measure(pid_t pid, double warm, double secs, struct result *res)
{
	unsigned long long t0, t1, c0, c1;

	usleep((useconds_t)(warm * 1e6));
	t0 = mono_ns();
	if (cpu_ticks(pid, &c0))
		return -1;
	usleep((useconds_t)(secs * 1e6));
	t1 = mono_ns();
	if (cpu_ticks(pid, &c1))
		return -1;
	res->cpu_pct = 100.0 * (double)(c1 - c0) / sysconf(_SC_CLK_TCK) / ((t1 - t0) / 1e9);
	return 0;
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static int sh_out(char *out, size_t len, const char *cmd)
{
	FILE *p = popen(cmd, "r");
	size_t n;

	if (!p)
		return -1;
	n = fread(out, 1, len - 1, p);
	out[n] = 0;
	return pclose(p);
}

static int wait_exit(pid_t pid, double secs)
{
	unsigned long long end = mono_ns() + (unsigned long long)(secs * 1e9);
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d", pid);
	while (mono_ns() < end) {
		if (access(path, F_OK))
			return 0;
		usleep(50000);
	}
	return -1;
}

static int run_live(const char *tmabpf, pid_t wl, double warm, double secs, struct result *res)
{
	char sock[128], out[8192], cmd[512], *p;
	pid_t pid;
	int r;

	snprintf(sock, sizeof(sock), "/tmp/tmabpf-live-cost-%d.sock", getpid());
	if (sh("tmux -S %s -f /dev/null new-session -d -s bench -x 200 -y 50 'exec %s -p %d 2>/dev/null'", sock, tmabpf,
	       wl))
		return -1;
	snprintf(cmd, sizeof(cmd), "tmux -S %s display -p -t bench '#{pane_pid}'", sock);
	if (sh_out(out, sizeof(out), cmd) || (pid = atoi(out)) <= 0) {
		sh("tmux -S %s kill-server", sock);
		return -1;
	}
	r = measure(pid, warm, secs, res);
	snprintf(cmd, sizeof(cmd), "tmux -S %s capture-pane -p -t bench", sock);
	if (sh_out(out, sizeof(out), cmd) == 0) {
		char *rows = strstr(out, " rows"), *bpf = strstr(out, "mux ");
		char *s = rows;

		while (s && s > out && s[-1] != ' ')
			s--;
		if (bpf && (p = strstr(bpf, " hits/s")))
			p[7] = 0;
		snprintf(res->note, sizeof(res->note), "view shows %.*s threads; %s", rows && s ? (int)(rows - s) : 1,
			 rows && s ? s : "?", bpf ? bpf : "");
	}
	sh("tmux -S %s send-keys -t bench q", sock);
	wait_exit(pid, 30);
	sh("tmux -S %s kill-server 2>/dev/null", sock);
	unlink(sock);
	return r;
}

static int run_plain(const char *tmabpf, pid_t wl, const char *args, const char *extra, double warm, double secs,
		     struct result *res)
{
	char pids[16];
	pid_t pid = fork();
	int st, r;

	if (pid == 0) {
		char *argv[8];
		int n = 0;

		if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
			_exit(127);
		snprintf(pids, sizeof(pids), "%d", wl);
		argv[n++] = (char *)tmabpf;
		argv[n++] = "-p";
		argv[n++] = pids;
		if (args) {
			argv[n++] = "--batch";
			argv[n++] = "-I";
			argv[n++] = (char *)args;
		} else {
			argv[n++] = "--quiet";
		}
		if (extra)
			argv[n++] = (char *)extra;
		argv[n] = NULL;
		execv(tmabpf, argv);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	r = measure(pid, warm, secs, res);
	kill(pid, SIGINT);
	waitpid(pid, &st, 0);
	return r;
}

/* ---------- the model's TMA cost ---------- */

static void synth_threads(struct thread_table *tt, int n, int nev, int round)
{
	struct thread_stats *t = calloc(n, sizeof(*t));

	for (int i = 0; i < n; i++) {
		t[i].pid = 100;
		t[i].tid = 100 + i;
		t[i].first_seen_ns = 1;
		snprintf(t[i].comm, sizeof(t[i].comm), "w%d", i % 100000);
		t[i].oncpu_ns = (unsigned long long)round * (1000000ULL + i * 1000ULL);
		for (int e = 0; e < nev; e++) {
			t[i].c[e].value = (unsigned long long)round * (100000000ULL + e * 7000000ULL + i * 1000ULL);
			t[i].c[e].enabled = t[i].c[e].running = (unsigned long long)round * 1000000000ULL;
		}
	}
	thread_table_set_live(tt, t, n);
}

/* ms per refresh: view_update + text back end (40 rows), TMA on or off; sort_tma: by TMA_L1 */
static double model_ms(int n, bool tma, bool sort_tma)
{
	static struct event_list evs;
	struct host_info host = { .cpu = "synthetic", .pmu = true };
	struct thread_table tt;
	struct report r = {};
	struct view v;
	unsigned long long t0, sum = 0;
	FILE *null = fopen("/dev/null", "w");
	char err[256];
	struct tma_env env = { 0 };
	static struct tma_plan plan;
	const int rounds = 6;

	evs.n = 0;
	if (!null || tma_plan(&plan, tma_cpu_by_name("skylakex"), 3, TMABPF_MAX_EVENTS, &env, tma_encode_key, err, sizeof(err)) ||
	    tma_plan_append(&plan, &evs, err, sizeof(err)))
		return -1;
	thread_table_init(&tt, evs.n);
	r = (struct report){ .host = &host, .recipe = "skylakex", .evs = &evs, .tt = &tt,
			     .tma_plan = tma ? &plan : NULL, .tma_level = 3 };
	view_init(&v, 40);
	view_start(&v, &r);
	for (int i = 1; i <= rounds; i++) {
		synth_threads(&tt, n, evs.n, i);
		r.duration_ns = r.mono_ns = i * 1000000000ULL;
		t0 = mono_ns();
		if (sort_tma && v.tab[VM_THREADS].ncols)
			for (int c = 0; c < v.tab[VM_THREADS].ncols; c++)
				if (v.tab[VM_THREADS].col[c].fmt == VM_F_BAR)
					v.tab[VM_THREADS].sort_col = c;
		view_update(&v, &r);
		report_text_interval(&v, null);
		if (i > 1)
			sum += mono_ns() - t0;	/* the first has no previous period */
	}
	view_free(&v);
	thread_table_free(&tt);
	fclose(null);
	return sum / 1e6 / (rounds - 1);
}

int main(int argc, char **argv)
{
	double secs = argc > 2 ? atof(argv[2]) : 20, warm = 3;
	int nthreads = argc > 3 ? atoi(argv[3]) : 1000;
	struct result live = {}, batch = {}, none = {}, sbatch = {}, snone = {};
	pid_t wl;
	int r;

	if (argc < 2 || secs <= 0 || nthreads <= 0) {
		fprintf(stderr, "usage: live_cost TMABPF [SECONDS [THREADS]]\n");
		return 2;
	}
	if (sh("tmux -V >/dev/null 2>&1")) {
		fprintf(stderr, "live_cost: tmux is needed (make deps)\n");
		return 2;
	}
	wl = start_workload(nthreads);
	if (wl < 0) {
		fprintf(stderr, "live_cost: starting the workload failed\n");
		return 1;
	}
	r = run_live(argv[1], wl, warm, secs, &live);
	r |= run_plain(argv[1], wl, "1000", NULL, warm, secs, &batch);
	r |= run_plain(argv[1], wl, NULL, NULL, warm, secs, &none);
	r |= run_plain(argv[1], wl, "1000", "--sample=999", warm, secs, &sbatch);
	r |= run_plain(argv[1], wl, NULL, "--sample=999", warm, secs, &snone);
	kill(wl, SIGKILL);
	waitpid(wl, NULL, 0);
	if (r) {
		fprintf(stderr, "live_cost: a measurement failed (is tmabpf running as root?)\n");
		return 1;
	}
	printf("workload: %d threads waking every 100 ms; tmabpf -p, %.0f s window after %.0f s warm-up\n", nthreads,
	       secs, warm);
	printf("  %-44s %6.2f %% of one core  (%s)\n", "live view, 1 s refresh (tmux 200x50):", live.cpu_pct, live.note);
	printf("  %-44s %6.2f %% of one core\n", "--batch -I 1000 (text to /dev/null):", batch.cpu_pct);
	printf("  %-44s %6.2f %% of one core\n", "no view (final report only):", none.cpu_pct);
	printf("  view's own share (live - no view): %.2f %% of one core; goal: live <= 2 %%: %s\n",
	       live.cpu_pct - none.cpu_pct, live.cpu_pct <= 2.0 ? "met" : "NOT met");
	printf("  %-44s %6.2f %% of one core\n", "--sample=999 --batch -I 1000:", sbatch.cpu_pct);
	printf("  %-44s %6.2f %% of one core\n", "--sample=999, no view:", snone.cpu_pct);
	printf("  sampled functions in the view (--sample=999 batch - no view): %.2f %% of one core\n",
	       sbatch.cpu_pct - snone.cpu_pct);
	{
		double off = model_ms(nthreads, false, false), on = model_ms(nthreads, true, false);
		double all = model_ms(nthreads, true, true);

		printf("model only, %d synthetic threads, skylakex --tma=3, 40 rows shown; ms per refresh "
		       "(at a 1 s refresh, 10 ms = 1 %% of one core):\n", nthreads);
		printf("  %-44s %6.2f ms\n", "no TMA:", off);
		printf("  %-44s %6.2f ms\n", "TMA for the header and the rows shown:", on);
		printf("  %-44s %6.2f ms\n", "sorted by TMA_L1 (every row's TMA):", all);
	}
	fflush(stdout);
	return 0;
}
