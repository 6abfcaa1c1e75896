// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * One profiling run:
 *   options -> run_prepare (CPU, events, TMA plan) -> checks, outputs opened,
 *   (command spawned, stopped) -> the collectors' table: load, attach ->
 *   release the command -> poll loop (collectors poll and tick; -I intervals
 *   shown live or as text) -> detach -> the last read, finish -> reports.
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "collect/bpf_util.h"
#include "collect/samples_loader.h"
#include "lib/clock.h"
#include "lib/outfile.h"
#include "lib/text_fit.h"
#include "lib/warn.h"
#include "model/zero_counts.h"
#include "output/dryrun.h"
#include "output/flamegraph_svg.h"
#include "output/pprof.h"
#include "collect/collector.h"
#include "run/memsamples_collector.h"
#include "run/offcpu_collector.h"
#include "run/percall_collector.h"
#include "run/roofline_collector.h"
#include "run/run.h"
#include "run/sampling_collector.h"
#include "run/spine_collector.h"
#include "run/tasks_collector.h"
#include "run/trace_collector.h"
#include "run/uprobes_collector.h"
#include "view/report_text.h"
#include "view/view_curses.h"
#include "view/view_model.h"

#define POLL_MS 50

/*
 * SIGINT, SIGTERM or SIGHUP in -- COMMAND mode: profiling has stopped (within one poll) and the report is
 * written without waiting for the command.  The signal is passed on to the command, as perf record
 * does (it sends SIGTERM), unless it came from the terminal, which sent it to the command too.
 * The command's exit status is returned when it ends within STOP_GRACE_MS, else it is left running,
 * said so, and the exit status is 128 + the signal.
 */
#define STOP_GRACE_MS 2000

static void forward_stop(struct target *t)
{
	if (!t->child || t->child_reaped || !run_stop_signal)
		return;
	if (!run_stop_from_tty && kill(t->child, run_stop_signal) == 0)
		note_print("%s: profiling stopped, the signal passed on to the command (pid %d)",
			run_stop_signal_name(), t->child);
}

static int command_exit_code(struct target *t)
{
	if (run_stop_signal && !t->child_reaped && target_wait(t, STOP_GRACE_MS)) {
		note_print("the command (pid %d) is still running %d ms after %s; it is left running",
			t->child, STOP_GRACE_MS, run_stop_signal_name());
		return 128 + run_stop_signal;
	}
	return target_exit_code(t);
}

/* The run: its collectors' context, and what shows it. */
struct run_state {
	struct options *o;		/* the run's options (c.o), the target's life in them */
	struct run_ctx c;
	struct run_prep prep;
	struct view view;		/* the -I summaries and the live view show it */
	struct view_curses *ui;		/* live view; NULL: plain text */
	char tma_off[256];		/* why the planned TMA is not shown (zero_counts_tma) */
	struct outfile json_out, folded_out;	/* --json, --folded: opened before the run */
	struct outfile pprof_out;		/* --pprof */
	struct outfile flame_out;		/* --flamegraph */
};

/* The profiling run's table, in the order of its dependencies: the spine (or task accounting)
 * first, whose maps the others share; the uprobes before the roofline, --per-call and the trace,
 * which use their set and program; sampling before the off-CPU stacks, whose folded lines join
 * its own.  Detached in reverse: everything folds through the spine's maps. */
static const struct collector *const run_collectors[] = {
	&spine_collector, &tasks_collector, &uprobes_collector, &roofline_collector, &percall_collector,
	&trace_collector, &sampling_collector, &mem_collector, &offcpu_collector,
};

/* TMA only where its events counted: an event the PMU opens but does not
 * model (an emulator's STALL_SLOT_BACKEND) reads 0, and the breakdown would
 * be a clean, false 0 %: hide it while so, and at the end say why. */
static void tma_check_counts(struct run_state *st, bool final)
{
	struct thread_stats sum;
	bool zero;

	if (!st->prep.tma_level)
		return;
	thread_table_total(&st->c.tt, &sum);
	zero = zero_counts_tma(&st->prep.evs, sum.c, st->c.rep.duration_ns / 1e9, st->tma_off, sizeof(st->tma_off)) > 0;
	st->c.rep.tma_off = zero ? st->tma_off : NULL;
	if (zero && final)
		warn_add("%s", st->tma_off);
}

/* --sample=HZ above what the kernel allows fails before anything is loaded. */
static enum run_status check_sample_rate(const struct options *o)
{
	int max = samples_max_rate();

	if (o->sample_hz && max > 0 && o->sample_hz > max) {
		err_print("--sample=%d is above kernel.perf_event_max_sample_rate (%d): lower the rate or raise the sysctl",
			  o->sample_hz, max);
		return RUN_BAD_INPUT;
	}
	return RUN_OK;
}

/* --dry-run: what would be opened and probed, and which events open here; counts nothing. */
static int dry_run(struct run_state *st)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);	/* its lines then wrapped to --width */
	int r;

	if (!f) {
		err_print("--dry-run: out of memory");
		return RUN_FAILED;
	}
	if (dryrun_print(st->prep.cpu, st->prep.tma_level, st->prep.tma_level ? st->prep.plan.note : "", &st->prep.evs,
			 f)) {
		fclose(f);
		free(text);
		return RUN_FAILED;
	}
	dryrun_print_here(&st->prep.evs, st->o->cpu_name, st->prep.host.pmu ? NULL : st->prep.host.pmu_why, f);
	if ((r = collectors_init(&st->c)) == RUN_OK)
		collectors_preview(&st->c, f);
	collectors_free(&st->c);
	if (fclose(f) == 0)
		text_wrap_lines(stdout, text_width(stdout, st->o->width), text);
	free(text);
	return r;
}

/* Outputs are opened, and the command spawned (stopped before its exec), before the run: no data
 * is lost at its end, and a bad path fails before anything is loaded. */
static enum run_status open_outputs(struct run_state *st, struct options *o)
{
	char err[512];

	if ((o->json_path && outfile_open(&st->json_out, "--json", o->json_path, OUTFILE_AT_END, o->out_mode,
					  err, sizeof(err))) ||
	    (o->folded_path && outfile_open(&st->folded_out, "--folded", o->folded_path, OUTFILE_AT_END, o->out_mode,
					    err, sizeof(err))) ||
	    (o->flamegraph_path && outfile_open(&st->flame_out, "--flamegraph", o->flamegraph_path, OUTFILE_AT_END,
						o->out_mode, err, sizeof(err))) ||
	    (o->pprof_path && outfile_open(&st->pprof_out, "--pprof", o->pprof_path, OUTFILE_AT_END, o->out_mode,
					   err, sizeof(err))) ||
	    (o->target.argv && target_spawn(&o->target, err, sizeof(err)))) {
		err_print("%s", err);
		return RUN_BAD_INPUT;
	}
	return RUN_OK;
}

/* One -I interval: new deltas, shown live or as plain text. */
static void show_interval(struct run_state *st)
{
	if (st->ui && view_curses_paused(st->ui))
		return;
	run_refresh(&st->c);
	tma_check_counts(st, false);
	collectors_interval(&st->c);
	view_update(&st->view, &st->c.rep);
	if (st->ui)
		view_curses_draw(st->ui);
	else
		report_text_interval(&st->view, stdout);
}

/* q with -- COMMAND ends the command as Ctrl-C does: SIGINT to the whole foreground job, so the
 * children of a wrapper (`sh -c 'CMD'`) get it too, when tmabpf leads its process group (started from
 * an interactive shell); else to the command alone (forward_stop). */
static void quit_command(void)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;

	if (getpgrp() == getpid() && sigaction(SIGINT, &ign, &old) == 0) {
		if (kill(0, SIGINT) == 0)	/* tmabpf ignores its own copy */
			run_stop_from_tty = 1;	/* the group had it: not passed on again */
		sigaction(SIGINT, &old, NULL);
	}
	run_stop_signal = SIGINT;
}

static const char *wait_loop(struct run_state *st)
{
	struct run_ctx *c = &st->c;
	unsigned long long deadline = c->o->duration_s > 0 ? c->t0 + (unsigned long long)(c->o->duration_s * 1e9) : 0;
	unsigned long long next_iv = c->o->interval_ms ? c->t0 + c->o->interval_ms * 1000000ULL : 0;

	collectors_tick(c, mono_ns());	/* the targets' maps, as they are at the start */
	for (;;) {
		unsigned long long t;

		collectors_poll(c, collectors_poll_ms(c, POLL_MS));
		if (run_stop_signal)
			return run_stop_signal_name();
		if (st->ui && view_curses_input(st->ui) == VC_QUIT) {
			if (c->o->target.child)
				quit_command();
			return "quit";
		}
		t = mono_ns();
		if (deadline && t >= deadline)
			return "duration";
		if (target_gone(&st->o->target))
			return "target exited";
		c->interval_now = next_iv && t >= next_iv;
		if (c->interval_now) {
			show_interval(st);
			next_iv += c->o->interval_ms * 1000000ULL;
			if (next_iv < t)
				next_iv = t + c->o->interval_ms * 1000000ULL;
		}
		collectors_tick(c, t);
	}
}

/* --folded FILE, --flamegraph FILE.svg: the samples' stacks, with the off-CPU stacks among them. */
static int write_folded(struct run_state *st)
{
	struct folded none = { 0 }, *f = st->c.rep.folded ? st->c.rep.folded : &none;
	struct outfile *out[] = { &st->folded_out, &st->flame_out };
	char err[512];
	int r, rc = RUN_OK;

	for (int i = 0; i < 2; i++) {
		if (!outfile_is_open(out[i]))
			continue;
		if ((r = i ? flamegraph_svg_write(f, out[i]->f) : folded_write(f, out[i]->f)))
			out[i]->write_errno = -r;	/* the write's own errno: ENOSPC on a full disk */
		if (outfile_commit(out[i], err, sizeof(err))) {
			err_print("%s", err);
			rc = RUN_FAILED;
		}
	}
	return rc;
}

/* --pprof FILE: the samples with their stacks, as a pprof profile. */
static int write_pprof(struct run_state *st)
{
	const struct profile *p = st->c.rep.profile;
	char err[512];
	int r;

	if (!outfile_is_open(&st->pprof_out))
		return RUN_OK;
	if (!p) {
		err_print("--pprof: no profile (the samples could not be read)");
		return RUN_FAILED;
	}
	if (p->nomem)
		warn_add("--pprof: out of memory: some stacks are missing from the profile");
	if ((r = pprof_write(p, st->pprof_out.f, err, sizeof(err))))
		st->pprof_out.write_errno = -r;	/* the write's own errno: ENOSPC on a full disk */
	if (outfile_commit(&st->pprof_out, err, sizeof(err))) {
		err_print("%s", err);
		return RUN_FAILED;
	}
	return RUN_OK;
}

static int finish(struct run_state *st, const char *why)
{
	struct run_ctx *c = &st->c;
	char err[512];
	int rc;

	collectors_detach(c);
	view_curses_close(st->ui);	/* the terminal as it was, before the final report */
	st->ui = NULL;
	run_refresh(c);
	tma_check_counts(st, true);
	c->rep.stop_reason = why;
	rc = collectors_finish(c);
	if (write_folded(st) && !rc)
		rc = RUN_FAILED;
	if (write_pprof(st) && !rc)
		rc = RUN_FAILED;
	if (!c->o->quiet)
		report_text_final(&c->rep, stdout, c->o->top, c->o->width, c->o->verbose);
	if (outfile_is_open(&st->json_out)) {
		report_json_write(&c->rep, st->json_out.f);
		if (outfile_commit(&st->json_out, err, sizeof(err))) {
			err_print("%s", err);
			rc = RUN_FAILED;
		}
	}
	if ((fflush(stdout) || ferror(stdout)) && !rc) {
		err_print("writing the report to standard output failed: %s", strerror(errno ? errno : EIO));
		rc = RUN_FAILED;
	}
	return rc;
}

static void cleanup(struct run_state *st)
{
	struct run_ctx *c = &st->c;

	collectors_free(c);
	outfile_abort(&st->json_out);	/* no-op once committed */
	outfile_abort(&st->folded_out);
	outfile_abort(&st->pprof_out);
	outfile_abort(&st->flame_out);
	thread_table_free(&c->tt);
	view_curses_close(st->ui);
	st->ui = NULL;
	view_free(&st->view);
	target_free(&st->o->target);
}

/* --sample-events: thread sums from the task iterator, nothing at context switches, unless a
 * feature needs per-switch deltas.  Said in one line either way. */
static void choose_accounting(struct run_ctx *c)
{
	const char *need;

	if (c->o->sample_events_hz <= 0)
		return;
	need = run_switch_needed(c->o);
	c->acct.use_tasks = !need;
	c->acct.tasks_counts = TASKS_ESTIMATES;
	if (need)
		note_print("accounting: per-switch (%s needs the per-switch program; threads' counts are "
			"exact, the functions' estimated from event samples)", need);
	else
		note_print("accounting: sampled (threads' times from the task iterator, their counts "
			"estimated from event samples; nothing runs at context switches)");
}

int run_profile(struct options *o)
{
	struct run_state st = { .o = o };
	struct run_ctx *c = &st.c;
	char err[512];
	const char *why;
	int r;

	/* the snapshots of every interval come and go as mmaps: a long run's heap does not ratchet up
	 * to its largest working set (the daemon does the same) */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	bpf_log_init(o->verbose);
	run_ctx_init(c, o, &st.prep, run_collectors, sizeof(run_collectors) / sizeof(run_collectors[0]));
	if ((r = run_prepare(o, &st.prep)))
		return r;
	if (o->dry_run)
		return dry_run(&st);
	if ((r = run_check_privilege()))
		return r;
	if (target_check(&o->target, err, sizeof(err))) {
		err_print("%s", err);
		return RUN_BAD_INPUT;
	}
	if ((r = check_sample_rate(o)))
		return r;
	choose_accounting(c);
	c->acct.seed = true;	/* the run's window: every thread's times from attach or its fork */
	c->rep = (struct report){ .host = &st.prep.host, .evs = &st.prep.evs, .tt = &c->tt,
				  .recipe = st.prep.cpu ? tma_cpu_name(st.prep.cpu) : NULL,
				  .tma_plan = st.prep.tma_level ? &st.prep.plan : NULL, .tma_level = st.prep.tma_level,
				  .estimated = c->acct.use_tasks };
	/* bad --uprobe, --spin, --trace or --roofline input fails before anything is opened */
	if ((r = collectors_init(c)) || (r = open_outputs(&st, o))) {
		cleanup(&st);
		return r;
	}
	run_host(&st.prep);
	run_install_signals();
	if ((r = collectors_load(c)) || (r = collectors_attach(c))) {
		target_abort(&o->target);
		cleanup(&st);
		return r;
	}
	view_init(&st.view, o->top);
	st.view.width = o->width;
	st.view.verbose = o->verbose;
	if (!c->t0)	/* else the spine's seed set it */
		c->t0 = mono_ns();
	c->rep.setup_cpu_ns = self_cpu_ns();
	collectors_start(c);
	if (target_release(&o->target, err, sizeof(err))) {
		err_print("%s", err);
		cleanup(&st);
		return RUN_BAD_INPUT;
	}
	target_describe(&o->target, c->rep.target, sizeof(c->rep.target));
	c->rep.mono_ns = c->t0;
	view_start(&st.view, &c->rep);
	st.ui = view_curses_start(&st.view, o->batch, &o->interval_ms, o->target.child != 0);
	why = wait_loop(&st);
	c->rep.run_cpu_ns = self_cpu_ns() - c->rep.setup_cpu_ns;	/* draining and reports are after */
	forward_stop(&o->target);
	r = finish(&st, why);
	cleanup(&st);
	if (o->target.child && !o->target.child_reaped && !run_stop_signal && !target_gone(&o->target))
		note_print("profiling stopped (%s); waiting for the command (pid %d) to exit: Ctrl-C "
			"stops it", why, (int)o->target.child);
	if (o->target.child) {
		int code = command_exit_code(&o->target);

		return r ? r : code;
	}
	return r;
}
