// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The --uprobe feature for one run.  See uprobe_run.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "collect/uprobe_evidence.h"
#include "collect/uprobe_preview.h"
#include "collect/uprobe_run.h"
#include "lib/clock.h"
#include "lib/warn.h"

int uprobe_run_resolve(struct uprobe_run *u, const char *const *specs, int nspecs, int pid, const char *exe,
		       bool defer, char *err, size_t errlen)
{
	for (int i = 0; i < nspecs; i++) {
		int r = uprobe_set_add_spec(&u->set, specs[i], pid, exe, err, errlen);

		/* a bare name that nothing maps yet (a library the target will dlopen): attach when it maps it */
		if (r == -ENOENT && defer && !strchr(specs[i], '/') && specs[i][0] != ':') {
			char why[1024];

			snprintf(why, sizeof(why), "%s", err);
			if ((r = uprobe_set_defer(&u->set, specs[i], err, errlen)) == 0) {
				fprintf(stderr, "tmabpf: uprobe: %s; '%s' attaches when the target maps a file of that name\n",
					why, specs[i]);
				continue;
			}
		}
		if (r)
			return r;
	}
	return 0;
}

int uprobe_run_resolve_marker(struct uprobe_run *u, const char *spec, int pid, const char *exe, bool defer, char *err,
			      size_t errlen)
{
	int funcs = u->set.nr_funcs, deferred = u->set.nr_deferred;
	int r = uprobe_run_resolve(u, &spec, 1, pid, exe, defer, err, errlen);

	for (int i = funcs; !r && i < u->set.nr_funcs; i++)
		u->set.funcs[i].marker = true;
	for (int d = deferred; !r && d < u->set.nr_deferred; d++)
		u->set.deferred[d].marker = true;
	return r;
}

bool uprobe_run_wanted(const struct uprobe_run *u)
{
	return u->set.nr_funcs || u->set.nr_deferred;
}

int uprobe_run_load(struct uprobe_run *u, struct threads_prog *tp, const struct uprobes_cfg *cfg, char *err,
		    size_t errlen)
{
	int r = uprobes_load(&u->prog, tp, cfg, err, errlen);

	u->loaded = true;	/* uprobe_run_free() cleans up a partial load */
	return r;
}

int uprobe_run_attach(struct uprobe_run *u, bool running, char *err, size_t errlen)
{
	char line[1024], when[64] = "";
	int skipped, r = uprobes_attach(&u->prog, &u->set, err, errlen);
	unsigned long long settle = u->prog.attach_ns > UPROBE_SETTLE_MIN_NS ? u->prog.attach_ns : UPROBE_SETTLE_MIN_NS;

	if (r)
		return r;
	if (running) {
		nanosleep(&(struct timespec){ .tv_sec = settle / 1000000000ULL, .tv_nsec = settle % 1000000000ULL }, NULL);
		snprintf(when, sizeof(when), "; all count from one instant, %.1f ms later", settle / 1e6);
	}
	uprobes_window_open(&u->prog);
	skipped = uprobe_set_unprobeable(&u->set, line, sizeof(line));
	for (int i = 0; i < u->set.nr_libs; i++)
		fprintf(stderr, "tmabpf: uprobe: %s\n", u->set.libs[i].note);
	if (skipped)
		fprintf(stderr, "tmabpf: uprobe: %s\n", line);
	fprintf(stderr, "tmabpf: uprobe: %d functions attached in %.1f ms (%s)%s\n", u->set.nr_funcs - skipped,
		u->prog.attach_ns / 1e6, uprobes_mode_name(&u->prog), when);
	u->rate_ts = mono_ns();
	return 0;
}

void uprobe_run_read(struct uprobe_run *u)
{
	free(u->rows);
	u->rows = NULL;
	u->nrows = 0;
	uprobes_read(&u->prog, &u->rows, &u->nrows);
	uprobes_run_stats(&u->prog, &u->run_ns, &u->run_cnt);
}

/* Calls per function id so far, from the rows (calloc'd, nr_funcs + 1 entries; NULL when out of memory). */
static unsigned long long *calls_per_func(const struct uprobe_run *u)
{
	unsigned long long *calls = calloc(u->set.nr_funcs + 1, sizeof(*calls));

	for (size_t i = 0; calls && i < u->nrows; i++)
		if ((int)u->rows[i].key.fn < u->set.nr_funcs)
			calls[u->rows[i].key.fn] += u->rows[i].s.calls;
	return calls;
}

/* A target mapped path: attach the deferred specs that name it (all of them, then the library's
 * links once). */
static void on_mapped(void *ctx, int pid, const char *path)
{
	struct uprobe_run *u = ctx;
	int lib = -1, nfuncs = 0, n = 0, funcs = u->set.nr_funcs;
	char err[1024], names[512] = "";
	size_t o = 0;

	for (int d = 0; d < u->set.nr_deferred; d++) {
		struct uprobe_deferred *df = &u->set.deferred[d];
		bool many = uprobe_lib_is_glob(df->lib);	/* a library glob: every file it matches */
		int l, had = df->attached;

		if ((df->attached && !many) || df->attached < 0 || !maps_watch_name_matches(df->lib, path))
			continue;
		if (uprobe_set_add_deferred(&u->set, d, path, pid, &l, err, sizeof(err))) {
			warn_add("uprobe: '%s:%s': pid %d mapped %s, but: %s", df->lib, df->glob, pid, path, err);
			if (!many)
				df->attached = -1;	/* said once */
			continue;
		}
		lib = l >= 0 ? l : lib;
		nfuncs += df->attached - had;
		o += snprintf(names + o, o < sizeof(names) ? sizeof(names) - o : 0, "%s'%s:%s'", n++ ? ", " : "",
			      df->lib, df->glob);
	}
	if (lib < 0 || u->set.nr_funcs == funcs)
		return;
	if (uprobes_reattach_lib(&u->prog, &u->set, lib, err, sizeof(err)))
		warn_add("uprobe: attaching %s after pid %d mapped it: %s", path, pid, err);
	else
		fprintf(stderr, "tmabpf: uprobe: pid %d mapped %s: %d functions of %s attached\n", pid, path, nfuncs,
			names);
}

static bool deferred_pending(const struct uprobe_set *s)
{
	for (int d = 0; d < s->nr_deferred; d++)
		if (!s->deferred[d].attached)
			return true;
	return false;
}

bool uprobe_run_watch_due(const struct uprobe_run *u, unsigned long long now_ns, unsigned long long t0_ns)
{
	unsigned long long every = deferred_pending(&u->set) || now_ns - t0_ns < MAPS_WATCH_EARLY_NS ?
				   MAPS_WATCH_FAST_MS : MAPS_WATCH_MS;

	return u->loaded && now_ns - u->watch_ts >= every * 1000000ULL;
}

void uprobe_run_watch(struct uprobe_run *u, const int *pids, int npids, unsigned long long now_ns)
{
	maps_watch_poll(&u->watch, pids, npids, on_mapped, u);
	u->watch_ts = now_ns;
}

bool uprobe_run_guard_due(const struct uprobe_run *u, unsigned long long now_ns)
{
	return u->loaded && now_ns - u->rate_ts >= 1000000000ULL;
}

/* The first check counts from the start; functions a deferred spec added get their slots then. */
static bool guard_grow(struct uprobe_run *u)
{
	bool *g;

	if (u->nrate >= u->set.nr_funcs)
		return u->guarded != NULL;
	g = realloc(u->guarded, u->set.nr_funcs * sizeof(*g));
	if (!g)
		return false;
	memset(g + u->nrate, 0, (u->set.nr_funcs - u->nrate) * sizeof(*g));
	u->guarded = g;
	return true;
}

void uprobe_run_guard(struct uprobe_run *u, unsigned long long now_ns, unsigned long long oncpu_ns)
{
	double dt = (now_ns - u->rate_ts) / 1e9, bpf_hit, cpus;
	unsigned long long *calls;
	char err[512];

	if (!u->loaded || dt < 1.0)
		return;
	if (!u->set.nr_funcs) {	/* only deferred specs so far */
		u->rate_ts = now_ns;
		return;
	}
	calls = calls_per_func(u);
	if (!calls || !guard_grow(u)) {
		free(calls);
		u->rate_ts = now_ns;
		return;
	}
	cpus = (oncpu_ns - u->rate_oncpu) / 1e9 / dt;
	bpf_hit = u->run_cnt ? (double)u->run_ns / u->run_cnt : 0;
	for (int fn = 0; fn < u->set.nr_funcs; fn++) {
		double rate = (calls[fn] - (u->rate_calls && fn < u->nrate ? u->rate_calls[fn] : 0)) / dt, cost;
		struct uprobe_func *f = &u->set.funcs[fn];

		if (f->detached)
			continue;
		if (u->max_rate && rate > u->max_rate) {
			f->detached = true;
			warn_add("detached %s: %.0f calls/s > --max-rate %.0f", f->symbol, rate, u->max_rate);
			if (uprobes_reattach_lib(&u->prog, &u->set, f->lib, err, sizeof(err)))
				warn_add("re-attaching after --max-rate: %s", err);
			continue;
		}
		if (u->guarded[fn] || cpus <= 0 || rate * uprobe_call_cost_ns(f, NULL, bpf_hit) / 1e9 < 0.01 * cpus)
			continue;	/* even the programs' own time is below 1 %: no need to measure the trap */
		if (!u->calib_state)
			u->calib_state = probe_calib_measure(&u->calib, err, sizeof(err)) ? -1 : 1;
		cost = uprobe_call_cost_ns(f, u->calib_state > 0 ? &u->calib : NULL, bpf_hit);
		if (rate * cost / 1e9 > UPROBE_GUARD_SHARE * cpus) {
			u->guarded[fn] = true;
			uprobe_guard_warn(f, rate, cost, cpus);
		}
	}
	free(u->rate_calls);
	u->rate_calls = calls;
	u->nrate = u->set.nr_funcs;
	u->rate_ts = mono_ns();	/* after a calibration pause, not now_ns */
	u->rate_oncpu = oncpu_ns;
}

void uprobe_run_finish(struct uprobe_run *u, const struct self_stats *self, bool watched)
{
	unsigned long long *calls;

	if (!u->loaded)
		return;
	if ((calls = calls_per_func(u))) {
		uprobe_evidence_report(&u->set, calls, watched ? &u->watch : NULL);
		free(calls);
	}
	if (self->stat[STAT_STACKS_FULL])
		warn_add("uprobes: all %d call-stack slots taken: %llu calls counted without deltas (raise --max-stacks)",
			 u->prog.max_stacks, self->stat[STAT_STACKS_FULL]);
	if (self->stat[STAT_FUNCS_FULL])
		warn_add("uprobes: (function, thread) rows full: %llu calls lost (raise --max-funcs)",
			 self->stat[STAT_FUNCS_FULL]);
}

void uprobe_run_detach(struct uprobe_run *u)
{
	int open;

	if (!u->loaded)
		return;
	if ((open = uprobes_window_close(&u->prog, UPROBE_DRAIN_NS)))
		warn_add("uprobe: %d thread%s still inside a probed call %.0f ms after counting stopped: %s, but the "
			 "probed calls %s after the probes detached are not", open, open == 1 ? " was" : "s were",
			 UPROBE_DRAIN_NS / 1e6, open == 1 ? "that call counts" : "those calls count",
			 open == 1 ? "it made" : "they made");
	uprobes_detach(&u->prog);
}

void uprobe_run_free(struct uprobe_run *u)
{
	if (u->loaded)
		uprobes_destroy(&u->prog);
	uprobe_set_free(&u->set);
	free(u->rows);
	free(u->rate_calls);
	free(u->guarded);
	maps_watch_free(&u->watch);
	memset(u, 0, sizeof(*u));
}

void uprobe_run_preview(const struct uprobe_run *u, FILE *f)
{
	struct probe_calib calib;
	char why[256] = "run as root to measure";
	bool measured = false;

	if (geteuid() == 0)
		measured = probe_calib_measure(&calib, why, sizeof(why)) == 0;
	uprobe_preview_print(&u->set, measured ? &calib : NULL, why, f);
}
