/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * uprobe_run: the --uprobe feature for one run.  Resolves the LIB:GLOB specs
 * (uprobe_targets.c; a bare library name nothing maps yet is deferred), loads
 * and attaches the programs (uprobes_loader.c), and while the run goes:
 *   - learns the targets' executable mappings from the kernel as they happen
 *     (mmap_events.c; /proc/PID/maps read once for the state at attach, and
 *     polled only where the records cannot be had) into maps_watch.c, and
 *     attaches deferred specs when a target maps their library;
 *   - --max-rate: detaches functions that fire faster than allowed;
 *   - the hot-probe guard: says once which probe costs more than
 *     UPROBE_GUARD_SHARE of the targets' CPU time (calls x cost per call:
 *     the programs' time per hit from BPF stats, the trap's by entry class,
 *     measured here when first needed: probe_calib.c);
 * and at the end says what had no evidence (uprobe_evidence.c).
 */
#ifndef TMABPF_UPROBE_RUN_H
#define TMABPF_UPROBE_RUN_H
#include <stdbool.h>
#include <stdio.h>
#include "collect/mmap_events.h"
#include "collect/probe_calib.h"
#include "collect/uprobe_late.h"
#include "collect/uprobes_loader.h"
#include "model/results.h"
#include "sym/libdirs.h"
#include "sym/maps_watch.h"
#include "sym/uprobe_targets.h"

#define UPROBE_SETTLE_MIN_NS 100000000ULL	/* uprobe_run_attach */
#define UPROBE_DRAIN_NS 200000000ULL		/* uprobe_run_detach */

struct itt_run;

struct uprobe_run {
	struct uprobe_set set;
	struct uprobes_prog prog;
	bool loaded;
	struct func_row *rows;		/* uprobe_run_read(): every (function, thread) row */
	size_t nrows;
	uint32_t *raw_fn;		/* --itt: each row's function id as the map keys it (a span's ITT_FN | id) */
	unsigned long long run_ns, run_cnt;	/* the programs' BPF run time (kernel stats) */
	double max_rate;		/* --max-rate: calls/s; 0 = off */
	unsigned long long *rate_calls;	/* per function, at the last rate check */
	unsigned long long rate_ts;
	unsigned long long rate_oncpu;	/* tracked threads' on-CPU ns then */
	bool *guarded;			/* per function: hot-probe warning given */
	int nrate;			/* functions in rate_calls */
	struct maps_watch watch;	/* files the targets map (deferred specs, zero evidence) */
	unsigned long long watch_ts;	/* last read of /proc/PID/maps; 0: not yet */
	struct mmap_events mev;		/* the kernel's mapping records for the targets (uprobe_run_watch_start) */
	struct uprobe_late late;	/* mappings of deferred files made before their probes attached */
	struct libdirs dirs;		/* where the targets load libraries from (deferred bare names) */
	size_t dirs_searched;		/* dirs[0..dirs_searched) searched for the deferred names */
	struct probe_calib calib;	/* per-call trap cost, measured once a probe is hot */
	int calib_state;		/* 0 not measured, 1 measured, -1 failed */
	struct itt_run *itt;		/* --itt: its own state (itt_run.c); NULL when off */
};

/* Resolve specs for target pid (-1: none) or the command exe (NULL: none).  defer: a bare library
 * name nothing maps yet is probed at once in every file of that name in the directories the target
 * loads libraries from (libdirs.c), and in any other a target maps later (said on stderr).  0, or -errno with one
 * line in err (bad input). */
int uprobe_run_resolve(struct uprobe_run *u, const char *const *specs, int nspecs, int pid, const char *exe,
		       bool defer, char *err, size_t errlen);
/* The --per-call marker spec, resolved as one more spec (before the --uprobe ones, which then
 * leave its functions alone): its functions, now or when deferred, are markers. */
int uprobe_run_resolve_marker(struct uprobe_run *u, const char *spec, int pid, const char *exe, bool defer, char *err,
			      size_t errlen);
/* --itt: find the collector and, for a launched command (before it is spawned), name it in the
 * environment; a missing collector is said in one line (the run goes on without spans), and so is
 * each of pids[0..npids) (-p) that has not loaded it. */
void uprobe_run_enable_itt(struct uprobe_run *u, bool command, const int *pids, int npids);
/* Delete row i of the last read from the BPF map (its thread exited): by the key the map has. */
void uprobe_run_forget(struct uprobe_run *u, size_t i);
/* Every poll: what arrived for --itt (span names). */
void uprobe_run_poll(struct uprobe_run *u);
/* Anything to probe, now or later. */
bool uprobe_run_wanted(const struct uprobe_run *u);
/* Load (the spine's maps shared) and attach; then say what was attached.  0 or -errno with err. */
int uprobe_run_load(struct uprobe_run *u, struct threads_prog *tp, const struct uprobes_cfg *cfg, char *err,
		    size_t errlen);
/* Attach, then open the window every probe counts in (enum uprobe_window).  running: the targets
 * run already (-p, -t, -a), so a call may have been entered before its probe attached, unseen,
 * and its probed callees would count as outermost calls: the window opens after a settle as long
 * as attaching took (at least UPROBE_SETTLE_MIN_NS), so that only calls longer than that can. */
int uprobe_run_attach(struct uprobe_run *u, bool running, char *err, size_t errlen);
/* Rows and run time now, into u->rows, u->run_ns/run_cnt. */
void uprobe_run_read(struct uprobe_run *u);
/* Learn the mappings of pids[0..npids) (the targets' processes) from the kernel from now on; where
 * that fails, say so in one line: the maps are then polled. */
void uprobe_run_watch_start(struct uprobe_run *u, const int *pids, int npids);
/* How long the run's poll may wait (dflt_ms, or less): while a deferred spec has no file yet and the
 * mapping records come from the kernel, UPROBE_RUN_DEFER_POLL_MS, so that a mapping from a new
 * directory is seen (and the deferred names' files there probed) in about that long. */
#define UPROBE_RUN_DEFER_POLL_MS 2
int uprobe_run_poll_ms(const struct uprobe_run *u, int dflt_ms);
/* When the targets' maps are due a look at now_ns (often while a deferred spec waits and in the
 * first seconds after t0_ns, when most dlopens happen); pids the target processes. */
bool uprobe_run_watch_due(const struct uprobe_run *u, unsigned long long now_ns, unsigned long long t0_ns);
void uprobe_run_watch(struct uprobe_run *u, const int *pids, int npids, unsigned long long now_ns);
/* Once a second (after uprobe_run_read): --max-rate and the hot-probe guard; oncpu_ns: the
 * tracked threads' on-CPU time so far. */
bool uprobe_run_guard_due(const struct uprobe_run *u, unsigned long long now_ns);
void uprobe_run_guard(struct uprobe_run *u, unsigned long long now_ns, unsigned long long oncpu_ns);
/* End of run (after the last read): losses of the stats slots as warnings, and the zero
 * evidence (watch NULL: system-wide, nothing watched). */
void uprobe_run_finish(struct uprobe_run *u, const struct self_stats *self, bool watched);
/* Close the window, wait up to UPROBE_DRAIN_NS for the calls it counts to return (said when some
 * do not), detach. */
void uprobe_run_detach(struct uprobe_run *u);
void uprobe_run_free(struct uprobe_run *u);
/* --dry-run: what the globs match, each function's entry class and its cost here. */
void uprobe_run_preview(const struct uprobe_run *u, FILE *f);

#endif
