// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The view model and its plain-text back end, from a report built here:
 * TMA rows computed from the skylakex recipe's own events (this host has no
 * PMU, so the live runs never show TMA: these values come from a known
 * memory-bound profile, as in test_tma.c, never from a hardware reading).
 *  - TMA level-1 bar: proportions, exact width, no TMA;
 *  - thread/process/function rows, dominant level-2 node, header bar;
 *  - sort by numbers and names, reverse, filter by name and pid;
 *  - columns dropped by priority on narrow widths;
 *  - interval deltas and open slices (a thread blocked across refreshes);
 *  - drill-down: TMA tree to level 3, bottleneck path, counters with
 *    percent running, hottest functions;
 *  - batch text: header, columns and rows parse back;
 *  - sampled functions (source s): interval deltas of the sampling snapshots,
 *    samples, share, estimated time, TMA of their counter deltas, drill-downs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "view/report_text.h"
#include "tma/tma.h"
#include "view/view_model.h"
#include "skx_profile.h"
#include "pmu/key_encode.h"


static const struct tma_cpu *cpu;
static struct tma_plan plan;
static struct event_list evs;
static struct host_info host = { .cpu = "Test CPU", .ncpus = 2, .ncpus_online = 2, .pmu = true };
static struct thread_table tt;
static struct report rep;
static struct uprobe_set uset;
static struct func_row frows[1];

/* value of the profile for planned event e, times scale */
static double value_of(int e, double scale)
{
	char a[TMA_KEY_LEN], b[TMA_KEY_LEN];

	tma_event_key(evs.ev[e].name, b, sizeof(b));
	for (size_t k = 0; skx_llm_decode[k].k; k++) {
		tma_event_key(skx_llm_decode[k].k, a, sizeof(a));
		if (!strcmp(a, b))
			return skx_llm_decode[k].v * scale;
	}
	return -1;
}

/* counters at scale, running share 'run' (scaled values stay the profile's) */
static void fill(struct counter_val *c, double scale, double run)
{
	for (int e = 0; e < evs.n; e++) {
		c[e].enabled = 1000000000ULL;
		c[e].running = (unsigned long long)(c[e].enabled * run);
		c[e].value = (unsigned long long)(value_of(e, scale) * run);
	}
}

static struct thread_stats thread(unsigned pid, unsigned tid, const char *comm, double oncpu_s)
{
	struct thread_stats t = { .pid = pid, .tid = tid, .first_seen_ns = 1000 + tid };

	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	t.oncpu_ns = (unsigned long long)(oncpu_s * 1e9);
	return t;
}

#define BASE 5000000000ULL	/* CLOCK_MONOTONIC at the start of the run */

static void set_live(struct thread_stats *t, size_t n)
{
	struct thread_stats *copy = malloc(n * sizeof(*copy));

	memcpy(copy, t, n * sizeof(*copy));
	thread_table_set_live(&tt, copy, n);
}

static bool setup(void)
{
	struct tma_env env = { 0 };
	char err[256];

	cpu = tma_cpu_by_name("skylakex");
	if (!cpu || tma_plan(&plan, cpu, 3, TMABPF_MAX_EVENTS, &env, tma_encode_key, err, sizeof(err)) ||
	    tma_plan_append(&plan, &evs, err, sizeof(err))) {
		printf("not ok - planning skylakex --tma=3: %s\n", err);
		return false;
	}
	for (int e = 0; e < evs.n; e++)
		if (value_of(e, 1) < 0) {
			printf("not ok - no profile value for planned event %s\n", evs.ev[e].name);
			return false;
		}
	thread_table_init(&tt, evs.n);
	uset.nr_libs = 1;
	uset.libs[0].module = "/usr/lib/libtest.so";
	uset.nr_funcs = 1;
	uset.funcs = calloc(1, sizeof(*uset.funcs));
	uset.funcs[0].symbol = "sgemm_kernel";
	rep = (struct report){ .host = &host, .recipe = "skylakex", .evs = &evs, .tt = &tt, .tma_plan = &plan,
			       .tma_level = 3, .uset = &uset, .frows = frows, .nfrows = 1 };
	snprintf(rep.target, sizeof(rep.target), "pid 100");
	return true;
}

static void test_bar(void)
{
	struct vm_tma t = { .ok = true, .l1 = { 10, 10, 60, 20 } };
	char bar[64];

	vm_tma_bar(&t, 20, bar);
	check(!strcmp(bar, "FFSSBBBBBBBBBBBBRRRR"), "bar FE10 BS10 BE60 RE20 in 20: %s", bar);
	t = (struct vm_tma){ .ok = true, .l1 = { 100.0 / 3, 100.0 / 3, NAN, 100.0 / 3 } };
	vm_tma_bar(&t, 10, bar);
	check(strlen(bar) == 10 && !strchr(bar, 'B') && strspn(bar, "F") >= 3, "thirds in 10 letters, n/a left out: %s", bar);
	t = (struct vm_tma){ .ok = true, .l1 = { -1.5, 0, 101.5, 0 } };
	vm_tma_bar(&t, 8, bar);
	check(!strcmp(bar, "BBBBBBBB"), "negative nodes count as zero: %s", bar);
	t = (struct vm_tma){ .ok = false };
	vm_tma_bar(&t, 6, bar);
	check(!strcmp(bar, "------"), "no TMA: dashes: %s", bar);
	vm_state_bar(55, 20, 20, 10, bar);
	check(!strcmp(bar, "######++--"), "STATE on 55 runq 20 blocked 20 in 10: each ends at its running sum: '%s'",
	      bar);
	vm_state_bar(50, 0, 20, 10, bar);
	check(!strcmp(bar, "#####--   "), "STATE: 30 %% not there is blank: '%s'", bar);
	vm_state_bar(NAN, -3, 250, 8, bar);
	check(!strcmp(bar, "--------"), "STATE: n/a and negative shares count 0, the sum stops at 100 %%: '%s'", bar);
	vm_state_bar(0, 0, 0, 4, bar);
	check(!strcmp(bar, "    "), "STATE: a thread not there: blank '%s'", bar);
}

static int col_of(const struct vm_table *t, const char *name)
{
	for (int c = 0; c < t->ncols; c++)
		if (!strcmp(t->col[c].name, name))
			return c;
	return -1;
}

static const char *comm_at(const struct vm_table *t, size_t i)
{
	return i < t->nrows ? t->rows[i].s[0] : "";
}

static char *drill_text(const struct view *v, enum vm_kind k, const struct vm_row *row)
{
	struct vm_lines l = {};
	size_t len = 1;
	char *s;

	view_drill(v, k, row, &l);
	for (size_t i = 0; getenv("TEST_VIEW_PRINT") && i < l.n; i++)
		printf("%s\n", l.line[i]);
	for (size_t i = 0; i < l.n; i++)
		len += strlen(l.line[i]) + 1;
	s = calloc(1, len);
	for (size_t i = 0; i < l.n; i++) {
		strcat(s, l.line[i]);
		strcat(s, "\n");
	}
	vm_lines_free(&l);
	return s;
}

/* A first refresh with nothing yet (no thread, no function): empty tables, none of them
 * allocated, sorted without touching their rows (the sanitized build checks it: qsort_r(NULL, 0)
 * is undefined). */
static void test_empty(void)
{
	struct report r0 = rep;
	struct view v;

	r0.uset = NULL;
	r0.frows = NULL;
	r0.nfrows = 0;
	r0.duration_ns = 1000000000ULL;
	r0.mono_ns = BASE + r0.duration_ns;
	view_init(&v, 20);
	view_start(&v, &r0);
	view_update(&v, &r0);
	check(v.tab[VM_THREADS].nrows == 0 && v.tab[VM_PROCS].nrows == 0 && v.tab[VM_FUNCS].nrows == 0,
	      "no thread, no function: empty tables (%zu threads, %zu functions)", v.tab[VM_THREADS].nrows,
	      v.tab[VM_FUNCS].nrows);
	view_free(&v);
}

static void test_first_period(struct view *v)
{
	struct thread_stats t[3] = {
		thread(100, 101, "llm-decode", 0.8),
		thread(100, 102, "idle", 0),
		thread(200, 201, "worker", 0.4),
	};
	const struct vm_table *tt_ = &v->tab[VM_THREADS], *tp = &v->tab[VM_PROCS], *tf = &v->tab[VM_FUNCS];
	struct tma_result res;
	char *text = NULL, *d;
	size_t len;
	FILE *f;

	fill(t[0].c, 1, 1.0);
	fill(t[2].c, 0.5, 0.5);	/* multiplexed: ran half the time, scaled back */
	t[1].last_out_ns = BASE + 500000000ULL;	/* blocked since 0.5 s */
	t[1].out_blocked = 1;
	set_live(t, 3);
	frows[0].key = (struct func_key){ .fn = 0, .tid = 101 };
	frows[0].s.pid = 100;
	frows[0].s.calls = 10;
	frows[0].s.returns = 10;
	frows[0].s.oncpu_ns = 500000000;
	frows[0].s.self_oncpu_ns = 400000000;
	frows[0].s.wall_ns = 600000000;
	fill(frows[0].s.c, 0.5, 1.0);
	rep.duration_ns = 1000000000ULL;
	rep.mono_ns = BASE + rep.duration_ns;
	view_start(v, &rep);
	view_update(v, &rep);

	check(tt_->nrows == 3 && !strcmp(comm_at(tt_, 0), "llm-decode") && !strcmp(comm_at(tt_, 1), "worker"),
	      "threads sorted by ONCPU%%: %s, %s, %s", comm_at(tt_, 0), comm_at(tt_, 1), comm_at(tt_, 2));
	check(col_of(tt_, "TMA_L1") > 0 && col_of(tt_, "TMA_L2") > 0, "TMA columns present when TMA is on");
	check(!tt_->rows[0].tma_done && isnan(tt_->rows[0].v[col_of(tt_, "TMA_L1")]),
	      "row TMA is computed only for the rows shown");
	view_tma_rows(v, VM_THREADS, 0, 3);
	view_tma_rows(v, VM_FUNCS, 0, 1);
	report_tma(&rep, &tt.live[0], &res);
	check(tt_->rows[0].tma.ok && fabs(tt_->rows[0].tma.l1[VM_BE] - tma_result_get(&res, "tma_backend_bound")) < 1e-9,
	      "row TMA Backend_Bound %.2f = the engine's", tt_->rows[0].tma.l1[VM_BE]);
	check(!strcmp(tt_->rows[0].tma.l2, "Memory_Bound"), "dominant L2 node: %s", tt_->rows[0].tma.l2);
	check(tt_->rows[1].tma.ok && !strcmp(tt_->rows[1].tma.l2, "Memory_Bound") &&
	      fabs(tt_->rows[1].tma.l1[VM_BE] - tt_->rows[0].tma.l1[VM_BE]) < 1e-6 && tt_->rows[1].mux,
	      "multiplexed thread: same TMA after scaling, marked");
	check(!tt_->rows[2].tma.ok, "thread with no on-CPU time: no TMA");
	check(fabs(tt_->rows[2].v[col_of(tt_, "BLOCK%")] - 50) < 1e-6, "open slice: blocked since 0.5 s = %.1f%% of 1 s",
	      tt_->rows[2].v[col_of(tt_, "BLOCK%")]);
	check(v->hdr.tma.ok && !strcmp(v->hdr.tma.l2, "Memory_Bound"), "header TMA of all threads: %s", v->hdr.tma.l2);
	check(v->hdr.mux_pct > 0 && v->hdr.mux_pct < 50, "header multiplexing %.1f%%", v->hdr.mux_pct);
	check(tp->nrows == 2 && tp->rows[0].pid == 100 && tp->rows[0].v[col_of(tp, "THREADS")] == 2,
	      "processes: 2, pid 100 has 2 threads");
	check(tf->nrows == 1 && tf->rows[0].src == 'u' && !strcmp(tf->rows[0].s[0], "sgemm_kernel") &&
	      tf->rows[0].v[col_of(tf, "CALLS/s")] == 10 && tf->rows[0].v[col_of(tf, "SELF%")] == 80,
	      "functions: sgemm_kernel, source u, 10 calls/s, 80%% self");

	/* batch text, wide enough for every column (--width) */
	v->width = 300;
	f = open_memstream(&text, &len);
	report_text_interval(v, f);
	fclose(f);
	if (getenv("TEST_VIEW_PRINT"))
		fputs(text, stdout);
	check(strstr(text, "tma: [") && strstr(text, "Backend_Bound") && strstr(text, "L2: Memory_Bound"),
	      "text header has the TMA bar and L2");
	{
		char *head = strstr(text, "    PID     TID COMM"), *row = head ? strchr(head, '\n') + 1 : NULL;
		char *tma_col = head ? strstr(head, "TMA_L1") : NULL;

		size_t at = 0;	/* TMA_L1's column in the header ("…" in an elided name: 3 bytes, 1 column) */

		for (const char *p = head; tma_col && p < tma_col; p++)
			at += (*p & 0xc0) != 0x80;
		const char *bar = head && tma_col && row ? row + at : "";
		size_t nb = 0;

		for (int i = 0; i < 20 && bar[i]; i++)
			nb += bar[i] == 'B';
		check(strspn(bar, "FSBR") == 20 && nb >= 12 && strstr(row, "Memory_Bound") && strstr(row, "llm-decode"),
		      "text row: TMA bar under its header (%.20s), L2 node", bar);
	}
	check(strstr(text, "functions (uprobes: 1 in 1 files") && strstr(text, "  100 u sgemm_kernel"),
	      "text functions table with source column");
	free(text);

	/* drill-down */
	d = drill_text(v, VM_THREADS, &tt_->rows[0]);
	check(strstr(d, "thread 101 \"llm-decode\"") && strstr(d, "TMA (recipe skylakex, levels 1-3"),
	      "thread drill-down title and TMA heading");
	check(strstr(d, "Backend_Bound") && strstr(d, "  Memory_Bound") && strstr(d, "DRAM_Bound") &&
	      strstr(d, "MEM_Bandwidth"), "drill-down tree to level 3");
	check(strstr(d, "bottleneck: Backend_Bound") && strstr(d, "\xe2\x80\xba MEM_Bandwidth 60.0%"),
	      "drill-down bottleneck path");
	check(strstr(d, "CPU_CLK_UNHALTED.THREAD") && strstr(d, "100.0%"), "drill-down counters with percent running");
	check(strstr(d, "hottest functions") && strstr(d, "sgemm_kernel"), "drill-down hottest functions");
	free(d);
	d = drill_text(v, VM_THREADS, &tt_->rows[1]);
	check(strstr(d, " 50.0%") != NULL, "multiplexed thread's counters run 50%%");
	free(d);
	d = drill_text(v, VM_FUNCS, &tf->rows[0]);
	check(strstr(d, "function sgemm_kernel in /usr/lib/libtest.so") && strstr(d, "Memory_Bound") &&
	      strstr(d, "threads running it"), "function drill-down: TMA of its inclusive counters, threads");
	free(d);
	d = drill_text(v, VM_PROCS, &tp->rows[0]);
	check(strstr(d, "process 100") && strstr(d, "llm-decode") && strstr(d, "idle"), "process drill-down lists threads");
	free(d);
	d = drill_text(v, VM_EVENTS, &v->tab[VM_EVENTS].rows[0]);
	check(strstr(d, "event ") && strstr(d, "top threads"), "event drill-down");
	free(d);
}

static void test_sort_filter(struct view *v)
{
	const struct vm_table *t = &v->tab[VM_THREADS];
	int comm = col_of(t, "COMM"), oncpu = col_of(t, "ONCPU%");

	view_set_sort(v, VM_THREADS, comm, false);
	check(!strcmp(comm_at(t, 0), "idle") && !strcmp(comm_at(t, 2), "worker"), "sort by COMM ascending");
	view_set_sort(v, VM_THREADS, comm, true);
	check(!strcmp(comm_at(t, 0), "worker") && !strcmp(comm_at(t, 2), "idle"), "COMM reversed");
	view_set_sort(v, VM_THREADS, oncpu, true);
	check(!strcmp(comm_at(t, 0), "idle") && !strcmp(comm_at(t, 2), "llm-decode"), "ONCPU%% reversed: smallest first");
	view_set_sort(v, VM_THREADS, col_of(t, "TMA_L1"), false);
	check(!strcmp(comm_at(t, 2), "idle"), "TMA column: rows without TMA last");
	view_set_sort(v, VM_THREADS, oncpu, false);
	view_set_filter(v, "WORK");
	check(t->nrows == 1 && t->total == 3 && !strcmp(comm_at(t, 0), "worker"), "filter by comm, case-insensitive");
	view_set_filter(v, "100");
	check(t->nrows == 2 && v->tab[VM_PROCS].nrows == 1, "filter by pid: 2 threads, 1 process");
	view_set_filter(v, "102");
	check(t->nrows == 1 && !strcmp(comm_at(t, 0), "idle"), "filter by tid");
	view_set_filter(v, "sgemm");
	check(v->tab[VM_FUNCS].nrows == 1 && t->nrows == 0, "filter by symbol in the functions table");
	view_set_filter(v, "");
	check(t->nrows == 3, "empty filter: all rows");
}

static void test_narrow(const struct view *v)
{
	const struct vm_table *t = &v->tab[VM_THREADS];
	bool shown[VM_MAX_COLS];
	int used = view_fit_columns(t, 44, true, shown), all = 0;

	check(used <= 44, "44 columns: fits (%d)", used);
	check(shown[col_of(t, "TID")] && shown[col_of(t, "COMM")] && shown[col_of(t, "ONCPU%")],
	      "44 columns: TID, COMM, ONCPU%% kept");
	check(!shown[col_of(t, "MIGR")] && !shown[col_of(t, "VCSW")], "44 columns: MIGR, VCSW dropped first");
	used = view_fit_columns(t, 1000, true, shown);
	for (int c = 0; c < t->ncols; c++)
		all += shown[c];
	check(all == t->ncols, "wide terminal: every column");
	view_fit_columns(t, 10, true, shown);
	check(shown[col_of(t, "TID")] && !shown[col_of(t, "PID")], "10 columns: only priority-1 columns left");
}

static void test_second_period(struct view *v)
{
	struct thread_stats t[2] = {
		thread(100, 101, "llm-decode", 1.1),
		thread(100, 102, "idle", 0),
	};
	const struct vm_table *tt_ = &v->tab[VM_THREADS];
	const struct vm_row *r;

	fill(t[0].c, 1.5, 1.0);
	t[1].last_out_ns = BASE + 500000000ULL;	/* still blocked */
	t[1].out_blocked = 1;
	set_live(t, 2);	/* worker gone without an exit record: no row */
	rep.duration_ns = 2000000000ULL;
	rep.mono_ns = BASE + rep.duration_ns;
	view_update(v, &rep);
	r = view_find_row(tt_, 100, 101, -1);
	check(r && fabs(r->v[col_of(tt_, "ONCPU%")] - 30) < 1e-6, "interval delta: 0.3 s of 1 s on-CPU = %.1f%%",
	      r ? r->v[col_of(tt_, "ONCPU%")] : -1);
	check(r && fabs(r->v[col_of(tt_, "CPU_CLK_UNHALTED.THREAD")] - 0.5 * CLK) < 1, "interval counter delta");
	r = view_find_row(tt_, 100, 102, -1);
	check(r && fabs(r->v[col_of(tt_, "BLOCK%")] - 100) < 1e-6, "blocked across the refresh: 100%% (%.1f)",
	      r ? r->v[col_of(tt_, "BLOCK%")] : -1);
	check(v->tab[VM_FUNCS].nrows == 0, "function not called in this interval: no row");
	view_whole_run(v, &rep);
	r = view_find_row(tt_, 100, 102, -1);
	check(r && r->v[col_of(tt_, "BLOCK%")] == 0, "whole run: sums as the JSON has them (no open slice)");
}

static void test_final_text(void)
{
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);

	rep.stop_reason = "duration";
	report_text_final(&rep, f, 20, 120, false);
	fclose(f);
	check(strstr(text, "=== tmabpf final report (duration) ===") && strstr(text, "processes:\n    PID THREADS COMM") &&
	      strstr(text, "llm-decode"), "final text report");
	free(text);
}

static struct sample_func sfunc(unsigned tid, const char *module, const char *sym, unsigned long long count,
				 double scale)
{
	struct sample_func f = { .module = module, .symbol = sym, .pid = 300, .tid = tid, .count = count,
				 .period = count * 2000000ULL };	/* cpu-clock at 500 Hz: 2 ms a sample */

	snprintf(f.comm, sizeof(f.comm), "%s", tid == 301 ? "sampler" : "helper");
	fill(f.c, scale, 1.0);
	return f;
}

static void test_sampled(void)
{
	static const char mod[] = "/usr/bin/app", leaf[] = "hot_leaf", cold[] = "cold_fn";
	struct thread_stats t[2] = { thread(300, 301, "sampler", 0.9), thread(300, 302, "helper", 0.3) };
	struct sample_func snap[3];
	struct sample_result live = { .event = "cpu-clock", .hz = 500, .cpu_clock = true, .funcs = snap, .nfuncs = 3 };
	struct report r2 = rep;
	const struct vm_table *tf;
	const struct vm_row *hot, *c;
	struct view v;
	char *text = NULL, *d;
	size_t len;
	FILE *f;
	int id;

	r2.uset = NULL;
	r2.frows = NULL;
	r2.nfrows = 0;
	r2.samples_live = &live;
	fill(t[0].c, 0.9, 1.0);
	fill(t[1].c, 0.3, 1.0);
	set_live(t, 2);
	snap[0] = sfunc(301, mod, leaf, 300, 0.6);
	snap[1] = sfunc(301, mod, cold, 100, 0.2);
	snap[2] = sfunc(302, mod, leaf, 100, 0.2);
	qsort(snap, 3, sizeof(*snap), sample_func_cmp);
	r2.duration_ns = 1000000000ULL;
	r2.mono_ns = BASE + r2.duration_ns;
	view_init(&v, 20);
	view_start(&v, &r2);
	view_update(&v, &r2);
	tf = &v.tab[VM_FUNCS];
	hot = view_find_row(tf, 300, -1, tf->nrows ? tf->rows[0].id : -1);
	check(tf->nrows == 2 && hot && hot->src == 's' && !strcmp(hot->s[0], leaf) && hot->id >= VM_SAMPLED_ID0,
	      "sampled functions: per-process rows, source s, the hottest first (%zu rows, %s)", tf->nrows,
	      hot ? hot->s[0] : "-");
	check(hot && hot->v[col_of(tf, "SAMPLES")] == 400 && fabs(hot->v[col_of(tf, "ONCPU_MS")] - 800) < 1e-6 &&
	      fabs(hot->v[col_of(tf, "SHARE%")] - 80) < 1e-6 && hot->v[col_of(tf, "SAMPLES/s")] == 400,
	      "sampled row: 400 samples, 800 ms estimated, 80%% share (of the threads' on-CPU time, by its "
	      "share of the samples), 400/s");
	check(hot && isnan(hot->v[col_of(tf, "CALLS")]) && isnan(hot->v[col_of(tf, "CALLS/s")]) &&
	      isnan(hot->v[col_of(tf, "SELF_MS")]), "sampled row: calls and self blank");
	view_tma_rows(&v, VM_FUNCS, 0, tf->nrows);
	check(hot && hot->tma.ok && !strcmp(hot->tma.l2, "Memory_Bound"), "sampled row TMA from its counter deltas: %s",
	      hot ? hot->tma.l2 : "-");
	id = hot ? hot->id : -1;
	d = drill_text(&v, VM_FUNCS, hot);
	check(strstr(d, "function hot_leaf in /usr/bin/app, pid 300  (source: samples, cpu-clock at 500 Hz") &&
	      strstr(d, "samples 400 (400/s), 80.0%") && strstr(d, "DRAM_Bound") && strstr(d, "bottleneck: Backend_Bound") &&
	      strstr(d, "threads running it") && strstr(d, "301     sampler") && strstr(d, "302     helper"),
	      "sampled function drill-down: samples, TMA tree, threads running it");
	free(d);
	c = view_find_row(&v.tab[VM_THREADS], 300, 301, -1);
	d = drill_text(&v, VM_THREADS, c);
	check(c && strstr(d, "hottest functions") && strstr(d, "  s hot_leaf") && strstr(d, "  s cold_fn") &&
	      strstr(d, "  s hot_leaf") < strstr(d, "  s cold_fn"), "thread drill-down lists its sampled functions");
	free(d);
	v.width = 300;
	f = open_memstream(&text, &len);
	report_text_interval(&v, f);
	fclose(f);
	if (getenv("TEST_VIEW_PRINT"))
		fputs(text, stdout);
	check(strstr(text, "functions (samples: 500, cpu-clock at 500 Hz; S: u = uprobes, s = samples):") &&
	      strstr(text, "    PID S FUNCTION                 CALLS   CALLS/s  SAMPLES SAMPLES/s") &&
	      strstr(text, "    300 s hot_leaf                     -         -      400       400"),
	      "text functions table with sampled rows");
	free(text);
	view_set_filter(&v, "cold");
	check(tf->nrows == 1 && !strcmp(tf->rows[0].s[0], cold), "filter keeps the sampled row by name");
	view_set_filter(&v, "");

	/* second refresh: only the new samples; the row keeps its id */
	for (int i = 0; i < 3; i++)
		if (snap[i].tid == 301 && snap[i].symbol == leaf) {
			snap[i].count += 150;
			snap[i].period = snap[i].count * 2000000ULL;
		}
	t[0].oncpu_ns += 300000000;
	set_live(t, 2);
	r2.duration_ns = 2000000000ULL;
	r2.mono_ns = BASE + r2.duration_ns;
	view_update(&v, &r2);
	hot = view_find_row(tf, 300, -1, id);
	check(tf->nrows == 1 && hot && hot->v[col_of(tf, "SAMPLES")] == 150 && fabs(hot->v[col_of(tf, "SHARE%")] - 100) < 1e-6,
	      "interval: only new samples (%.0f), functions without new samples have no row (%zu rows)",
	      hot ? hot->v[col_of(tf, "SAMPLES")] : -1, tf->nrows);
	/* many sampled functions: each keeps its own id */
	{
		enum { N = 300 };
		static char names[N][16];
		struct sample_func *many = calloc(N + 3, sizeof(*many));
		struct sample_result big = live;
		int *ids = calloc(N, sizeof(*ids)), distinct = 1;

		memcpy(many, snap, sizeof(snap));
		for (int i = 0; i < N; i++) {
			snprintf(names[i], sizeof(names[i]), "fn_%03d", i);
			many[3 + i] = sfunc(302, mod, names[i], 1 + i, 0.01);
		}
		qsort(many, N + 3, sizeof(*many), sample_func_cmp);
		big.funcs = many;
		big.nfuncs = N + 3;
		r2.samples_live = &big;
		r2.duration_ns = 3000000000ULL;
		r2.mono_ns = BASE + r2.duration_ns;
		view_update(&v, &r2);
		for (size_t i = 0; i < tf->nrows; i++)
			for (int k = 0; k < N; k++)
				if (tf->rows[i].s[0] == names[k])
					ids[k] = tf->rows[i].id;
		for (int k = 0; k < N; k++)
			for (int j = 0; j < k && distinct; j++)
				distinct = ids[k] >= VM_SAMPLED_ID0 && ids[k] != ids[j];
		check(tf->nrows == N && distinct && !view_find_row(tf, 300, -1, id),
		      "%d new sampled functions, each with its own id (%zu rows); hot_leaf without new samples: no row", N,
		      tf->nrows);
		r2.duration_ns = 4000000000ULL;
		r2.mono_ns = BASE + r2.duration_ns;
		for (int i = 0; i < N + 3; i++)
			many[i].count += many[i].symbol == names[150] ? 7 : 0;	/* one function, new samples */
		view_update(&v, &r2);
		check(tf->nrows == 1 && tf->rows[0].s[0] == names[150] && tf->rows[0].v[col_of(tf, "SAMPLES")] == 7 &&
		      tf->rows[0].id == ids[150], "the same function keeps its id at the next refresh");
		free(ids);
		free(many);
		r2.samples_live = &live;	/* big ends with this block (ASan: stack-use-after-scope) */
	}
	view_whole_run(&v, &r2);
	check(v.tab[VM_FUNCS].nrows == 0 && col_of(&v.tab[VM_FUNCS], "SAMPLES") < 0,
	      "whole run: no sampled rows (the final report has its own section)");
	view_free(&v);
}

int main(void)
{
	struct view v;

	test_bar();
	if (!setup())
		return check_exit() | 1;
	test_empty();
	view_init(&v, 20);
	test_first_period(&v);
	test_sort_filter(&v);
	test_narrow(&v);
	test_second_period(&v);
	test_final_text();
	view_free(&v);
	test_sampled();
	return check_exit();
}
