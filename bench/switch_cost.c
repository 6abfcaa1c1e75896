// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * switch_cost: what tmabpf adds to every context switch, measured in one run.
 *   1. baseline: pinned pipe ping-pong (build/bench/pingpong --pin --batch), nothing attached
 *   2. minimal_ts: a hand-minimal sched_switch program (timestamp per tid)
 *   3. minimal_reads: the same plus the counter reads tmabpf does
 *   4. tmabpf -a with the same events
 *   5. tmabpf -a --trace: the thread-state program on every switch too (its file in a temporary
 *      folder, removed after)
 * Prints ns per round trip (2 switches), ns added per switch, and BPF run time
 * per sched_switch from kernel BPF stats (with --trace: both sched_switch programs' time per
 * switch), then the ratios tmabpf / minimal_reads and --trace / without.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "child_progs.h"
#include "pmu/events.h"
#include "pmu/perf_open.h"
#include "min_switch.skel.h"

#define EVENTS "task-clock,page-faults"

struct result {
	double ns_rt;		/* ns per round trip */
	double bpf_ns_run;	/* BPF ns per sched_switch run */
};

static double run_pingpong(const char *dir, int roundtrips)
{
	char cmd[512], line[512];
	double ns = -1;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s/pingpong --pin --batch -n %d", dir, roundtrips);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		char *s = strstr(line, "ns_per_roundtrip=");

		if (s)
			ns = atof(s + strlen("ns_per_roundtrip="));
	}
	pclose(p);
	return ns;
}

static double best_of(const char *dir, int roundtrips, int reps)
{
	double best = 1e18;

	for (int i = 0; i < reps; i++) {
		double v = run_pingpong(dir, roundtrips);

		if (v > 0 && v < best)
			best = v;
	}
	return best;
}

static void prog_ns_per_run(int fd, unsigned long long *ns, unsigned long long *cnt)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	*ns = *cnt = 0;
	if (bpf_prog_get_info_by_fd(fd, &info, &len) == 0) {
		*ns = info.run_time_ns;
		*cnt = info.run_cnt;
	}
}

static int measure_minimal(const char *dir, int rt, int reps, bool reads, struct perf_counters *pc,
			   struct result *r)
{
	struct min_switch_bpf *skel = min_switch_bpf__open();
	struct bpf_link *link;
	struct bpf_program *prog;
	unsigned long long ns, cnt;

	if (!skel)
		return -errno;
	skel->rodata->nr_events = pc->nr_events;
	skel->rodata->nr_cpus = pc->nr_cpus;
	bpf_map__set_max_entries(skel->maps.counters, pc->nr_events * pc->nr_cpus);
	if (min_switch_bpf__load(skel)) {
		min_switch_bpf__destroy(skel);
		return -errno;
	}
	for (int e = 0; e < pc->nr_events; e++)
		for (int c = 0; c < pc->nr_cpus; c++) {
			__u32 idx = e * pc->nr_cpus + c;

			if (pc->fds[idx] >= 0)
				bpf_map_update_elem(bpf_map__fd(skel->maps.counters), &idx, &pc->fds[idx], BPF_ANY);
		}
	prog = reads ? skel->progs.minimal_reads : skel->progs.minimal_ts;
	link = bpf_program__attach(prog);
	if (!link) {
		min_switch_bpf__destroy(skel);
		return -errno;
	}
	r->ns_rt = best_of(dir, rt, reps);
	prog_ns_per_run(bpf_program__fd(prog), &ns, &cnt);
	r->bpf_ns_run = cnt ? (double)ns / cnt : 0;
	bpf_link__destroy(link);
	min_switch_bpf__destroy(skel);
	return 0;
}

/* Run tmabpf -a in the background; read the stats of the sched_switch program
 * that this child holds (its program fds in /proc/PID/fdinfo): other tmabpf
 * instances on the host (tests, other checkouts) do not count. */
static int tmabpf_prog_stats(pid_t child, bool trace, unsigned long long *ns, unsigned long long *cnt)
{
	static const char *const names[] = { "tmabpf_switch", NULL };
	static const char *const state[] = { "tmabpf_state_sw", NULL };	/* BPF_OBJ_NAME_LEN: 15 characters */
	unsigned long long sns = 0, scnt = 0;

	child_prog_stats(child, names, ns, cnt);
	if (trace) {
		child_prog_stats(child, state, &sns, &scnt);
		if (!scnt)
			return -1;
		*ns += sns;	/* per switch: both programs' time, over the spine's runs */
	}
	return *cnt ? 0 : -1;
}

/* trace: a --trace FILE, or NULL */
static int measure_tmabpf(const char *dir, const char *tmabpf, const char *trace, int rt, int reps, struct result *r)
{
	unsigned long long ns0, cnt0, ns1, cnt1;
	pid_t pid = fork();

	if (pid == 0) {
		int devnull = open("/dev/null", 1);

		dup2(devnull, 1);
		dup2(devnull, 2);
		if (trace)
			execl(tmabpf, tmabpf, "-a", "-e", EVENTS, "--quiet", "--trace", trace, (char *)NULL);
		else
			execl(tmabpf, tmabpf, "-a", "-e", EVENTS, "--quiet", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 100 && tmabpf_prog_stats(pid, trace, &ns0, &cnt0); i++)
		usleep(50000);
	if (tmabpf_prog_stats(pid, trace, &ns0, &cnt0)) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		return -1;
	}
	r->ns_rt = best_of(dir, rt, reps);
	tmabpf_prog_stats(pid, trace, &ns1, &cnt1);
	r->bpf_ns_run = cnt1 > cnt0 ? (double)(ns1 - ns0) / (cnt1 - cnt0) : 0;
	kill(pid, SIGINT);
	waitpid(pid, NULL, 0);
	return 0;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "build/bench";
	const char *tmabpf = argc > 2 ? argv[2] : "build/tmabpf";
	int rt = 100000, reps = 3;
	struct event_list evs = {};
	struct perf_counters pc = {};
	struct result base, mts, mrd, tm, tr;
	char err[256], tdir[] = "/tmp/switch_cost-XXXXXX", tpath[64];
	int stats_fd, bad;

	if (events_parse_list(EVENTS, NULL, &evs, err, sizeof(err)) ||
	    perf_counters_open(&pc, &evs, libbpf_num_possible_cpus(), err, sizeof(err))) {
		fprintf(stderr, "switch_cost: %s\n", err);
		return 1;
	}
	libbpf_set_print(NULL);
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0)
		fprintf(stderr, "switch_cost: kernel BPF stats unavailable: %s\n", strerror(errno));
	base.ns_rt = best_of(dir, rt, reps);
	if (!mkdtemp(tdir)) {
		fprintf(stderr, "switch_cost: a temporary folder: %s\n", strerror(errno));
		return 1;
	}
	snprintf(tpath, sizeof(tpath), "%s/trace.json", tdir);
	bad = measure_minimal(dir, rt, reps, false, &pc, &mts) || measure_minimal(dir, rt, reps, true, &pc, &mrd) ||
	      measure_tmabpf(dir, tmabpf, NULL, rt, reps, &tm) || measure_tmabpf(dir, tmabpf, tpath, rt, reps, &tr);
	unlink(tpath);
	rmdir(tdir);
	if (bad) {
		fprintf(stderr, "switch_cost: a measurement failed (root? BTF?)\n");
		return 1;
	}
	printf("pinned pipe ping-pong, %d round trips (2 switches each), best of %d; events: %s\n", rt, reps, EVENTS);
	printf("%-16s %12s %16s %16s\n", "config", "ns/roundtrip", "ns added/switch", "bpf ns/switch");
	printf("%-16s %12.0f %16s %16s\n", "baseline", base.ns_rt, "-", "-");
	printf("%-16s %12.0f %16.0f %16.0f\n", "minimal_ts", mts.ns_rt, (mts.ns_rt - base.ns_rt) / 2, mts.bpf_ns_run);
	printf("%-16s %12.0f %16.0f %16.0f\n", "minimal_reads", mrd.ns_rt, (mrd.ns_rt - base.ns_rt) / 2, mrd.bpf_ns_run);
	printf("%-16s %12.0f %16.0f %16.0f\n", "tmabpf -a", tm.ns_rt, (tm.ns_rt - base.ns_rt) / 2, tm.bpf_ns_run);
	printf("%-16s %12.0f %16.0f %16.0f\n", "tmabpf -a --trace", tr.ns_rt, (tr.ns_rt - base.ns_rt) / 2, tr.bpf_ns_run);
	printf("ratio tmabpf/minimal_reads (bpf ns per switch): %.2f (goal <= 1.30)\n",
	       mrd.bpf_ns_run ? tm.bpf_ns_run / mrd.bpf_ns_run : 0);
	printf("ratio --trace/without (bpf ns per switch, thread-state records): %.2f\n",
	       tm.bpf_ns_run ? tr.bpf_ns_run / tm.bpf_ns_run : 0);
	printf("counter reads alone: %.0f ns per switch (%d events)\n", mrd.bpf_ns_run - mts.bpf_ns_run, evs.n);
	perf_counters_close(&pc);
	return 0;
}
