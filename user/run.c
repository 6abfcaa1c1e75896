// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * One profiling run:
 *   options -> event list -> (spawn command, stopped) -> per-CPU perf events
 *   -> BPF load + pid filter -> attach -> release command -> poll loop
 *   (exits via ring buffer, -I summaries) -> detach -> drain -> reports.
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <stdarg.h>
#include <bpf/libbpf.h>
#include "cpu_detect.h"
#include "dryrun.h"
#include "events.h"
#include "host.h"
#include "memsamples.h"
#include "outfile.h"
#include "offcpu.h"
#include "tma.h"
#include "tma_env.h"
#include "tma_output.h"
#include "perf_open.h"
#include "report.h"
#include "report_text.h"
#include "run.h"
#include "sampling.h"
#include "thread_table.h"
#include "threads_loader.h"
#include "trace_run.h"
#include "maps_watch.h"
#include "target_edges.h"
#include "uprobe_evidence.h"
#include "uprobe_preview.h"
#include "uprobe_targets.h"
#include "uprobes_loader.h"
#include "view_curses.h"
#include "view_model.h"
#include "warn.h"
#include "zero_counts.h"
#include "clock.h"

#define DEFAULT_SW_EVENTS "task-clock,page-faults"
#define POLL_MS 50

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t stop_from_tty;	/* the terminal sent it: its whole process group got it */

static void on_signal(int sig, siginfo_t *info, void *uctx)
{
	stop_signal = sig;
	stop_from_tty = info && info->si_code == SI_KERNEL;
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);	/* a file size limit is a write error (EFBIG), said like any other */
}

/*
 * SIGINT or SIGTERM in -- COMMAND mode: profiling has stopped (within one poll) and the report is
 * written without waiting for the command.  The signal is passed on to the command, as perf record
 * does (it sends SIGTERM), unless it came from the terminal, which sent it to the command too.
 * The command's exit status is returned when it ends within STOP_GRACE_MS, else it is left running,
 * said so, and the exit status is 128 + the signal.
 */
#define STOP_GRACE_MS 2000

static void forward_stop(struct target *t)
{
	if (!t->child || t->child_reaped || !stop_signal)
		return;
	if (!stop_from_tty && kill(t->child, stop_signal) == 0)
		fprintf(stderr, "tmabpf: %s: profiling stopped, the signal passed on to the command (pid %d)\n",
			stop_signal == SIGINT ? "SIGINT" : "SIGTERM", t->child);
}

static int command_exit_code(struct target *t)
{
	if (stop_signal && !t->child_reaped && target_wait(t, STOP_GRACE_MS)) {
		fprintf(stderr, "tmabpf: the command (pid %d) is still running %d ms after %s; it is left running\n",
			t->child, STOP_GRACE_MS, stop_signal == SIGINT ? "SIGINT" : "SIGTERM");
		return 128 + stop_signal;
	}
	return target_exit_code(t);
}

static bool libbpf_verbose;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!libbpf_verbose && level != LIBBPF_WARN)
		return 0;
	if (!libbpf_verbose)
		return 0;	/* our own one-line errors say what failed; --verbose shows this log */
	return vfprintf(stderr, fmt, ap);
}


struct run_state {
	struct options *o;
	const struct tma_cpu *cpu;	/* TMA recipe: --cpu NAME or detected; NULL when none */
	int tma_level;			/* 0: TMA off */
	struct tma_plan plan;		/* when tma_level > 0 */
	char cpu_desc[256];
	struct host_info host;
	struct event_list evs;
	struct perf_counters pc;
	struct threads_prog prog;
	struct threads_cfg tcfg;
	struct uprobe_set uset;
	struct uprobes_prog uprobes;
	bool uprobes_loaded;
	struct func_row *frows;
	size_t nfrows;
	unsigned long long *rate_calls;	/* per function, at the last rate check */
	unsigned long long rate_ts;
	unsigned long long rate_oncpu;	/* tracked threads' on-CPU ns then */
	bool *guarded;			/* per function: hot-probe warning given */
	int nrate;			/* functions in rate_calls */
	struct maps_watch watch;	/* files the targets map (deferred --uprobe, zero evidence) */
	unsigned long long watch_ts;
	struct probe_calib calib;	/* per-call trap cost, measured once a probe is hot */
	int calib_state;		/* 0 not measured, 1 measured, -1 failed */
	struct sampling samp;		/* --sample */
	bool sampling;
	struct offcpu off;		/* --offcpu-stacks */
	struct folded off_folded;	/* its folded lines when --sample is off */
	bool offcpu;
	struct memsamples mem;		/* --mem-samples */
	bool mem_on;
	struct thread_table tt;
	struct report rep;
	struct view view;		/* the -I summaries and the live view show it */
	struct view_curses *ui;		/* live view; NULL: plain text */
	unsigned long long t0;
	unsigned long long stop_ns;	/* accounting stopped (finish); 0 while running */
	bool loaded;
	char tma_off[256];		/* why the planned TMA is not shown (zero_counts_tma) */
	struct trace_run *trace;	/* --trace; NULL when off */
	struct outfile json_out, folded_out;	/* --json, --folded: opened before the run */
	const struct run_mode *mode;	/* NULL: profiling run */
};

static void on_thread_exit(void *ctx, const struct thread_stats *s)
{
	struct run_state *st = ctx;

	if (thread_table_add_exited(&st->tt, s))
		warn_add("out of memory keeping an exited thread's sums");
}

/* --cpu NAME, else the recipe for this host's CPU (NULL when there is none). */
static int choose_cpu(struct run_state *st)
{
	char why[256];

	if (st->o->cpu_name) {
		st->cpu = tma_cpu_by_name(st->o->cpu_name);
		if (!st->cpu) {
			err_print("--cpu: unknown CPU '%s' (known: %s)", st->o->cpu_name, tma_cpu_names());
			return EXIT_USAGE;
		}
		snprintf(st->cpu_desc, sizeof(st->cpu_desc), "%s (--cpu)", tma_cpu_name(st->cpu));
	} else {
		st->cpu = tma_cpu_detect(st->cpu_desc, sizeof(st->cpu_desc), why, sizeof(why));
	}
	if (st->cpu)
		events_set_target_cpu(st->cpu);
	return 0;
}

/* Event list: -e first, then the TMA recipe's events when TMA runs (PMU host or --dry-run). */
static int choose_events(struct run_state *st, bool pmu)
{
	char err[256];
	int r;

	if (st->o->events || !st->cpu || !(pmu || st->o->dry_run)) {
		r = events_parse_list(st->o->events ? st->o->events : DEFAULT_SW_EVENTS, &st->evs, err, sizeof(err));
		if (r) {
			err_print("-e: %s", err);
			return EXIT_USAGE;
		}
	}
	st->tma_level = st->o->tma_level ? st->o->tma_level : ((pmu || st->o->dry_run) && !st->o->events ? 1 : 0);
	if (!st->tma_level || !st->cpu || !(pmu || st->o->dry_run)) {
		st->tma_level = 0;
		return 0;
	}
	struct tma_env env;

	tma_env_host(&env);
	r = tma_plan(&st->plan, st->cpu, st->tma_level, TMABPF_MAX_EVENTS - st->evs.n, &env, err, sizeof(err));
	if (!r)
		r = tma_plan_append(&st->plan, &st->evs, err, sizeof(err));
	if (r) {
		err_print("TMA level %d on %s: %s", st->tma_level, tma_cpu_name(st->cpu), err);
		return EXIT_USAGE;
	}
	if (st->plan.note[0] && !st->o->dry_run)
		warn_add("TMA: %s", st->plan.note);
	return 0;
}

/* TMA only where its events counted: an event the PMU opens but does not
 * model (an emulator's STALL_SLOT_BACKEND) reads 0, and the breakdown would
 * be a clean, false 0 %: hide it while so, and at the end say why. */
static void tma_check_counts(struct run_state *st, bool final)
{
	struct thread_stats sum;
	bool zero;

	if (!st->tma_level)
		return;
	thread_table_total(&st->tt, &sum);
	zero = zero_counts_tma(&st->evs, sum.c, st->rep.duration_ns / 1e9, st->tma_off, sizeof(st->tma_off)) > 0;
	st->rep.tma_off = zero ? st->tma_off : NULL;
	if (zero && final)
		warn_add("%s", st->tma_off);
}

/* Never fall back silently: say once what is missing and what still runs. */
static void announce_capabilities(struct run_state *st)
{
	if (!st->host.pmu)
		warn_add("hardware counters unavailable: %s; TMA skipped, counting software events only "
			 "(fix: run on bare metal or a VM with a virtual PMU)", st->host.pmu_why);
	else if (!st->cpu)
		warn_add("no TMA recipe for this CPU (%s); counting the selected events only (see 'tmabpf list')",
			 st->cpu_desc);
}

/* --mem-samples: choose the event (where the PMU lacks one, say so and carry on) and load. */
static int setup_mem_samples(struct run_state *st, char *err, size_t errlen)
{
	struct mem_event ev;
	char why[256];
	int r;

	if (!strcmp(st->o->mem_source, "pmu") && !st->host.pmu) {
		warn_add("--mem-samples: no precise memory sampling here (%s); skipped (fix: bare metal or a VM whose "
			 "vPMU exposes PEBS/IBS; --mem-samples=page-faults samples page-fault addresses)", st->host.pmu_why);
		return 0;
	}
	if (mem_event_choose(st->o->mem_source, st->cpu, true, &ev, why, sizeof(why))) {
		warn_add("--mem-samples: %s; skipped", why);
		return 0;
	}
	r = memsamples_load(&st->mem, &ev, &st->prog, err, errlen);
	st->mem_on = true;	/* memsamples_free() cleans up a partial load */
	if (r) {
		err_print("%s", err);
		return 1;
	}
	return 0;
}

static int setup_bpf(struct run_state *st)
{
	struct threads_cfg *cfg = &st->tcfg;
	char err[512];
	int r;

	r = perf_counters_open(&st->pc, &st->evs, st->host.ncpus, err, sizeof(err));
	if (r) {
		err_print("%s", err);
		return r == -E2BIG ? EXIT_USAGE : 1;	/* a group that cannot fit: bad -e for this host */
	}
	thread_table_init(&st->tt, st->evs.n);
	thread_table_set_limits(&st->tt, st->o->max_exited, THREAD_TABLE_MAX_FOLDED);
	*cfg = (struct threads_cfg){
		.filter = st->o->system_wide ? FILTER_ALL : st->o->target.nr_tids ? FILTER_TID : FILTER_TGID,
		.follow_fork = st->o->follow_fork,
		.max_threads = st->o->max_threads,
		.max_pids = st->o->max_pids,
		.main_id = st->o->target.nr_tids ? st->o->target.tids[0]
			   : st->o->target.nr_pids ? st->o->target.pids[0] : 0,
		.exec_start = st->o->target.child > 0 ? (unsigned int)st->o->target.child : 0,
	};
	if (st->mode && st->mode->configure)
		st->mode->configure(st->mode->ctx, cfg);
	r = threads_load(&st->prog, cfg, &st->pc, &st->o->target, st->mode ? st->mode->on_exit : on_thread_exit,
			 st->mode ? st->mode->ctx : st, err, sizeof(err));
	if (r) {
		err_print("%s", err);
		return 1;
	}
	st->loaded = true;
	if (st->o->target.child && (r = threads_track(&st->prog, st->o->target.child, err, sizeof(err)))) {
		err_print("%s", err);
		return 1;
	}
	if (!st->prog.run_stats)
		warn_add("kernel BPF run-time stats unavailable (%s); tmabpf's own cost is not reported "
			 "(needs CAP_SYS_ADMIN, or sysctl kernel.bpf_stats_enabled=1)", strerror(errno));
	if (st->uset.nr_funcs || st->uset.nr_deferred) {
		struct uprobes_cfg ucfg = { .max_stacks = st->o->max_stacks, .max_funcs = st->o->max_funcs,
					    .trace_ring_bytes = st->trace ? trace_run_ring_bytes() : 0 };

		r = uprobes_load(&st->uprobes, &st->prog, &ucfg, err, sizeof(err));
		if (r) {
			err_print("%s", err);
			return 1;
		}
		st->uprobes_loaded = true;
		if (st->trace && (r = trace_run_attach_spans(st->trace, &st->uset, st->prog.rb,
							     uprobes_trace_fd(&st->uprobes), err, sizeof(err)))) {
			err_print("%s", err);
			return 1;
		}
	}
	if (st->o->sample_hz) {
		struct sampling_cfg scfg = { .hz = st->o->sample_hz, .max_rows = st->o->max_sample_stacks,
					     .pmu = st->host.pmu };

		r = sampling_load(&st->samp, &st->prog, &scfg, err, sizeof(err));
		st->sampling = true;	/* sampling_free() cleans up a partial load */
		if (r) {
			err_print("%s", err);
			return 1;
		}
	}
	if (st->o->offcpu_stacks) {
		r = offcpu_load(&st->off, &st->prog, st->o->max_sample_stacks, err, sizeof(err));
		st->offcpu = true;	/* offcpu_free() cleans up a partial load */
		if (r) {
			err_print("%s", err);
			return 1;
		}
	}
	if (st->o->mem_source && (r = setup_mem_samples(st, err, sizeof(err))))
		return r;
	r = threads_attach(&st->prog, &st->pc, err, sizeof(err));
	if (r) {
		err_print("%s", err);
		return 1;
	}
	if (st->uprobes_loaded) {
		r = uprobes_attach(&st->uprobes, &st->uset, err, sizeof(err));
		if (r) {
			err_print("%s", err);
			return 1;
		}
		char line[1024];
		int skipped = uprobe_set_unprobeable(&st->uset, line, sizeof(line));

		for (int i = 0; i < st->uset.nr_libs; i++)
			fprintf(stderr, "tmabpf: uprobe: %s\n", st->uset.libs[i].note);
		if (skipped)
			fprintf(stderr, "tmabpf: uprobe: %s\n", line);
		fprintf(stderr, "tmabpf: uprobe: %d functions attached in %.1f ms (%s)\n", st->uset.nr_funcs - skipped,
			st->uprobes.attach_ns / 1e6, uprobes_mode_name(&st->uprobes));
	}
	if (st->sampling && (r = sampling_attach(&st->samp, err, sizeof(err)))) {
		err_print("%s", err);
		return 1;
	}
	if (st->offcpu && (r = offcpu_attach(&st->off, err, sizeof(err)))) {
		err_print("%s", err);
		return 1;
	}
	if (st->mem_on && (r = memsamples_attach(&st->mem, err, sizeof(err)))) {
		if (!strcmp(st->mem.ev.source, "page-faults")) {
			err_print("--mem-samples=page-faults: %s", err);
			return 1;
		}
		warn_add("--mem-samples: %s; memory samples skipped, the rest of the run goes on", err);
		memsamples_free(&st->mem);
		st->mem_on = false;
	}
	return 0;
}

/* --sample=HZ above what the kernel allows fails before anything is loaded. */
static int check_sample_rate(const struct options *o)
{
	int max = samples_max_rate();

	if (o->sample_hz && max > 0 && o->sample_hz > max) {
		err_print("--sample=%d is above kernel.perf_event_max_sample_rate (%d): lower the rate or raise the sysctl",
			o->sample_hz, max);
		return EXIT_USAGE;
	}
	return 0;
}

/* --uprobe specs, resolved before anything is loaded so bad input fails cleanly. */
static int resolve_uprobes(struct run_state *st)
{
	struct options *o = st->o;
	int pid = o->target.nr_pids ? o->target.pids[0] : -1;
	char err[1024];

	for (int i = 0; i < o->nr_uprobe_specs; i++) {
		int r = uprobe_set_add_spec(&st->uset, o->uprobe_specs[i], pid, o->target.argv ? o->target.argv[0] : NULL,
					    err, sizeof(err));

		/* a bare name that nothing maps yet (a library the target will dlopen): attach when it maps it */
		if (r == -ENOENT && (o->target.argv || o->target.nr_pids) && !strchr(o->uprobe_specs[i], '/') &&
		    o->uprobe_specs[i][0] != ':' && !o->dry_run) {
			char why[1024];

			snprintf(why, sizeof(why), "%s", err);
			if ((r = uprobe_set_defer(&st->uset, o->uprobe_specs[i], err, sizeof(err))) == 0) {
				fprintf(stderr, "tmabpf: uprobe: %s; '%s' attaches when the target maps a file of that name\n",
					why, o->uprobe_specs[i]);
				continue;
			}
		}
		if (r) {
			err_print("%s", err);
			return EXIT_USAGE;
		}
	}
	return 0;
}

/* Once a second: --max-rate detaches functions firing faster than allowed, and the guard says once
 * which probe costs more than UPROBE_GUARD_SHARE of the target's CPU time (calls x cost per call:
 * the programs' time per hit from BPF stats, the trap's by entry class, measured when first needed). */
static void check_probe_rates(struct run_state *st, unsigned long long t)
{
	double dt = (t - st->rate_ts) / 1e9, bpf_hit, cpus;
	unsigned long long *calls;
	struct thread_stats sum;
	char err[512];

	if (!st->uprobes_loaded || dt < 1.0)
		return;
	if (!st->uset.nr_funcs) {	/* only deferred specs so far */
		st->rate_ts = t;
		return;
	}
	calls = calloc(st->uset.nr_funcs + 1, sizeof(*calls));
	if (st->nrate < st->uset.nr_funcs) {	/* first check, or a deferred --uprobe added functions */
		bool *g = realloc(st->guarded, st->uset.nr_funcs * sizeof(*g));

		if (g) {
			memset(g + st->nrate, 0, (st->uset.nr_funcs - st->nrate) * sizeof(*g));
			st->guarded = g;
		}
	}
	if (!calls || !st->guarded) {
		free(calls);
		st->rate_ts = t;
		return;
	}
	for (size_t i = 0; i < st->nfrows; i++)
		if ((int)st->frows[i].key.fn < st->uset.nr_funcs)
			calls[st->frows[i].key.fn] += st->frows[i].s.calls;
	thread_table_total(&st->tt, &sum);
	cpus = (sum.oncpu_ns - st->rate_oncpu) / 1e9 / dt;
	bpf_hit = st->rep.uprobe_run_cnt ? (double)st->rep.uprobe_run_ns / st->rep.uprobe_run_cnt : 0;
	for (int fn = 0; fn < st->uset.nr_funcs; fn++) {	/* the first check counts from the start */
		double rate = (calls[fn] - (st->rate_calls && fn < st->nrate ? st->rate_calls[fn] : 0)) / dt;
		struct uprobe_func *f = &st->uset.funcs[fn];

		if (f->detached)
			continue;
		if (st->o->max_rate && rate > st->o->max_rate) {
			f->detached = true;
			warn_add("detached %s: %.0f calls/s > --max-rate %.0f", f->symbol, rate, st->o->max_rate);
			if (uprobes_reattach_lib(&st->uprobes, &st->uset, f->lib, err, sizeof(err)))
				warn_add("re-attaching after --max-rate: %s", err);
			continue;
		}
		if (st->guarded[fn] || cpus <= 0 || rate * uprobe_call_cost_ns(f, NULL, bpf_hit) / 1e9 < 0.01 * cpus)
			continue;	/* even the programs' own time is below 1 %: no need to measure the trap */
		if (!st->calib_state)
			st->calib_state = probe_calib_measure(&st->calib, err, sizeof(err)) ? -1 : 1;
		if (rate * uprobe_call_cost_ns(f, st->calib_state > 0 ? &st->calib : NULL, bpf_hit) / 1e9 >
		    UPROBE_GUARD_SHARE * cpus) {
			st->guarded[fn] = true;
			uprobe_guard_warn(f, rate, uprobe_call_cost_ns(f, st->calib_state > 0 ? &st->calib : NULL, bpf_hit),
					  cpus);
		}
	}
	free(st->rate_calls);
	st->rate_calls = calls;
	st->nrate = st->uset.nr_funcs;
	st->rate_ts = mono_ns();	/* after a calibration pause, not t */
	st->rate_oncpu = sum.oncpu_ns;
}

/* A target mapped path: attach the deferred --uprobe specs that name it (all of them, then the
 * library's links once). */
static void on_mapped(void *ctx, int pid, const char *path)
{
	struct run_state *st = ctx;
	int lib = -1, nfuncs = 0, n = 0;
	char err[1024], names[512] = "";
	size_t o = 0;

	for (int d = 0; d < st->uset.nr_deferred; d++) {
		struct uprobe_deferred *df = &st->uset.deferred[d];
		int l;

		if (df->attached || !maps_watch_name_matches(df->lib, path))
			continue;
		if (uprobe_set_add_deferred(&st->uset, d, path, pid, &l, err, sizeof(err))) {
			warn_add("uprobe: '%s:%s': pid %d mapped %s, but: %s", df->lib, df->glob, pid, path, err);
			df->attached = -1;	/* said once */
			continue;
		}
		lib = l >= 0 ? l : lib;
		nfuncs += df->attached;
		o += snprintf(names + o, o < sizeof(names) ? sizeof(names) - o : 0, "%s'%s:%s'", n++ ? ", " : "",
			      df->lib, df->glob);
	}
	if (lib < 0)
		return;
	if (uprobes_reattach_lib(&st->uprobes, &st->uset, lib, err, sizeof(err)))
		warn_add("uprobe: attaching %s after pid %d mapped it: %s", path, pid, err);
	else
		fprintf(stderr, "tmabpf: uprobe: pid %d mapped %s: %d functions of %s attached\n", pid, path, nfuncs,
			names);
}

/* A deferred --uprobe waits for its library: watch the maps every poll, so that it attaches soon. */
static bool deferred_pending(const struct uprobe_set *s)
{
	for (int d = 0; d < s->nr_deferred; d++)
		if (!s->deferred[d].attached)
			return true;
	return false;
}

/* The files the targets map (not system-wide runs): deferred --uprobe attaches, zero evidence at the end. */
static void watch_maps(struct run_state *st)
{
	struct target *t = &st->o->target;
	int pids[TARGET_MAX_IDS + 1], n = 0;

	if (!st->uprobes_loaded || st->o->system_wide)
		return;
	for (int i = 0; i < t->nr_pids; i++)
		pids[n++] = t->pids[i];
	if (t->child && !t->child_reaped)
		pids[n++] = t->child;	/* exec'd: target_release waited for it */
	maps_watch_poll(&st->watch, pids, n, on_mapped, st);
	st->watch_ts = mono_ns();
}

/* --dry-run --uprobe: what the globs match, each function's entry class and its cost here. */
static int preview_uprobes(struct run_state *st)
{
	struct probe_calib calib;
	char why[256] = "run as root to measure";
	bool measured = false;
	int r = resolve_uprobes(st);

	if (!r) {
		if (geteuid() == 0)
			measured = probe_calib_measure(&calib, why, sizeof(why)) == 0;
		uprobe_preview_print(&st->uset, measured ? &calib : NULL, why, stdout);
	}
	uprobe_set_free(&st->uset);
	return r;
}

static void refresh(struct run_state *st)
{
	struct thread_stats *live = NULL;
	size_t n = 0;

	threads_poll(&st->prog, 0);
	if (threads_read(&st->prog, &live, &n) == 0)
		thread_table_set_live(&st->tt, live, n);
	threads_self_stats(&st->prog, &st->rep.self);
	if (st->uprobes_loaded) {
		free(st->frows);
		st->frows = NULL;
		st->nfrows = 0;
		uprobes_read(&st->uprobes, &st->frows, &st->nfrows);
		st->rep.frows = st->frows;
		st->rep.nfrows = st->nfrows;
		uprobes_run_stats(&st->uprobes, &st->rep.uprobe_run_ns, &st->rep.uprobe_run_cnt);
		st->rep.uprobe_attach_ns = st->uprobes.attach_ns;
	}
	st->rep.mono_ns = st->stop_ns ? st->stop_ns : mono_ns();
	st->rep.duration_ns = st->rep.mono_ns - st->t0;
}

/* One -I interval: new deltas, shown live or as plain text. */
static void show_interval(struct run_state *st)
{
	if (st->ui && view_curses_paused(st->ui))
		return;
	refresh(st);
	tma_check_counts(st, false);
	if (st->sampling)
		sampling_snapshot(&st->samp, &st->evs);	/* into rep.samples_live */
	view_update(&st->view, &st->rep);
	if (st->ui)
		view_curses_draw(st->ui);
	else
		report_text_interval(&st->view, stdout);
}

static const char *wait_loop(struct run_state *st)
{
	unsigned long long deadline = st->o->duration_s > 0 ? st->t0 + (unsigned long long)(st->o->duration_s * 1e9) : 0;
	unsigned long long next_iv = st->o->interval_ms ? st->t0 + st->o->interval_ms * 1000000ULL : 0;

	for (;;) {
		unsigned long long t;

		threads_poll(&st->prog, POLL_MS);
		if (st->trace)
			trace_run_poll(st->trace);
		if (st->sampling)
			sampling_poll(&st->samp);
		if (st->offcpu)
			offcpu_poll(&st->off);
		if (st->mem_on)
			memsamples_poll(&st->mem);
		if (stop_signal)
			return stop_signal == SIGINT ? "SIGINT" : "SIGTERM";
		if (st->ui && view_curses_input(st->ui) == VC_QUIT)
			return "quit";
		t = mono_ns();
		if (deadline && t >= deadline)
			return "duration";
		if (target_gone(&st->o->target))
			return "target exited";
		/* often while a deferred --uprobe waits and in the first seconds (most dlopens happen then) */
		if (t - st->watch_ts >= (deferred_pending(&st->uset) || t - st->t0 < MAPS_WATCH_EARLY_NS ? POLL_MS
									      : MAPS_WATCH_MS) * 1000000ULL)
			watch_maps(st);
		if (st->uprobes_loaded && t - st->rate_ts >= 1000000000ULL) {
			refresh(st);
			check_probe_rates(st, mono_ns());
		}
		if (next_iv && t >= next_iv) {
			show_interval(st);
			if (st->trace)
				trace_run_sample(st->trace, &st->tt, mono_ns());
			next_iv += st->o->interval_ms * 1000000ULL;
			if (next_iv < t)
				next_iv = t + st->o->interval_ms * 1000000ULL;
		} else if (st->trace && trace_run_due(st->trace, t)) {
			refresh(st);
			trace_run_sample(st->trace, &st->tt, mono_ns());
		}
	}
}

/* The end of a run: probed libraries never mapped, functions never called, deferred specs never met. */
static void probe_evidence(struct run_state *st)
{
	unsigned long long *calls = calloc(st->uset.nr_funcs ? st->uset.nr_funcs : 1, sizeof(*calls));

	if (!calls)
		return;
	for (size_t i = 0; i < st->nfrows; i++)
		if ((int)st->frows[i].key.fn < st->uset.nr_funcs)
			calls[st->frows[i].key.fn] += st->frows[i].s.calls;
	uprobe_evidence_report(&st->uset, calls, st->o->system_wide ? NULL : &st->watch);
	free(calls);
}

static int finish(struct run_state *st, const char *why)
{
	char err[512];
	int rc = 0;

	if (st->offcpu)
		offcpu_detach(&st->off);
	if (st->mem_on)
		memsamples_detach(&st->mem);
	if (st->sampling)
		sampling_detach(&st->samp);	/* first, like uprobes: samples fold through the spine's maps */
	if (st->uprobes_loaded)
		uprobes_detach(&st->uprobes);	/* first: its returns fold through the spine's maps */
	if (st->o->target.nr_pids || st->o->target.nr_tids)
		edges_switch_every_cpu(st->host.ncpus);	/* fold the slices running now (-- CMD: its exit did) */
	st->stop_ns = mono_ns();		/* what is accounted ends here, not when the links are gone */
	threads_detach(&st->prog);	/* links only: programs and maps stay readable */
	view_curses_close(st->ui);	/* the terminal as it was, before the final report */
	st->ui = NULL;
	refresh(st);
	tma_check_counts(st, true);
	st->rep.stop_reason = why;
	if (st->o->target.nr_pids)
		edges_add_idle_threads(&st->tt, &st->o->target, st->t0, st->rep.duration_ns);
	if (st->uprobes_loaded)
		probe_evidence(st);
	if (st->rep.self.stat[STAT_THREADS_FULL])
		warn_add("threads map full: %llu thread switches not accounted (raise --max-threads)",
			 st->rep.self.stat[STAT_THREADS_FULL]);
	if (st->rep.self.stat[STAT_EXIT_DROPS])
		warn_add("%llu exited threads' final sums lost (ring buffer full)", st->rep.self.stat[STAT_EXIT_DROPS]);
	if (st->tt.threads_folded)
		warn_add("%llu exited threads folded into their processes' sums (the latest %zu are kept one by one; "
			 "--max-exited)%s", st->tt.threads_folded, st->tt.max_exited, st->tt.procs_folded ?
			 ", and the oldest processes' into per-comm sums (JSON \"folded\")" : "");
	if (st->rep.self.stat[STAT_PIDS_FULL])
		warn_add("pid filter full: %llu forked processes not followed (raise --max-pids)",
			 st->rep.self.stat[STAT_PIDS_FULL]);
	if (st->uprobes_loaded && st->rep.self.stat[STAT_STACKS_FULL])
		warn_add("uprobes: all %d call-stack slots taken: %llu calls counted without deltas (raise --max-stacks)",
			 st->uprobes.max_stacks, st->rep.self.stat[STAT_STACKS_FULL]);
	if (st->uprobes_loaded && st->rep.self.stat[STAT_FUNCS_FULL])
		warn_add("uprobes: (function, thread) rows full: %llu calls lost (raise --max-funcs)",
			 st->rep.self.stat[STAT_FUNCS_FULL]);
	if (st->trace && trace_run_finish(st->trace, &st->tt, &st->rep.self, st->rep.target, why, mono_ns(),
					  err, sizeof(err))) {
		err_print("%s", err);
		rc = 1;
	}
	if (st->sampling) {
		struct thread_stats sum;

		thread_table_total(&st->tt, &sum);
		if (sampling_collect(&st->samp, &st->evs, &st->rep.self, sum.oncpu_ns) == 0)
			st->rep.samples = &st->samp.res;
	}
	if (st->mem_on && memsamples_collect(&st->mem) == 0)
		st->rep.mem = &st->mem.res;
	if (st->offcpu && offcpu_collect(&st->off, st->sampling ? &st->samp.folded : &st->off_folded) == 0)
		st->rep.offcpu = &st->off.res;
	if (outfile_is_open(&st->folded_out)) {
		if (folded_write(st->sampling ? &st->samp.folded : &st->off_folded, st->folded_out.f))
			st->folded_out.write_errno = ENOMEM;
		if (outfile_commit(&st->folded_out, err, sizeof(err))) {
			err_print("%s", err);
			rc = 1;
		}
	}
	if (!st->o->quiet)
		report_text_final(&st->rep, stdout, st->o->top);
	if (outfile_is_open(&st->json_out)) {
		report_json_write(&st->rep, st->json_out.f);
		if (outfile_commit(&st->json_out, err, sizeof(err))) {
			err_print("%s", err);
			rc = 1;
		}
	}
	if ((fflush(stdout) || ferror(stdout)) && !rc) {
		err_print("writing the report to standard output failed: %s", strerror(errno ? errno : EIO));
		rc = 1;
	}
	return rc;
}

static void cleanup(struct run_state *st)
{
	if (st->sampling)
		sampling_free(&st->samp);
	if (st->offcpu)
		offcpu_free(&st->off);
	if (st->mem_on)
		memsamples_free(&st->mem);
	folded_free(&st->off_folded);
	if (st->uprobes_loaded)
		uprobes_destroy(&st->uprobes);
	uprobe_set_free(&st->uset);
	free(st->frows);
	free(st->rate_calls);
	free(st->guarded);
	maps_watch_free(&st->watch);
	trace_run_free(st->trace);	/* before the ring buffer it reads goes */
	st->trace = NULL;
	outfile_abort(&st->json_out);	/* no-op once committed */
	outfile_abort(&st->folded_out);
	if (st->loaded)
		threads_destroy(&st->prog);
	perf_counters_close(&st->pc);
	thread_table_free(&st->tt);
	view_curses_close(st->ui);
	st->ui = NULL;
	view_free(&st->view);
	for (int i = 0; i < st->o->target.nr_pids; i++)
		if (st->o->target.pidfds[i] >= 0)
			close(st->o->target.pidfds[i]);
}

/* A mode's loop in place of wait_loop/finish; detach before anything is freed. */
static int run_mode_loop(struct run_state *st)
{
	struct run_env env = { .o = st->o, .host = &st->host, .evs = &st->evs, .cpu = st->cpu,
			       .tma_level = st->tma_level, .tma_plan = st->tma_level ? &st->plan : NULL, .prog = &st->prog, .pc = &st->pc, .tcfg = &st->tcfg,
			       .uprobes = st->uprobes_loaded ? &st->uprobes : NULL, .uset = &st->uset,
			       .stop = &stop_signal };
	int r = st->mode->loop(st->mode->ctx, &env);

	if (st->uprobes_loaded)
		uprobes_detach(&st->uprobes);
	threads_detach(&st->prog);
	cleanup(st);
	return r;
}

int run_profile(struct options *o)
{
	/* the snapshots of every interval come and go as mmaps: a long run's heap does not ratchet up
	 * to its largest working set (the daemon does the same) */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	return run_with_mode(o, NULL);
}

int run_with_mode(struct options *o, const struct run_mode *m)
{
	struct run_state st = { .o = o, .mode = m };
	char err[512];
	const char *why;
	int r;

	libbpf_verbose = o->verbose;
	libbpf_set_print(libbpf_print);
	if ((r = choose_cpu(&st)))
		return r;
	st.host.pmu = events_host_has_pmu(st.host.pmu_why, sizeof(st.host.pmu_why));
	if ((r = choose_events(&st, st.host.pmu)))
		return r;
	if (o->dry_run) {
		if (dryrun_print(st.cpu, st.tma_level, st.tma_level ? st.plan.note : "", &st.evs, stdout))
			return 1;
		if (o->nr_uprobe_specs && (r = preview_uprobes(&st)))
			return r;
		if (o->mem_source) {
			struct mem_event ev;

			if (mem_event_choose(o->mem_source, st.cpu, false, &ev, err, sizeof(err)))
				printf("mem-samples: none: %s\n", err);
			else
				mem_event_print(&ev, stdout);
		}
		return 0;
	}
	if (host_check_privilege(err, sizeof(err))) {
		err_print("%s", err);
		return EXIT_USAGE;
	}
	if (target_check(&o->target, err, sizeof(err))) {
		err_print("%s", err);
		return EXIT_USAGE;
	}
	if ((r = check_sample_rate(o)))
		return r;
	if ((r = resolve_uprobes(&st))) {
		uprobe_set_free(&st.uset);
		return r;
	}
	if ((o->json_path && outfile_open(&st.json_out, "--json", o->json_path, OUTFILE_AT_END, o->out_mode,
					  err, sizeof(err))) ||
	    (o->folded_path && outfile_open(&st.folded_out, "--folded", o->folded_path, OUTFILE_AT_END, o->out_mode,
					    err, sizeof(err))) ||
	    (o->trace_path && trace_run_open(&st.trace, o->trace_path, o->out_mode, err, sizeof(err))) ||
	    (o->target.argv && target_spawn(&o->target, err, sizeof(err)))) {
		err_print("%s", err);	/* outputs are opened before the run: no data is lost at its end */
		cleanup(&st);
		return EXIT_USAGE;
	}
	host_info_read(&st.host);
	announce_capabilities(&st);
	install_signals();
	if ((r = setup_bpf(&st))) {
		target_abort(&o->target);
		cleanup(&st);
		return r;
	}
	st.rep = (struct report){ .host = &st.host, .evs = &st.evs, .tt = &st.tt,
				  .uset = st.uset.nr_funcs || st.uset.nr_deferred ? &st.uset : NULL,
				  .recipe = st.cpu ? tma_cpu_name(st.cpu) : NULL,
				  .tma_plan = st.tma_level ? &st.plan : NULL, .tma_level = st.tma_level,
				  .samples_live = st.sampling ? &st.samp.live : NULL };
	view_init(&st.view, o->top);
	st.t0 = mono_ns();
	st.rep.setup_cpu_ns = self_cpu_ns();
	st.rate_ts = st.t0;
	if (st.trace)
		trace_run_start(st.trace, &st.evs, st.tma_level ? &st.plan : NULL, st.t0, o->interval_ms);
	if (m)
		return run_mode_loop(&st);
	if (target_release(&o->target, err, sizeof(err))) {
		err_print("%s", err);
		cleanup(&st);
		return EXIT_USAGE;
	}
	target_describe(&o->target, st.rep.target, sizeof(st.rep.target));
	st.rep.mono_ns = st.t0;
	view_start(&st.view, &st.rep);
	st.ui = view_curses_start(&st.view, o->batch, &o->interval_ms, o->target.child != 0);
	watch_maps(&st);
	why = wait_loop(&st);
	st.rep.run_cpu_ns = self_cpu_ns() - st.rep.setup_cpu_ns;	/* draining and reports are after */
	forward_stop(&o->target);
	r = finish(&st, why);
	cleanup(&st);
	if (o->target.child && !o->target.child_reaped && !stop_signal && !target_gone(&o->target))
		fprintf(stderr, "tmabpf: profiling stopped (%s); waiting for the command (pid %d) to exit: Ctrl-C "
			"stops it\n", why, (int)o->target.child);
	if (o->target.child) {
		int code = command_exit_code(&o->target);

		return r ? r : code;
	}
	return r;
}
