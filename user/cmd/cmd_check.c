// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * tmabpf check [--cpu NAME] [--loops N]: what this host can do; the command
 * to run first on a new server.
 *
 * One line per item, OK / WARN (works, with a limit it names) / FAIL (missing:
 * the line says the fix): kernel, privileges, perf_event_paranoid, BTF, the
 * PMU driver, how many counters are schedulable together on every CPU, the
 * NMI watchdog, other processes holding perf events, uprobe_multi and
 * session links, the TMA recipe.  Then, on a host with a PMU, a calibrated
 * loop (2 instructions per iteration) counted by tmabpf and by perf stat side
 * by side: instructions, cycles, and the recipe's TMA level-1 nodes computed
 * from either side's counts, PASS/FAIL per line with the numbers.
 * Exit status: 0, 1 when a line FAILs, 2 for bad usage.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "cmd/cmd_check.h"
#include "cmd/perf_csv.h"
#include "cmd/report_read.h"
#include "lib/parse.h"
#include "lib/text_fit.h"
#include "collect/uprobes_loader.h"
#include "lib/kernel_file.h"
#include "model/report.h"
#include "model/zero_counts.h"
#include "pmu/cpu_detect.h"
#include "pmu/events.h"
#include "pmu/host.h"
#include "tma/tma_recipes.h"
#include "tma/tma.h"
#include "pmu/tma_env_host.h"
#include "pmu/key_encode.h"

extern char **environ;

#define DEFAULT_LOOPS 100000000UL	/* 2e8 instructions: 1/3 s at 600 MIPS (QEMU), 50 ms on a core */

struct check {
	int fail, warn;
	int width;	/* --width: each line's explanation wrapped under its text, the status and item kept first */
};

__attribute__((format(printf, 3, 4))) static void line(struct check *c, const char *status, const char *fmt, ...)
{
	char msg[4096];
	va_list ap;

	if (!strcmp(status, "FAIL"))
		c->fail++;
	else if (!strcmp(status, "WARN"))
		c->warn++;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	text_wrapf(stdout, c->width, 6, "%-5s %s", status, msg);
}

/* ---------- counters ---------- */

static int perf_open(struct perf_event_attr *a, int cpu, int group)
{
	return (int)syscall(__NR_perf_event_open, a, -1, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

/* A raw event that needs a general-purpose counter (never the fixed or cycle counter). */
static void general_event(struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_RAW;
#if defined(__aarch64__)
	a->config = 0x08;	/* INST_RETIRED */
#else
	a->config = 0xc0;	/* Intel INST_RETIRED.ANY_P, AMD retired instructions */
#endif
	a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
}

/*
 * A group of k general-counter events on cpu: 1 when the PMU accepts it and
 * it got scheduled (counted for some time), 0 when accepted but never
 * scheduled (counters held by someone else), -errno when refused (more than
 * the PMU has; arm_pmu's check skips disabled events, so all are enabled).
 */
static int group_runs(int cpu, int k)
{
	struct perf_event_attr a;
	int fds[64], n = 0, r = 1;
	struct { __u64 value, enabled, running; } v = {};

	general_event(&a);
	for (; n < k; n++) {
		fds[n] = perf_open(&a, cpu, n ? fds[0] : -1);
		if (fds[n] < 0) {
			r = -errno;
			break;
		}
	}
	if (r > 0) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };

		nanosleep(&ts, NULL);	/* system-wide: it counts on that CPU whatever runs */
		if (read(fds[0], &v, sizeof(v)) != sizeof(v) || !v.running)
			r = 0;
	}
	while (n > 0)
		close(fds[--n]);
	return r;
}

/* The general counters the PMU has, and how many are schedulable together
 * on every CPU (*free); 0 when none opens. */
static int check_counters(struct check *c, int ncpus, int *free)
{
	int hw = 0, sched = 64, r = 0;

	while (hw < 63 && (r = group_runs(0, hw + 1)) >= 0)
		hw++;
	*free = 0;
	if (!hw) {
		line(c, "FAIL", "counters: no general-purpose counter opens (%s)", strerror(-r));
		return 0;
	}
	for (int cpu = 0; cpu < ncpus; cpu++) {
		int k = hw;

		while (k > 0 && group_runs(cpu, k) <= 0)
			k--;
		if (k < sched)
			sched = k;
	}
	if (sched == hw)
		line(c, "OK", "counters: %d general-purpose counters, all schedulable together on every CPU", hw);
	else
		line(c, "WARN", "counters: %d general-purpose counters, only %d schedulable together on some CPU: others "
		     "hold %d (the NMI watchdog, other agents: see below); tmabpf multiplexes beyond that", hw, sched,
		     hw - sched);
	*free = sched;
	return hw;
}

/* Processes holding perf events (their fds), ourselves left out. */
static void check_agents(struct check *c)
{
	DIR *proc = opendir("/proc");
	struct dirent *d;
	char list[512] = "";
	int holders = 0, unseen = 0, self = getpid();
	size_t n = 0;

	if (!proc) {
		line(c, "WARN", "other agents: /proc unreadable");
		return;
	}
	while ((d = readdir(proc))) {
		int pid = atoi(d->d_name), events = 0;
		char path[300], link[64], comm[64] = "?";
		struct dirent *f;
		DIR *fds;

		if (pid <= 0 || pid == self)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		if (!(fds = opendir(path))) {
			unseen += errno == EACCES || errno == EPERM;
			continue;
		}
		while ((f = readdir(fds))) {
			ssize_t l;

			snprintf(path, sizeof(path), "/proc/%d/fd/%s", pid, f->d_name);
			l = readlink(path, link, sizeof(link) - 1);
			if (l > 0 && (link[l] = 0, !strcmp(link, "anon_inode:[perf_event]")))
				events++;
		}
		closedir(fds);
		if (!events)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		FILE *cf = fopen(path, "r");
		if (cf) {
			if (fgets(comm, sizeof(comm), cf))
				comm[strcspn(comm, "\n")] = 0;
			fclose(cf);
		}
		holders++;
		if (n + 64 < sizeof(list))
			n += snprintf(list + n, sizeof(list) - n, "%s%s (pid %d): %d", n ? ", " : "", comm, pid, events);
	}
	closedir(proc);
	if (unseen && !holders)
		line(c, "SKIP", "other agents: not seen: %d processes' file descriptors are not readable as this user "
		     "(needs root or CAP_SYS_PTRACE: run with sudo)", unseen);
	else if (holders)
		line(c, "WARN", "other agents: %d %s perf events: %s (they share the counters)", holders,
		     holders > 1 ? "processes hold" : "process holds", list);
	else
		line(c, "OK", "other agents: no other process holds a perf event");
}

/* ---------- BPF features ---------- */

/* libbpf's own probe: a link on "/" fails with EBADF (not EINVAL) where the
 * kernel has that attach type (a session link: the raw syscall, see
 * uprobe_session_link). */
static bool uprobe_link_works(enum bpf_attach_type type)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, po, .expected_attach_type = type);
	LIBBPF_OPTS(bpf_link_create_opts, lo);
	unsigned long offset = 0;
	int prog, link, err;

	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, 2, &po);
	if (prog < 0)
		return false;
	lo.uprobe_multi.path = "/";
	lo.uprobe_multi.offsets = &offset;
	lo.uprobe_multi.cnt = 1;
	if (type == (enum bpf_attach_type)ATTACH_UPROBE_SESSION)
		link = uprobe_session_link(prog, "/", &offset, NULL, 1);
	else
		link = bpf_link_create(prog, -1, type, &lo);
	err = errno;
	if (link >= 0)
		close(link);
	close(prog);
	return link < 0 && err == EBADF;
}

/* ---------- the calibrated loop ---------- */

/* Exactly 2 instructions per iteration. */
static void calibrated_loop(unsigned long n)
{
#if defined(__aarch64__)
	asm volatile("1: subs %0, %0, #1\n\tb.ne 1b" : "+r"(n) : : "cc");
#elif defined(__x86_64__)
	asm volatile("1: dec %0\n\tjnz 1b" : "+r"(n) : : "cc");
#else
	for (volatile unsigned long i = 0; i < n; i++)
		;
#endif
}

/* Run argv, its output to /dev/null; its exit status, -1 when it could not run. */
static int run_quiet(char *const argv[])
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st, r;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	r = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (r)
		return -1;
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The counts of the profiled process in a tmabpf JSON report, evs' order. */
static int report_counts(const char *path, const struct event_list *evs, double *out)
{
	const char *names[TMABPF_MAX_EVENTS];

	for (int e = 0; e < evs->n; e++)
		names[e] = evs->ev[e].name;
	return report_read_process_counts(path, names, evs->n, out);
}

/* -e spelling of an event for perf stat (the recipe's encodings). */
static void perf_spelling(const struct event_desc *d, const char *pmu, char *buf, size_t len)
{
	const struct perf_event_attr *a = &d->attr;

	if (d->from_user)
		snprintf(buf, len, "%s", d->name);
	else if (a->type == PERF_TYPE_RAW && !a->config1 && !a->config2)
		snprintf(buf, len, "r%llx", (unsigned long long)a->config);
	else
		snprintf(buf, len, "%s/config=0x%llx,config1=0x%llx,config2=0x%llx/", pmu, (unsigned long long)a->config,
			 (unsigned long long)a->config1, (unsigned long long)a->config2);
}

struct side {
	double v[TMABPF_MAX_EVENTS];
	bool ok;
};

/* The loop counted by tmabpf and by perf stat, evs' events; false when a side could not run. */
static void count_both(struct check *c, const char *self, const char *cpu, const struct event_list *evs,
		       unsigned long loops, const char *pmu, struct side *tm, struct side *pf)
{
	char dir[] = "/tmp/tmabpf-check-XXXXXX", json[64], csv[64], n[32], elist[2048] = "", one[256];
	struct perf_csv *pc;
	char perr[256];

	tm->ok = pf->ok = false;
	if (!mkdtemp(dir)) {
		line(c, "FAIL", "calibrated loop: mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(json, sizeof(json), "%s/tm.json", dir);
	snprintf(csv, sizeof(csv), "%s/perf.csv", dir);
	snprintf(n, sizeof(n), "%lu", loops);
	for (int e = 0; e < evs->n; e++) {
		perf_spelling(&evs->ev[e], pmu, one, sizeof(one));
		snprintf(elist + strlen(elist), sizeof(elist) - strlen(elist), "%s%s", e ? "," : "", one);
	}
	char *tm_argv[16] = { (char *)self, "--quiet", "--json", json };
	int i = 4;
	if (cpu) {
		tm_argv[i++] = "--cpu";
		tm_argv[i++] = (char *)cpu;
	}
	if (evs->ev[0].from_user) {
		tm_argv[i++] = "-e";
		tm_argv[i++] = elist;
	}
	char *tail[] = { "--", (char *)self, "check", "--calibrate", n, NULL };
	memcpy(tm_argv + i, tail, sizeof(tail));
	tm->ok = run_quiet(tm_argv) == 0 && report_counts(json, evs, tm->v) == 0;
	char *pf_argv[] = { "perf", "stat", "-x,", "-o", csv, "-e", elist, "--", (char *)self, "check", "--calibrate",
			    n, NULL };
	pc = calloc(1, sizeof(*pc));
	if (pc && run_quiet(pf_argv) == 0 && perf_csv_load(csv, pc, perr, sizeof(perr)) == 0) {
		pf->ok = true;
		for (int e = 0; e < evs->n; e++) {
			int k;

			perf_spelling(&evs->ev[e], pmu, one, sizeof(one));
			k = perf_csv_find(pc, one);
			pf->v[e] = k >= 0 && !pc->ev[k].not_supported ? pc->ev[k].value : NAN;
		}
	}
	free(pc);
	unlink(json);
	unlink(csv);
	rmdir(dir);
}

static void compare_counts(struct check *c, const char *self, unsigned long loops, const char *pmu)
{
	struct event_list evs = { 0 };
	struct side tm, pf;
	char err[256];
	double want = 2.0 * loops;

	if (events_parse_list("instructions:u,cycles:u", NULL, &evs, err, sizeof(err))) {
		line(c, "FAIL", "calibrated loop: %s", err);
		return;
	}
	text_wrapf(stdout, c->width, 6, "calibrated loop (%lu iterations of 2 instructions), counted by tmabpf and by "
		   "perf stat:", loops);
	count_both(c, self, NULL, &evs, loops, pmu, &tm, &pf);
	if (!tm.ok) {
		line(c, "FAIL", "tmabpf could not count the loop (run: tmabpf -e instructions:u -- tmabpf check "
		     "--calibrate %lu)", loops);
		return;
	}
	if (!pf.ok)
		line(c, "WARN", "perf stat could not count the loop (is perf installed? apt-get install linux-perf): "
		     "tmabpf's side alone below");
	for (int e = 0; e < evs.n; e++) {
		/* instructions are deterministic: tmabpf and perf agree to a few hundred (ld.so); the loop is a
		 * lower bound, the rest is the process' start and exit; cycles vary run to run on real cores */
		double t = tm.v[e], p = pf.ok ? pf.v[e] : NAN, tol = e == 0 ? 0.005 : 0.05;
		bool loop_ok = e != 0 || t >= want;
		bool peer_ok = !pf.ok || fabs(t - p) <= tol * p;
		char extra[128] = "";

		if (e == 0)
			snprintf(extra, sizeof(extra), "; loop %.0f + %.0f to start and exit%s", want, t - want,
				 loop_ok ? "" : " (FAIL: fewer than the loop alone)");
		line(c, loop_ok && peer_ok ? "PASS" : "FAIL", "%-15s tmabpf %.0f  perf %.0f  (%+.3f %%, within %.1f %%)%s",
		     evs.ev[e].name, t, p, pf.ok && p ? 100.0 * (t - p) / p : NAN, 100 * tol, extra);
	}
}

static void compare_tma(struct check *c, const char *self, const struct tma_cpu *cpu, unsigned long loops,
			const char *pmu)
{
	struct event_list evs = { 0 };
	struct tma_result rt, rp;
	struct tma_env env;
	struct tma_plan plan;
	struct side tm, pf;
	char err[256], why[512];
	double pct[TMABPF_MAX_EVENTS];
	struct counter_val total[TMABPF_MAX_EVENTS];

	tma_env_host(&env);
	if (tma_plan(&plan, cpu, 1, TMABPF_MAX_EVENTS, &env, tma_encode_key, err, sizeof(err)) ||
	    tma_plan_append(&plan, &evs, err, sizeof(err))) {
		line(c, "FAIL", "TMA level 1 on %s: %s", tma_cpu_name(cpu), err);
		return;
	}
	count_both(c, self, tma_cpu_name(cpu), &evs, loops, pmu, &tm, &pf);
	if (!tm.ok) {
		line(c, "FAIL", "TMA level 1: tmabpf could not count the recipe's %d events (run: tmabpf --cpu %s "
		     "-- tmabpf check --calibrate %lu)", evs.n, tma_cpu_name(cpu), loops);
		return;
	}
	for (int e = 0; e < evs.n; e++) {
		pct[e] = 100;
		total[e] = (struct counter_val){ .value = isnan(tm.v[e]) ? 0 : (__u64)tm.v[e], .enabled = 1, .running = 1 };
	}
	if (zero_counts_tma(&evs, total, 0.0, why, sizeof(why))) {
		line(c, "WARN", "TMA level 1 (%s): %s", tma_cpu_name(cpu), why);
		return;
	}
	if (tma_compute_events(&plan, &evs, tm.v, pct, &rt) || (pf.ok && tma_compute_events(&plan, &evs, pf.v, pct, &rp))) {
		line(c, "FAIL", "TMA level 1 (%s): the formulas could not be computed from the counts", tma_cpu_name(cpu));
		return;
	}
	for (int i = 0; i < rt.n; i++) {
		const struct tma_node *a = &rt.node[i];
		double b = NAN;

		if (a->parent >= 0)
			continue;
		for (int k = 0; pf.ok && k < rp.n; k++)
			if (!strcmp(rp.node[k].name, a->name))
				b = rp.node[k].value;
		/* both sides count the same loop separately: 2 points of run-to-run noise */
		line(c, !pf.ok ? "INFO" : fabs(a->value - b) <= 2.0 ? "PASS" : "FAIL",
		     "TMA L1 %-16s tmabpf %5.1f %%  perf %5.1f %%  (%+.1f points, within 2)", a->label[0] ? a->label : a->name,
		     a->value, b, a->value - b);
	}
}

/* ---------- the command ---------- */

static int usage(const char *msg, const char *arg)
{
	fprintf(stderr, "tmabpf check: %s%s%s (usage: tmabpf check [--cpu NAME] [--loops N] [--width N])\n", msg, arg ? " " : "",
		arg ? arg : "");
	return 2;
}

static bool parse_ulong(const char *s, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return s[0] && !*end && !errno && *out > 0 && s[0] != '-';
}

int cmd_check(int argc, char **argv)
{
	const char *cpuname = NULL, *val;
	unsigned long loops = DEFAULT_LOOPS;
	struct check c = { 0 };
	struct host_info h = { 0 };
	char err[256], desc[256] = "", why[256] = "", self[4096], pmu[64] = "";
	const struct tma_cpu *cpu;
	struct utsname u;
	ssize_t sl;
	int v, hw = 0, free = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--calibrate") && i + 1 < argc) {
			if (!parse_ulong(argv[++i], &loops))
				return usage("--calibrate wants a count > 0, not", argv[i]);
			calibrated_loop(loops);
			return 0;
		} else if ((val = parse_opt_value(argc, argv, &i, "--cpu"))) {
			if (!*val)
				return usage("--cpu wants a CPU name", NULL);
			cpuname = val;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: tmabpf check [--cpu NAME] [--loops N] [--width N]\n"
			       "What this host can do for tmabpf: kernel, privileges, perf_event_paranoid, BTF, the PMU\n"
			       "driver and its free counters, the NMI watchdog, other agents holding perf events,\n"
			       "uprobe_multi and session links, the TMA recipe; on a PMU host, a calibrated loop counted\n"
			       "by tmabpf and by perf stat side by side (instructions, cycles, TMA level 1).\n"
			       "      --cpu NAME      judge the recipe of CPU NAME instead of this host's\n"
			       "      --loops N       iterations of the calibrated loop (default %lu)\n"
			       "      --calibrate N   run the calibrated loop alone (what check itself profiles)\n"
			       "      --width N       text columns (terminal's, else 80)\n"
			       "Exit status: 0 all lines OK/WARN/SKIP/INFO, 1 a line FAILed, 2 bad usage.\n"
			       "See tmabpf-check(8).\n", DEFAULT_LOOPS);
			return 0;
		} else if ((val = parse_opt_value(argc, argv, &i, "--width"))) {
			if (parse_int_at("check: ", val, "--width", TEXT_WIDTH_MIN, 10000, &c.width))
				return 2;
		} else if (!strcmp(argv[i], "--loops") && i + 1 < argc) {
			if (!parse_ulong(argv[++i], &loops))
				return usage("--loops wants a count > 0, not", argv[i]);
		} else {
			return usage("unknown argument", argv[i]);
		}
	}
	if (cpuname && !tma_cpu_by_name(cpuname)) {
		fprintf(stderr, "tmabpf check: unknown CPU '%s' (known: %s)\n", cpuname, tma_cpu_names());
		return 2;
	}
	c.width = text_width(stdout, c.width);
	uname(&u);
	host_info_read(&h);
	printf("tmabpf check: what this host can do\n");
	line(&c, "OK", "kernel: %s %s, %d CPUs online", u.release, u.machine, h.ncpus_online);
	/* err: the missing privilege, which the checks that need it name as they SKIP */
	if (host_check_privilege(err, sizeof(err)))
		line(&c, "FAIL", "privileges: %s", err);
	else {
		err[0] = 0;
		line(&c, "OK", "privileges: may load BPF and open system-wide perf events");
	}
	v = kernel_file_int("/proc/sys/kernel/perf_event_paranoid", 99);
	line(&c, "OK", "perf_event_paranoid: %d (%s)", v,
	     geteuid() == 0 ? "root is not limited by it" : v <= 0 ? "CAP_PERFMON suffices" : "needs CAP_PERFMON");
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		line(&c, "FAIL", "BTF: /sys/kernel/btf/vmlinux missing: tmabpf's CO-RE programs cannot load (fix: a "
		     "kernel built with CONFIG_DEBUG_INFO_BTF=y, as Debian's, Ubuntu's and RHEL's are)");
	else
		line(&c, "OK", "BTF: /sys/kernel/btf/vmlinux");
	if (h.pmu) {
		sscanf(h.pmu_why, "hardware PMU '%63[^']'", pmu);
		line(&c, "OK", "PMU driver: %s", pmu);
		if (err[0])
			line(&c, "SKIP", "counters: not tried: %s", err);
		else
			hw = check_counters(&c, h.ncpus_online, &free);
	} else {
		line(&c, "FAIL", "PMU driver: none (fix: bare metal, or a VM with a virtual PMU, e.g. KVM -cpu host): %s; "
		     "hardware counters, TMA and cycles sampling are unavailable; software events still work", h.pmu_why);
	}
	v = kernel_file_int("/proc/sys/kernel/nmi_watchdog", -1);
	if (v > 0 && hw && free < hw)
		line(&c, "WARN", "NMI watchdog: on: it may be what holds a counter on every CPU (fix: sysctl "
		     "kernel.nmi_watchdog=0)");
	else if (v > 0)
		line(&c, "OK", "NMI watchdog: on, the general counters stay free (a detector without perf, or "
		     "Intel's fixed cycles counter, which the recipes leave to it)");
	else
		line(&c, "OK", "NMI watchdog: %s", v == 0 ? "off" : "not present");
	check_agents(&c);
	if (err[0]) {
		line(&c, "SKIP", "uprobe_multi links: not tried: %s", err);
		line(&c, "SKIP", "uprobe session links: not tried: %s", err);
	} else if (uprobe_link_works(BPF_TRACE_UPROBE_MULTI))
		line(&c, "OK", "uprobe_multi links: yes (--uprobe attaches all functions of a library at once)");
	else
		line(&c, "WARN", "uprobe_multi links: no (kernel < 6.6): --uprobe uses classic uprobes, at most %d "
		     "functions, slower to attach", UPROBE_CLASSIC_CAP);
	if (err[0])
		;	/* said above */
	else if (uprobe_link_works(ATTACH_UPROBE_SESSION))
		line(&c, "OK", "uprobe session links: yes (one link per library for entry and return)");
	else
		line(&c, "WARN", "uprobe session links: no (kernel < 6.13): an entry and a return link per library, "
		     "about twice the detach time");
	cpu = cpuname ? tma_cpu_by_name(cpuname) : tma_cpu_detect(desc, sizeof(desc), why, sizeof(why));
	if (cpu)
		line(&c, "OK", "recipe: %s (%s)%s", tma_cpu_name(cpu), cpu->desc, cpuname ? ", chosen with --cpu" : "");
	else
		line(&c, "WARN", "recipe: %s: no TMA; choose one with --cpu NAME (tmabpf list)", why);
	if (!h.pmu) {
		line(&c, "SKIP", "calibrated loop against perf stat: needs a PMU");
	} else if (err[0]) {
		line(&c, "SKIP", "calibrated loop against perf stat: not tried: %s", err);
	} else if ((sl = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0) {
		line(&c, "FAIL", "calibrated loop: /proc/self/exe unreadable");
	} else {
		self[sl] = 0;
		compare_counts(&c, self, loops, pmu);
		if (cpu)
			compare_tma(&c, self, cpu, loops, pmu);
		else
			line(&c, "SKIP", "TMA level 1 against perf stat: no recipe (--cpu NAME)");
	}
	printf("%d FAIL, %d WARN\n", c.fail, c.warn);
	return c.fail ? 1 : 0;
}
