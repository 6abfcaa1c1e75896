// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The --uprobe feature for one run.  See uprobe_run.h. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "collect/itt_run.h"
#include "collect/uprobe_evidence.h"
#include "collect/uprobe_preview.h"
#include "collect/uprobe_run.h"
#include "lib/clock.h"
#include "lib/warn.h"

/* Deferred spec d's functions in one more file of its name, found where the target loads libraries
 * from (before any process maps it). */
struct ahead {
	struct uprobe_run *u;
	int d, nlibs, libs[UPROBE_MAX_LIBS];
	char first[PATH_MAX];
};

/* Deferred spec d in one more file, path, mapped by pid (or to be): retried without the pid when that
 * process is gone already (it only names the root the path is in). */
static int add_file(struct uprobe_run *u, int d, const char *path, int pid, int *lib, char *err, size_t errlen)
{
	int r = uprobe_set_add_deferred(&u->set, d, path, pid, lib, err, errlen);

	if (r && pid > 0 && kill(pid, 0) && errno == ESRCH)
		r = uprobe_set_add_deferred(&u->set, d, path, -1, lib, err, errlen);
	return r;
}

static void add_ahead(void *ctx, const char *path)
{
	struct ahead *a = ctx;
	struct uprobe_run *u = a->u;
	char real[PATH_MAX], err[1024];
	int lib, before = u->set.deferred[a->d].attached;

	if (!realpath(path, real))
		return;
	/* a file probed already (by another spec, or a link: libfoo.so.1 -> libfoo.so.1.2) adds nothing; no
	 * pid: no process maps it yet, and reading a target's maps for it costs milliseconds */
	if (add_file(u, a->d, real, -1, &lib, err, sizeof(err))) {
		warn_add("uprobe: '%s:%s': %s: %s", u->set.deferred[a->d].lib, u->set.deferred[a->d].glob, real, err);
		return;
	}
	if (lib < 0 || u->set.deferred[a->d].attached == before || a->nlibs >= UPROBE_MAX_LIBS)
		return;
	a->libs[a->nlibs++] = lib;
	if (!a->first[0])
		snprintf(a->first, sizeof(a->first), "%s", real);
}

/* Deferred spec d in the directories not searched yet: how many files took it (their libraries in a). */
static int search_ahead(struct uprobe_run *u, int d, struct ahead *a)
{
	*a = (struct ahead){ .u = u, .d = d };
	libdirs_find(&u->dirs, u->dirs_searched, u->set.deferred[d].lib, add_ahead, a);
	return a->nlibs;
}

int uprobe_run_resolve(struct uprobe_run *u, const char *const *specs, int nspecs, int pid, const char *exe,
		       bool defer, char *err, size_t errlen)
{
	size_t searched = u->dirs_searched;

	for (int i = 0; i < nspecs; i++) {
		int r = uprobe_set_add_spec(&u->set, specs[i], pid, exe, err, errlen);

		/* a bare name that nothing maps yet (a library the target will dlopen): each file of that name
		 * where the target loads libraries from now, any other when a target maps it */
		if (r == -ENOENT && defer && !strchr(specs[i], '/') && specs[i][0] != ':') {
			char why[1024];
			struct ahead a;
			int d = u->set.nr_deferred;

			snprintf(why, sizeof(why), "%s", err);
			if ((r = uprobe_set_defer(&u->set, specs[i], err, errlen)) == 0) {
				if (!u->dirs.n && pid > 0)
					libdirs_of_process(&u->dirs, pid);
				else if (!u->dirs.n && exe)
					libdirs_of_command(&u->dirs, exe);
				u->dirs_searched = searched;
				if (search_ahead(u, d, &a))
					note_print("uprobe: %s; '%s' probed in %s%s before any process maps it "
						"(where the target loads libraries from), and in any other file of that name "
						"a target maps", why, specs[i], a.first,
						a.nlibs > 1 ? " and more files of that name" : "");
				else
					note_print("uprobe: %s; '%s' attaches when the target maps a file of "
						"that name", why, specs[i]);
				continue;
			}
		}
		if (r) {
			uprobe_set_forget_symbols(&u->set);
			return r;
		}
	}
	uprobe_set_forget_symbols(&u->set);
	u->dirs_searched = u->dirs.n;
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

void uprobe_run_enable_itt(struct uprobe_run *u, bool command, const int *pids, int npids)
{
	struct itt_run *r = calloc(1, sizeof(*r));
	char err[1024];

	if (!r) {
		warn_add("--itt: out of memory");
		return;
	}
	if (itt_run_find(r, err, sizeof(err))) {
		warn_add("%s; going on without ITT spans", err);
		free(r);
		return;
	}
	if (command)
		itt_run_env(r);
	r->host = !command && !npids;
	itt_run_check_pids(r, pids, npids);
	u->itt = r;
}

void uprobe_run_poll(struct uprobe_run *u)
{
	if (u->itt)
		itt_run_poll(u->itt);
}

bool uprobe_run_wanted(const struct uprobe_run *u)
{
	return u->set.nr_funcs || u->set.nr_deferred || u->itt;
}

int uprobe_run_load(struct uprobe_run *u, struct threads_prog *tp, const struct uprobes_cfg *cfg, char *err,
		    size_t errlen)
{
	struct uprobes_cfg c = *cfg;
	int r;

	if (u->itt)
		c.itt_ring_bytes = ITT_RING_BYTES;
	r = uprobes_load(&u->prog, tp, &c, err, errlen);

	u->loaded = true;	/* uprobe_run_free() cleans up a partial load */
	return r;
}

int uprobe_run_attach(struct uprobe_run *u, bool running, char *err, size_t errlen)
{
	char line[1024], when[64] = "";
	int skipped, r = uprobes_attach(&u->prog, &u->set, err, errlen);
	unsigned long long settle = u->prog.attach_ns > UPROBE_SETTLE_MIN_NS ? u->prog.attach_ns : UPROBE_SETTLE_MIN_NS;

	if (!r && u->itt)
		r = itt_run_attach(u->itt, &u->prog, &u->set, err, errlen);
	if (r)
		return r;
	if (running) {
		nanosleep(&(struct timespec){ .tv_sec = settle / 1000000000ULL, .tv_nsec = settle % 1000000000ULL }, NULL);
		snprintf(when, sizeof(when), "; all count from one instant, %.1f ms later", settle / 1e6);
	}
	uprobes_window_open(&u->prog);
	skipped = uprobe_set_unprobeable(&u->set, line, sizeof(line));
	for (int i = 0; i < u->set.nr_libs; i++)
		note_print("uprobe: %s", u->set.libs[i].note);
	if (skipped)
		note_print("uprobe: %s", line);
	if (u->set.nr_funcs || u->set.nr_deferred || !u->itt)
		note_print("uprobe: %d functions attached in %.1f ms (%s)%s", u->set.nr_funcs - skipped,
			   u->prog.attach_ns / 1e6, uprobes_mode_name(&u->prog), when);
	if (u->itt)
		note_print("itt: spans of the ITT collector %s%s", u->itt->path, when);
	u->rate_ts = mono_ns();
	return 0;
}

void uprobe_run_read(struct uprobe_run *u)
{
	free(u->rows);
	u->rows = NULL;
	u->nrows = 0;
	uprobes_read(&u->prog, &u->rows, &u->nrows);
	free(u->raw_fn);
	u->raw_fn = NULL;
	if (u->itt && u->nrows && (u->raw_fn = malloc(u->nrows * sizeof(*u->raw_fn))))
		for (size_t i = 0; i < u->nrows; i++)
			u->raw_fn[i] = u->rows[i].key.fn;
	if (u->itt)
		itt_run_rows(u->itt, u->rows, u->nrows);
	uprobes_run_stats(&u->prog, &u->run_ns, &u->run_cnt);
}

void uprobe_run_forget(struct uprobe_run *u, size_t i)
{
	struct func_key k = u->rows[i].key;

	if (u->itt && !u->raw_fn)
		return;	/* out of memory at the read: its raw key is not known */
	if (u->raw_fn)
		k.fn = u->raw_fn[i];
	uprobes_forget(&u->prog, &k);
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

/* A target mapped path (at mapped_ns, CLOCK_MONOTONIC; 0: seen in its maps): attach the deferred
 * specs that name it (all of them, then the library's links once), saying how late. */
static void attach_named(struct uprobe_run *u, int pid, const char *path, unsigned long long mapped_ns)
{
	int lib = -1, nfuncs = 0, n = 0, funcs = u->set.nr_funcs;
	unsigned long long now;
	char err[1024], names[512] = "", late[64] = "";
	size_t o = 0;

	for (int d = 0; d < u->set.nr_deferred; d++) {
		struct uprobe_deferred *df = &u->set.deferred[d];
		int l, before = df->attached;

		if (df->attached < 0 || !maps_watch_name_matches(df->lib, path))
			continue;
		if (add_file(u, d, path, pid, &l, err, sizeof(err))) {
			warn_add("uprobe: '%s:%s': pid %d mapped %s, but: %s", df->lib, df->glob, pid, path, err);
			continue;	/* said once: the watch reports each file once */
		}
		lib = l >= 0 ? l : lib;
		nfuncs += df->attached - before;
		o += snprintf(names + o, o < sizeof(names) ? sizeof(names) - o : 0, "%s'%s:%s'", n++ ? ", " : "",
			      df->lib, df->glob);
	}
	if (lib < 0 || u->set.nr_funcs == funcs)
		return;
	if (uprobes_reattach_lib(&u->prog, &u->set, lib, err, sizeof(err))) {
		warn_add("uprobe: attaching %s after pid %d mapped it: %s", path, pid, err);
		return;
	}
	now = mono_ns();
	uprobe_late_attached(&u->late, &u->set, lib, now, pid);	/* pid's lateness is said here */
	if (mapped_ns)
		snprintf(late, sizeof(late), " %.1f ms after it mapped it (calls before are not counted)",
			 (now - mapped_ns) / 1e6);
	note_print("uprobe: pid %d mapped %s: %d functions of %s attached%s", pid, path, nfuncs, names, late);
}

/* A target mapped a file from a directory (or with a run path) not known before: the deferred names'
 * files there are probed now, before any process maps them. */
static void attach_ahead(struct uprobe_run *u, int pid, const char *path, unsigned long long mapped_ns)
{
	bool todo[UPROBE_MAX_LIBS] = { false }, failed[UPROBE_MAX_LIBS] = { false };
	int added[UPROBE_MAX_LIBS], nlibs[UPROBE_MAX_LIBS], lib1[UPROBE_MAX_LIBS];
	char err[1024], after[64] = "", *first[UPROBE_MAX_LIBS];
	struct ahead a;

	if (!libdirs_add_object(&u->dirs, path))
		return;
	for (int d = 0; d < u->set.nr_deferred; d++) {
		int before = u->set.deferred[d].attached;

		first[d] = NULL;
		nlibs[d] = search_ahead(u, d, &a);
		added[d] = u->set.deferred[d].attached - before;
		for (int i = 0; i < a.nlibs; i++)
			todo[a.libs[i]] = true;
		if (a.nlibs) {
			first[d] = strdup(a.first);
			lib1[d] = a.libs[0];
		}
	}
	u->dirs_searched = u->dirs.n;
	for (int l = 0; l < u->set.nr_libs; l++)	/* each library's links once, for every spec it took */
		if (todo[l] && uprobes_reattach_lib(&u->prog, &u->set, l, err, sizeof(err))) {
			warn_add("uprobe: attaching %s: %s", u->set.libs[l].module, err);
			failed[l] = true;
		} else if (todo[l]) {
			uprobe_late_attached(&u->late, &u->set, l, mono_ns(), -1);
		}
	if (mapped_ns)
		snprintf(after, sizeof(after), " (%.1f ms after)", (mono_ns() - mapped_ns) / 1e6);
	for (int d = 0; d < u->set.nr_deferred; d++) {
		struct uprobe_deferred *df = &u->set.deferred[d];

		if (first[d] && !failed[lib1[d]])
			note_print("uprobe: pid %d mapped %s%s: %d functions of '%s:%s' attached in %s%s, "
				"found in its directory (a process that maps it from now on is counted from its "
				"first call)", pid, path, after, added[d], df->lib, df->glob, first[d],
				nlibs[d] > 1 ? " and more files of that name" : "");
		free(first[d]);
	}
}

static void attach_mapped(struct uprobe_run *u, int pid, const char *path, unsigned long long mapped_ns)
{
	if (!u->set.nr_deferred)
		return;
	attach_named(u, pid, path, mapped_ns);
	attach_ahead(u, pid, path, mapped_ns);
	uprobe_set_forget_symbols(&u->set);
}

static void on_mapped(void *ctx, int pid, const char *path)
{
	attach_mapped(ctx, pid, path, 0);
}

static void on_mmap_event(void *ctx, const struct mmap_event *ev)
{
	struct uprobe_run *u = ctx;

	if (ev->path[0] != '/' || ev->path[1] == '/')
		return;	/* not a file: [vdso], anonymous executable memory ("//anon") */
	uprobe_late_mapped(&u->late, &u->set, ev);
	if (maps_watch_add(&u->watch, ev->pid, ev->path) == 1)
		attach_mapped(u, ev->pid, ev->path, ev->time_ns);
}

/* After the detach: the evidence only, nothing attaches.  Records a run's last poll left in the rings
 * (once every deferred spec has a file the poll is no longer short) still say who mapped a file
 * before its probes were attached. */
static void on_mmap_event_late(void *ctx, const struct mmap_event *ev)
{
	struct uprobe_run *u = ctx;

	if (ev->path[0] != '/' || ev->path[1] == '/')
		return;
	uprobe_late_mapped(&u->late, &u->set, ev);
	maps_watch_add(&u->watch, ev->pid, ev->path);
}

static bool deferred_pending(const struct uprobe_set *s)
{
	for (int d = 0; d < s->nr_deferred; d++)
		if (!s->deferred[d].attached)
			return true;
	return false;
}

void uprobe_run_watch_start(struct uprobe_run *u, const int *pids, int npids)
{
	char err[512];

	if (!u->loaded || mmap_events_open(&u->mev, pids, npids, err, sizeof(err)) == 0)
		return;
	warn_add("uprobe: %s; reading the targets' /proc/PID/maps every %d ms instead (a library mapped and "
		 "unmapped between two reads, or by a process that exits first, is missed)", err, MAPS_WATCH_FAST_MS);
}

int uprobe_run_poll_ms(const struct uprobe_run *u, int dflt_ms)
{
	return u->loaded && deferred_pending(&u->set) && mmap_events_on(&u->mev) && dflt_ms > UPROBE_RUN_DEFER_POLL_MS ?
	       UPROBE_RUN_DEFER_POLL_MS : dflt_ms;
}

bool uprobe_run_watch_due(const struct uprobe_run *u, unsigned long long now_ns, unsigned long long t0_ns)
{
	unsigned long long every = deferred_pending(&u->set) || now_ns - t0_ns < MAPS_WATCH_EARLY_NS ?
				   MAPS_WATCH_FAST_MS : MAPS_WATCH_MS;

	if (u->loaded && mmap_events_on(&u->mev))
		return true;	/* the records, every poll; the maps once, for the state at attach */
	return u->loaded && now_ns - u->watch_ts >= every * 1000000ULL;
}

void uprobe_run_watch(struct uprobe_run *u, const int *pids, int npids, unsigned long long now_ns)
{
	if (!u->watch_ts || !mmap_events_on(&u->mev)) {
		maps_watch_poll(&u->watch, pids, npids, on_mapped, u);
		u->watch_ts = now_ns;
	}
	mmap_events_drain(&u->mev, on_mmap_event, u);
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
		if (u->max_rate && rate > u->max_rate && !f->itt) {	/* a span is not detached alone */
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
	mmap_events_drain(&u->mev, on_mmap_event_late, u);
	if (u->mev.lost)
		warn_add("uprobe: %llu mapping records lost (a ring of %d pages was full): the libraries the targets "
			 "mapped may be incomplete", u->mev.lost, MMAP_EVENTS_RING_PAGES);
	if ((calls = calls_per_func(u))) {
		uprobe_evidence_report(&u->set, calls, watched ? &u->watch : NULL);
		free(calls);
	}
	if (u->itt)
		itt_run_finish(u->itt, u->rows, u->nrows);
	if (self->stat[STAT_STACKS_FULL]) {
		bool roof = false;	/* a probed known GEMM/GEMV: its work is kept in the slot too */

		for (int i = 0; i < u->set.nr_funcs && !roof; i++)
			roof = u->set.funcs[i].roof_cookie != 0;
		warn_add("uprobes: all %d call-stack slots taken: %llu calls counted without deltas%s (raise --max-stacks)",
			 u->prog.max_stacks, self->stat[STAT_STACKS_FULL],
			 roof ? " and, of the known GEMM/GEMV entries, without their roofline work" : "");
	}
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
	if (u->itt)
		itt_run_detach(u->itt);
	uprobes_detach(&u->prog);
}

void uprobe_run_free(struct uprobe_run *u)
{
	if (u->itt)
		itt_run_free(u->itt);
	free(u->itt);
	if (u->loaded)
		uprobes_destroy(&u->prog);
	uprobe_set_free(&u->set);
	free(u->rows);
	free(u->raw_fn);
	free(u->rate_calls);
	free(u->guarded);
	maps_watch_free(&u->watch);
	mmap_events_close(&u->mev);
	libdirs_free(&u->dirs);
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
