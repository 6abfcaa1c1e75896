// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * uprobe_cost: what a probed call costs, measured in one run.
 *   per call on a tiny function (bench_tiny, in this binary):
 *     none | empty entry+return pair | hand-minimal pair with tmabpf's counter reads
 *     | hand-minimal per-(thread, function) delta (the same reads, kept per thread, differences added per row)
 *     | tmabpf --uprobe
 *     | tmabpf --uprobe --trace (span records to the ring buffer, drained into a trace file)
 *   attach/detach of 1000 functions (uprobe_multi, empty programs): an entry and a return link
 *   detached concurrently, and one session link (entry and return, as tmabpf attaches on >= 6.13)
 *   BPF ns per hit (kernel BPF stats): tmabpf vs hand-minimal, goal <= 1.15x: the two alternate
 *   UPROBE_COST_ROUNDS times (default 5); medians, and the range of the per-round ratios.
 *   The peer in the same rounds: bpftrace counting entry and return of bench_tiny (whole call and
 *   BPF time), so "below bpftrace" is measured per call, not only as a few-% throughput loss.
 *   UPROBE_COST_COMPARE="<tmabpf binary> ..." (up to 4) adds those builds to every round (A/B of
 *   builds on the same noisy VM) and prints their ratios too.
 *   Placement (x86; UPROBE_COST_NO_PLACEMENT=1 skips it): the same body entered by endbr64; push %rbp,
 *   probed past endbr64, at the symbol, and by bpftrace, against push %rbp alone (the emulated
 *   class): ratios past-endbr64/emulated (goal <= 1.3) and bpftrace/past-endbr64 (goal >= 4).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "child_progs.h"
#include "sym/elfsyms.h"
#include "pmu/events.h"
#include "collect/link_detach.h"
#include "pmu/perf_open.h"
#include "collect/uprobes_loader.h"
#include "min_uprobe.skel.h"
#include "lib/clock.h"
#include "tests/workloads/asm_func.h"

#define EVENTS "task-clock,page-faults"
#define CALLS 200000

__attribute__((noinline, used)) int bench_tiny(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

#if defined(__x86_64__)
/* Placement (user/sym/probe_place.h): bench_tiny's body entered by endbr64; push %rbp (probed past
 * endbr64 by default, at the symbol with --probe-at=symbol, as bpftrace does) and by push %rbp alone
 * (the emulated class at the symbol). */
ASM_FUNC_ENDBR_PUSH(bench_endbr_push);
ASM_FUNC_PUSH(bench_push);
int bench_endbr_push(int x);
int bench_push(int x);
#endif

/* The function measured, its name (for the probes' specs) and its calls per measurement. */
static int (*bench_fn)(int) = bench_tiny;
static const char *bench_name = "bench_tiny";
static int bench_calls = CALLS;
static double hits_per_call;	/* the last cost_under(): its programs' runs per call */

#define MAX_ROUNDS 50
#define MAX_CMP 4

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
	double s[MAX_ROUNDS];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static double min_of(const double *v, int n)
{
	double m = v[0];

	for (int i = 1; i < n; i++)
		m = v[i] < m ? v[i] : m;
	return m;
}

static double max_of(const double *v, int n)
{
	double m = v[0];

	for (int i = 1; i < n; i++)
		m = v[i] > m ? v[i] : m;
	return m;
}


static double ns_per_call(void)
{
	volatile int acc = 0;
	unsigned long long t0 = mono_ns();

	for (int i = 0; i < bench_calls; i++)
		acc += bench_fn(i);
	return (double)(mono_ns() - t0) / bench_calls;
}

static void prog_stats(struct bpf_program *p, unsigned long long *ns, unsigned long long *cnt)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_prog_get_info_by_fd(bpf_program__fd(p), &info, &len) == 0) {
		*ns += info.run_time_ns;
		*cnt += info.run_cnt;
	}
}

static struct bpf_link *attach(struct bpf_program *p, const char *exe, unsigned long *offs, int n, bool ret)
{
	LIBBPF_OPTS(bpf_uprobe_multi_opts, o, .offsets = offs, .cnt = n, .retprobe = ret);

	return bpf_program__attach_uprobe_multi(p, -1, exe, NULL, &o);
}

/* Per-call cost under a pair of programs; BPF ns per hit from run stats. */
static double pair_cost(struct bpf_program *in, struct bpf_program *out, const char *exe, unsigned long off,
			double *bpf_ns_hit)
{
	struct bpf_link *a = attach(in, exe, &off, 1, false), *b = attach(out, exe, &off, 1, true);
	unsigned long long ns = 0, cnt = 0;
	double r;

	if (!a || !b) {
		fprintf(stderr, "uprobe_cost: attach: %s\n", strerror(errno));
		exit(1);
	}
	r = ns_per_call();
	prog_stats(in, &ns, &cnt);
	prog_stats(out, &ns, &cnt);
	*bpf_ns_hit = cnt ? (double)ns / cnt * 2 : 0;	/* per call: entry + return */
	bpf_link__destroy(a);
	bpf_link__destroy(b);
	return r;
}

/* The uprobe programs of a child tmabpf; child_prog_stats() reads the ones
 * the child holds (its fds in /proc/PID/fdinfo), so other tmabpf instances
 * on the host do not count. */
static const char *const tmabpf_progs[] = { "tmabpf_uentry", "tmabpf_uexit", "tmabpf_usess", NULL };

/* Start a tool that probes this process: argv via execvp, output to /dev/null. */
static pid_t spawn_quiet(char *const argv[])
{
	pid_t child = fork();

	if (child == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(devnull, 1);
		dup2(devnull, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	return child;
}

/* Once the child's programs (progs; NULL: all it holds) fire: ns per call of
 * bench_tiny under them, their BPF ns per call in *bpf_ns_hit; then stop the
 * child.  0 when they never fired (the child failed or exited). */
static double cost_under(pid_t child, const char *const *progs, double *bpf_ns_hit)
{
	unsigned long long ns0 = 0, c0 = 0, ns1, c1;
	double r = 0;

	*bpf_ns_hit = 0;
	for (int i = 0; i < 200 && child > 0; i++) {	/* until its probes fire */
		ns_per_call();
		child_prog_stats(child, progs, &ns0, &c0);
		if (c0 || waitpid(child, NULL, WNOHANG) == child)
			break;
		usleep(50000);
	}
	if (c0) {
		child_prog_stats(child, progs, &ns0, &c0);
		r = ns_per_call();
		child_prog_stats(child, progs, &ns1, &c1);
		/* a peer's program set may change between the reads (bpftrace's sums went back once, and a
		 * 2^64 wrap read as 3.7e14 runs a call): then nothing was measured */
		*bpf_ns_hit = c1 > c0 ? (double)(ns1 - ns0) / (c1 - c0) * 2 : 0;	/* per call: entry + return */
		hits_per_call = c1 > c0 ? (double)(c1 - c0) / bench_calls : 0;
	}
	if (child > 0) {	/* SIGINT, then SIGKILL after 5 s (a bpftrace still starting may not take it) */
		pid_t w = 0;

		kill(child, SIGINT);
		for (int i = 0; i < 100 && (w = waitpid(child, NULL, WNOHANG)) == 0; i++)
			usleep(50000);
		if (w == 0) {
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
		}
	}
	return r;
}

/* Did the last measurement's programs run twice a call, entry and return, on every call (a peer that
 * attached late or missed calls is not a measurement of the same work)? */
static bool both_fired(void)
{
	return hits_per_call > 1.9 && hits_per_call < 2.1;
}

/* probe_at: NULL, or a --probe-at value */
static double tmabpf_cost_at(const char *tmabpf, const char *exe, const char *trace, const char *probe_at,
			     double *bpf_ns_hit)
{
	char pid[16], spec[4200], at[64];
	char *argv[12] = { (char *)tmabpf, "-p", pid, "-e", EVENTS, "--quiet", "--uprobe", spec };
	int n = 8;

	if (trace) {
		argv[n++] = "--trace";
		argv[n++] = (char *)trace;
	}
	if (probe_at) {
		snprintf(at, sizeof(at), "--probe-at=%s", probe_at);
		argv[n++] = at;
	}
	argv[n] = NULL;
	snprintf(pid, sizeof(pid), "%d", getpid());
	snprintf(spec, sizeof(spec), "%s:%s", exe, bench_name);
	return cost_under(spawn_quiet(argv), tmabpf_progs, bpf_ns_hit);
}

static double tmabpf_cost(const char *tmabpf, const char *exe, const char *trace, double *bpf_ns_hit)
{
	return tmabpf_cost_at(tmabpf, exe, trace, NULL, bpf_ns_hit);
}

/* The peer: bpftrace counting the entry and the return of the same function
 * in this process (-p), as bench/bench-decoder-overhead.py runs it.  Returns
 * ns per call, or 0 when bpftrace is missing or never attached. */
static double bpftrace_cost(const char *exe, double *bpf_ns_hit)
{
	char pid[16], prog[9000];
	char *argv[] = { "bpftrace", "-p", pid, "-e", prog, NULL };

	snprintf(pid, sizeof(pid), "%d", getpid());
	snprintf(prog, sizeof(prog), "uprobe:%s:%s { @c = count(); } uretprobe:%s:%s { @r = count(); }", exe, bench_name,
		 exe, bench_name);
	return cost_under(spawn_quiet(argv), NULL, bpf_ns_hit);
}

#if defined(__x86_64__)
#define PLACE_CALLS 50000	/* single-stepped calls cost ~10-40 us here */

/* Per probed call, added ns over the bare call, on an endbr64; push %rbp function: tmabpf probing past
 * endbr64, tmabpf --probe-at=symbol, bpftrace (at the symbol), against tmabpf on push %rbp alone (the
 * emulated class), alternating, rounds times; the programs' runs per call show the counts equal. */
static void placement_bench(const char *tmabpf, const char *exe, int rounds)
{
	double placed[MAX_ROUNDS], sym[MAX_ROUNDS], bt[MAX_ROUNDS], emul[MAX_ROUNDS] = { 0 }, h[4] = { 0 }, b;
	double r_emul[MAX_ROUNDS], r_bt[MAX_ROUNDS], none_e, none_p;
	int n_bt = 0;

	bench_calls = PLACE_CALLS;
	for (int i = 0; i < rounds; i++) {
		bench_fn = bench_push;
		bench_name = "bench_push";
		none_p = ns_per_call();
		emul[i] = tmabpf_cost(tmabpf, exe, NULL, &b) - none_p;
		h[0] = hits_per_call;
		bench_fn = bench_endbr_push;
		bench_name = "bench_endbr_push";
		none_e = ns_per_call();
		placed[i] = tmabpf_cost(tmabpf, exe, NULL, &b) - none_e;
		h[1] = hits_per_call;
		sym[i] = tmabpf_cost_at(tmabpf, exe, NULL, "symbol", &b) - none_e;
		h[2] = hits_per_call;
		hits_per_call = 0;
		bt[n_bt] = bpftrace_cost(exe, &b) - none_e;
		if (both_fired()) {	/* a round where none fired once read 0 */
			h[3] = hits_per_call;
			r_bt[n_bt] = bt[n_bt] / placed[i];
			n_bt++;
		}
		r_emul[i] = placed[i] / emul[i];
	}
	printf("placement: %d calls a measurement, %d alternating rounds, added ns per probed call (median), "
	       "program runs per call\n", PLACE_CALLS, rounds);
	printf("  %-44s %10.0f  %.2f\n", "push %rbp entry (emulated class), tmabpf", median(emul, rounds), h[0]);
	printf("  %-44s %10.0f  %.2f\n", "endbr64; push %rbp, tmabpf (past endbr64)", median(placed, rounds), h[1]);
	printf("  %-44s %10.0f  %.2f\n", "endbr64; push %rbp, tmabpf --probe-at=symbol", median(sym, rounds), h[2]);
	if (n_bt)
		printf("  %-44s %10.0f  %.2f\n", "endbr64; push %rbp, bpftrace (at the symbol)", median(bt, n_bt), h[3]);
	printf("ratio past-endbr64/emulated class, per call: %.2f median (%.2f .. %.2f) (goal <= 1.3)\n",
	       median(r_emul, rounds), min_of(r_emul, rounds), max_of(r_emul, rounds));
	if (n_bt)
		printf("ratio bpftrace/tmabpf past endbr64, per call: %.2f median (%.2f .. %.2f) (goal >= 4)\n",
		       median(r_bt, n_bt), min_of(r_bt, n_bt), max_of(r_bt, n_bt));
	else
		printf("bpftrace on bench_endbr_push: not measured (bpftrace missing or never attached)\n");
	printf("ratio --probe-at=symbol/past endbr64, per call: %.2f\n", median(sym, rounds) / median(placed, rounds));
	bench_fn = bench_tiny;
	bench_name = "bench_tiny";
	bench_calls = CALLS;
}
#endif

/* Attach/detach of the 1000 functions of a generated library (tests/workloads/gen_manyfuncs.sh), empty programs. */
static void attach_detach_1000(struct min_uprobe_bpf *skel, const char *libc)
{
	struct elfsyms s;
	unsigned long offs[1000];
	unsigned long long t0, t1, t2;
	struct bpf_link *a, *b, *links[2];
	char err[256];
	int n = 0;

	if (elfsyms_load(libc, &s, err, sizeof(err))) {
		fprintf(stderr, "uprobe_cost: %s\n", err);
		return;
	}
	for (size_t i = 0; i < s.nr_syms && n < 1000; i++)
		if (!(s.syms[i].flags & (ELFSYMS_F_NO_OFFSET | ELFSYMS_F_IFUNC)) && !strncmp(s.syms[i].name, "manyf_", 6))
			offs[n++] = s.syms[i].offset;
	t0 = mono_ns();
	a = attach(skel->progs.empty_entry, libc, offs, n, false);
	b = attach(skel->progs.empty_exit, libc, offs, n, true);
	t1 = mono_ns();
	if (!a || !b)
		fprintf(stderr, "uprobe_cost: attach %d probes to %s: %s\n", n, libc, strerror(errno));
	links[0] = a;
	links[1] = b;
	link_detach_all(links, 2);	/* as tmabpf detaches */
	t2 = mono_ns();
	printf("uprobe_multi, %d functions (entry+return links): attach %.1f ms (goal <= 30), detach %.1f ms "
	       "(goal <= 50)%s\n", n, (t1 - t0) / 1e6, (t2 - t1) / 1e6, a && b ? "" : " [attach FAILED]");
	if (bpf_program__fd(skel->progs.empty_session) >= 0) {
		int fd, ok;

		t0 = mono_ns();
		fd = uprobe_session_link(bpf_program__fd(skel->progs.empty_session), libc, offs, NULL, n);
		t1 = mono_ns();
		ok = fd >= 0;
		if (!ok)
			fprintf(stderr, "uprobe_cost: session link for %d probes in %s: %s\n", n, libc, strerror(errno));
		link_fds_close_all(&fd, 1);	/* as tmabpf detaches */
		t2 = mono_ns();
		printf("uprobe_multi, %d functions (one session link, as tmabpf): attach %.1f ms (goal <= 30), "
		       "detach %.1f ms (goal <= 50)%s\n", n, (t1 - t0) / 1e6, (t2 - t1) / 1e6,
		       ok ? "" : " [attach FAILED]");
	} else
		printf("uprobe_multi session links: not supported by this kernel (< 6.13)\n");
	elfsyms_free(&s);
}

int main(int argc, char **argv)
{
	const char *tmabpf = argc > 1 ? argv[1] : "build/tmabpf";
	char exe[4096];
	struct event_list evs = {};
	struct perf_counters pc = {};
	struct min_uprobe_bpf *skel;
	struct elfsyms s;
	const struct elfsym **m = NULL;
	const char *env_rounds = getenv("UPROBE_COST_ROUNDS");
	int rounds = env_rounds && atoi(env_rounds) > 0 && atoi(env_rounds) <= MAX_ROUNDS ? atoi(env_rounds) : 5;
	double none, empty, minimal = 0, delta, tm = 0, tr, b_empty, b_min, b_delta, b_tm, b_tr;
	double r_min[MAX_ROUNDS], r_tm[MAX_ROUNDS], ratio[MAX_ROUNDS], r_cmp[MAX_CMP][MAX_ROUNDS],
		ratio_cmp[MAX_CMP][MAX_ROUNDS], call_tm[MAX_ROUNDS], call_bt[MAX_ROUNDS], r_bt[MAX_ROUNDS],
		added_bt[MAX_ROUNDS];
	int n_bt = 0;
	char *other[MAX_CMP], *cmp_list = getenv("UPROBE_COST_COMPARE") ? strdup(getenv("UPROBE_COST_COMPARE")) : NULL;
	int n_other = 0;
	char trace[] = "/tmp/uprobe_cost-trace-XXXXXX";
	int tfd = mkstemp(trace);
	char err[256];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (len < 0)
		return 1;
	exe[len] = 0;
	libbpf_set_print(NULL);
	if (bpf_enable_stats(BPF_STATS_RUN_TIME) < 0)
		fprintf(stderr, "uprobe_cost: kernel BPF stats unavailable\n");
	if (elfsyms_load(exe, &s, err, sizeof(err)) || elfsyms_match_all(&s, "bench_tiny", &m) != 1) {
		fprintf(stderr, "uprobe_cost: cannot find bench_tiny in %s\n", exe);
		return 1;
	}
	if (events_parse_list(EVENTS, NULL, &evs, err, sizeof(err)) ||
	    perf_counters_open(&pc, &evs, libbpf_num_possible_cpus(), err, sizeof(err)))
		return 1;
	skel = min_uprobe_bpf__open();
	skel->rodata->nr_events = pc.nr_events;
	skel->rodata->nr_cpus = pc.nr_cpus;
	bpf_map__set_max_entries(skel->maps.counters, pc.nr_events * pc.nr_cpus);
	bpf_program__set_expected_attach_type(skel->progs.empty_session, ATTACH_UPROBE_SESSION);
	if (min_uprobe_bpf__load(skel)) {	/* kernel < 6.13: no sessions */
		min_uprobe_bpf__destroy(skel);
		skel = min_uprobe_bpf__open();
		skel->rodata->nr_events = pc.nr_events;
		skel->rodata->nr_cpus = pc.nr_cpus;
		bpf_map__set_max_entries(skel->maps.counters, pc.nr_events * pc.nr_cpus);
		bpf_program__set_autoload(skel->progs.empty_session, false);
		if (min_uprobe_bpf__load(skel))
			return 1;
	}
	for (int e = 0; e < pc.nr_events; e++)
		for (int c = 0; c < pc.nr_cpus; c++) {
			__u32 idx = e * pc.nr_cpus + c;

			if (pc.fds[idx] >= 0)
				bpf_map_update_elem(bpf_map__fd(skel->maps.counters), &idx, &pc.fds[idx], BPF_ANY);
		}
	for (char *tok = cmp_list ? strtok(cmp_list, " ") : NULL; tok && n_other < MAX_CMP; tok = strtok(NULL, " "))
		other[n_other++] = tok;
	none = ns_per_call();
	empty = pair_cost(skel->progs.empty_entry, skel->progs.empty_exit, exe, m[0]->offset, &b_empty);
	delta = pair_cost(skel->progs.delta_entry, skel->progs.delta_exit, exe, m[0]->offset, &b_delta);
	/* the ratio that has a goal: hand-minimal and tmabpf alternate, ROUNDS times (noise on a VM) */
	for (int i = 0; i < rounds; i++) {
		minimal = pair_cost(skel->progs.minimal_entry, skel->progs.minimal_exit, exe, m[0]->offset, &r_min[i]);
		tm = call_tm[i] = tmabpf_cost(tmabpf, exe, NULL, &r_tm[i]);
		ratio[i] = r_min[i] ? r_tm[i] / r_min[i] : 0;
		hits_per_call = 0;
		call_bt[n_bt] = bpftrace_cost(exe, &r_bt[n_bt]);
		if (both_fired() && call_bt[n_bt] > none) {
			added_bt[n_bt] = (call_tm[i] - none) / (call_bt[n_bt] - none);
			n_bt++;
		}
		for (int k = 0; k < n_other; k++) {
			tmabpf_cost(other[k], exe, NULL, &r_cmp[k][i]);
			ratio_cmp[k][i] = r_min[i] ? r_cmp[k][i] / r_min[i] : 0;
		}
	}
	b_min = median(r_min, rounds);
	b_tm = median(r_tm, rounds);
	if (tfd >= 0)
		close(tfd);
	tr = tmabpf_cost(tmabpf, exe, tfd >= 0 ? trace : NULL, &b_tr);
	if (tfd >= 0)
		unlink(trace);
	printf("tiny function bench_tiny, %d calls, events %s\n", CALLS, EVENTS);
	printf("%-26s %12s %14s %18s\n", "config", "ns/call", "added ns/call", "BPF ns/call (2 hits)");
	printf("%-26s %12.0f %14s %18s\n", "no probe", none, "-", "-");
	printf("%-26s %12.0f %14.0f %18.0f\n", "empty entry+return", empty, empty - none, b_empty);
	printf("%-26s %12.0f %14.0f %18.0f\n", "hand-minimal reads", minimal, minimal - none, b_min);
	printf("%-26s %12.0f %14.0f %18.0f\n", "hand-minimal row delta", delta, delta - none, b_delta);
	tm = median(call_tm, rounds);
	printf("%-26s %12.0f %14.0f %18.0f\n", "tmabpf --uprobe", tm, tm - none, b_tm);
	if (n_bt)
		printf("%-26s %12.0f %14.0f %18.0f\n", "bpftrace entry+return count", median(call_bt, n_bt),
		       median(call_bt, n_bt) - none, median(r_bt, n_bt));
	else
		printf("bpftrace entry+return count: not measured (bpftrace missing or never attached; make deps installs it)\n");
	printf("%-26s %12.0f %14.0f %18.0f\n", "tmabpf --uprobe --trace", tr, tr - none, b_tr);
	printf("ratio tmabpf/hand-minimal BPF time per call: %.2f median of %d alternating rounds (%.2f .. %.2f) "
	       "(goal <= 1.15)\n", median(ratio, rounds), rounds, min_of(ratio, rounds), max_of(ratio, rounds));
	for (int k = 0; k < n_other; k++)
		printf("ratio %s/hand-minimal BPF time per call: %.2f median (%.2f .. %.2f), %.0f ns/call\n", other[k],
		       median(ratio_cmp[k], rounds), min_of(ratio_cmp[k], rounds), max_of(ratio_cmp[k], rounds),
		       median(r_cmp[k], rounds));
	printf("ratio tmabpf/hand-minimal row delta, BPF time per call: %.2f (for information: that floor keeps no "
	       "time, nesting or migration)\n", b_delta ? b_tm / b_delta : 0);
	if (n_bt)
		printf("ratio tmabpf/bpftrace, added ns per call (whole call, same rounds): %.2f median (%.2f .. %.2f) "
		       "(goal: below 1, i.e. a probed call costs less under tmabpf than under bpftrace)\n",
		       median(added_bt, n_bt), min_of(added_bt, n_bt), max_of(added_bt, n_bt));
	printf("ratio tmabpf/empty pair, whole call: %.2f\n", empty - none > 0 ? (tm - none) / (empty - none) : 0);
	printf("ratio --trace/no trace: BPF time per call %.2f, whole call %.2f\n", b_tm ? b_tr / b_tm : 0,
	       tm - none > 0 ? (tr - none) / (tm - none) : 0);
#if defined(__x86_64__)
	if (!getenv("UPROBE_COST_NO_PLACEMENT"))
		placement_bench(tmabpf, exe, rounds);
#endif
	if (argc > 2)
		attach_detach_1000(skel, argv[2]);
	free(m);
	free(cmp_list);
	elfsyms_free(&s);
	min_uprobe_bpf__destroy(skel);
	perf_counters_close(&pc);
	return 0;
}
