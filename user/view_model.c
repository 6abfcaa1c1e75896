// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The view model: per-period sums (threads, processes, functions, events),
 * the header, tables with columns and priorities, sort, filter, cells
 * (drill-downs: view_drill.c).
 *
 *   report (run.c's maps read) -> view_update: deltas since the previous
 *   update -> view_build: rows (filter, TMA per row) -> sort -> back ends.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "view_model.h"
#include "cxx_name.h"
#include "clock.h"

/* What a column shows. */
enum vm_key {
	K_PID, K_TID, K_NTHREADS, K_COMM, K_ONCPU, K_BLOCK, K_RUNQ, K_VCSW, K_IVCSW, K_MIGR, K_CTR,
	K_TMA_BAR, K_TMA_L2,
	K_SRC, K_FUNC, K_CALLS, K_CALLS_S, K_SAMPLES, K_SAMPLES_S, K_WALL, K_FONCPU, K_SHARE, K_SELF, K_SELF_PCT,
	K_FBLOCK, K_FRUNQ, K_FCTR,
	K_EVNAME, K_EVPMU, K_EVCONFIG, K_EVGROUP, K_EVRUNNING, K_EVVALUE, K_EVTOTAL,
};

void view_init(struct view *v, int top)
{
	memset(v, 0, sizeof(*v));
	v->top = top;
	for (int k = 0; k < VM_NKINDS; k++)
		v->tab[k].sort_col = -1;
}

static void free_period(struct view *v)
{
	free(v->td);
	free(v->pd);
	free(v->fd);
	free(v->ftd);
	free(v->sd.funcs);
	memset(&v->sd, 0, sizeof(v->sd));
	v->td = NULL;
	v->pd = NULL;
	v->fd = v->ftd = NULL;
	v->ntd = v->npd = v->nfd = v->nftd = 0;
}

void view_free(struct view *v)
{
	free_period(v);
	free(v->prev);
	free(v->fprev);
	free(v->sprev);
	u64map_free(&v->sids);
	free(v->snames);
	for (int k = 0; k < VM_NKINDS; k++)
		free(v->tab[k].rows);
	memset(v, 0, sizeof(*v));
}

double vm_pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0.0;
}

/* ---------- period data ---------- */

/* Time since the thread's last switch, up to now: on-CPU when it is running,
 * blocked or runqueue (its state at switch-out) when it is not.  The BPF side
 * folds it in at the next switch. */
static void add_open_slice(struct thread_stats *s, unsigned long long now)
{
	if (s->exited || !now)
		return;
	if (s->last_in_ns) {
		s->oncpu_ns += sub0(now, s->last_in_ns);
	} else if (s->last_out_ns) {
		if (s->out_blocked)
			s->offcpu_blocked_ns += sub0(now, s->last_out_ns);
		else
			s->offcpu_runqueue_ns += sub0(now, s->last_out_ns);
	}
}

/* Every thread's sums, sorted by thread_stats_cmp. */
static size_t snapshot(const struct report *r, bool open_slices, struct thread_stats **out)
{
	const struct thread_stats **all;
	size_t n = thread_table_all(r->tt, &all);
	struct thread_stats *s = malloc((n ? n : 1) * sizeof(*s));

	if (!s || !all) {
		free(s);
		free(all);
		*out = NULL;
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		s[i] = *all[i];
		if (open_slices)
			add_open_slice(&s[i], r->mono_ns);
	}
	free(all);
	qsort(s, n, sizeof(*s), thread_stats_cmp);
	*out = s;
	return n;
}

static int cmp_pid_ptr(const void *a, const void *b)
{
	const struct thread_stats *x = *(const struct thread_stats *const *)a;
	const struct thread_stats *y = *(const struct thread_stats *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Per-process sums of the period's thread deltas. */
static void build_procs(struct view *v, int nev)
{
	const struct thread_stats **by = malloc((v->ntd ? v->ntd : 1) * sizeof(*by));

	v->pd = calloc(v->ntd ? v->ntd : 1, sizeof(*v->pd));
	v->npd = 0;
	if (!by || !v->pd) {
		free(by);
		return;
	}
	for (size_t i = 0; i < v->ntd; i++)
		by[i] = &v->td[i];
	qsort(by, v->ntd, sizeof(*by), cmp_pid_ptr);
	for (size_t i = 0; i < v->ntd; i++) {
		struct vm_proc *p = v->npd ? &v->pd[v->npd - 1] : NULL;

		if (!p || p->d.pid != by[i]->pid) {
			p = &v->pd[v->npd++];
			p->d.pid = p->d.tid = by[i]->pid;
			memcpy(p->d.comm, by[i]->comm, sizeof(p->d.comm));
		}
		if (by[i]->tid == by[i]->pid)
			memcpy(p->d.comm, by[i]->comm, sizeof(p->d.comm));
		thread_stats_add(&p->d, by[i], nev);
		p->nthreads++;
	}
	free(by);
}

/*
 * Function rows of the period from uprobes (source 'u'): per (function,
 * thread) deltas, then per (function, pid) sums.  Sampled functions (source
 * 's'): build_samples().
 */
static void build_funcs(struct view *v, const struct report *r, struct func_sum *cur, size_t ncur)
{
	int nev = r->evs->n;

	for (size_t i = 0; i < ncur; i++) {
		const struct func_sum *p = v->fprev && !v->whole_run ?
			bsearch(&cur[i], v->fprev, v->nfprev, sizeof(*cur), func_sum_cmp) : NULL;

		if (p)
			func_stats_sub(&cur[i].s, &p->s, nev);
	}
	v->ftd = cur;
	v->nftd = ncur;
	v->nfd = func_sums_per_process(cur, ncur, nev, &v->fd);
}

/* Sampled functions of the period (--sample): the samples new since the
 * previous refresh, per (function, pid) and per (function, thread).  The
 * whole-run view leaves them out: the final report has its own sampled
 * functions section (report_samples.c). */
static void build_samples(struct view *v, const struct report *r)
{
	const struct sample_result *cur = r->samples_live;
	struct sample_func *keep;

	if (!cur || v->whole_run)
		return;
	if (sample_funcs_since(cur, v->sprev, v->nsprev, r->evs->n, &v->sd))
		return;
	keep = malloc((cur->nfuncs ? cur->nfuncs : 1) * sizeof(*keep));
	if (!keep)
		return;
	memcpy(keep, cur->funcs, cur->nfuncs * sizeof(*keep));
	free(v->sprev);
	v->sprev = keep;
	v->nsprev = cur->nfuncs;
}

/* A sampled function's row id, the same at every refresh. */
static int sample_id(struct view *v, const struct sample_func *f)
{
	uint64_t k = ((uint64_t)(uintptr_t)f->symbol * 0x9e3779b97f4a7c15ULL) ^ (uint64_t)(uintptr_t)f->module;
	struct vm_sname *n;

	for (;; k++) {
		void *p = u64map_get(&v->sids, k);
		size_t i = (uintptr_t)p - 1;

		if (!p)
			break;
		if (v->snames[i].module == f->module && v->snames[i].symbol == f->symbol)
			return VM_SAMPLED_ID0 + (int)i;
	}
	if (v->nsnames >= (size_t)(INT32_MAX - VM_SAMPLED_ID0))
		return -1;
	if (!v->nsnames || (v->nsnames >= 64 && !(v->nsnames & (v->nsnames - 1)))) {	/* full: 64, 128, ... */
		n = realloc(v->snames, (v->nsnames ? 2 * v->nsnames : 64) * sizeof(*n));
		if (!n)
			return -1;
		v->snames = n;
	}
	v->snames[v->nsnames] = (struct vm_sname){ f->module, f->symbol };
	if (u64map_put(&v->sids, k, (void *)(uintptr_t)(v->nsnames + 1)))
		return -1;
	return VM_SAMPLED_ID0 + (int)v->nsnames++;
}

/* ---------- header ---------- */

static void tma_why(const struct report *r, char *buf, size_t len)
{
	if (r->tma_off)
		snprintf(buf, len, "%s", r->tma_off);
	else if (report_has_tma(r))
		snprintf(buf, len, "on");
	else if (!r->host->pmu)
		snprintf(buf, len, "no PMU: software events");
	else if (!r->recipe)
		snprintf(buf, len, "no TMA recipe for this CPU");
	else
		snprintf(buf, len, "off (-e without --tma)");
}

static void tma_of(const struct report *r, const struct thread_stats *s, struct vm_tma *out)
{
	struct tma_result res;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < VM_TMA_L1; i++)
		out->l1[i] = NAN;
	if (!s->oncpu_ns || report_tma(r, s, &res))
		return;
	vm_tma_from_result(&res, out);
}

static void build_header(struct view *v, const struct report *r, unsigned long long period_ns)
{
	struct vm_header *h = &v->hdr;
	const struct self_stats *st = &r->self;
	unsigned long long bpf_ns = st->bpf_run_ns + r->uprobe_run_ns, bpf_cnt = st->bpf_run_cnt + r->uprobe_run_cnt;
	unsigned long long own = self_cpu_ns(), en = 0, run = 0;

	if (v->whole_run && r->run_cpu_ns)
		own = r->setup_cpu_ns + r->run_cpu_ns;	/* the run's own CPU, to its stop */

	snprintf(h->target, sizeof(h->target), "%s", r->target);
	h->elapsed_s = r->duration_ns / 1e9;
	h->period_s = period_ns / 1e9;
	h->cpu = r->host->cpu;
	h->recipe = r->recipe;
	h->pmu = r->host->pmu;
	h->tma_level = report_has_tma(r) ? r->tma_level : 0;
	tma_why(r, h->tma_why, sizeof(h->tma_why));
	tma_of(r, &v->total, &h->tma);
	for (int e = 0; e < r->evs->n; e++) {
		en += v->total.c[e].enabled;
		run += v->total.c[e].running < v->total.c[e].enabled ? v->total.c[e].running : v->total.c[e].enabled;
	}
	h->mux_pct = en ? 100.0 * (double)(en - run) / (double)en : 0.0;
	h->bpf_stats = st->run_stats;
	h->bpf_cpu_pct = vm_pct(sub0(bpf_ns, v->prev_bpf_ns), period_ns);
	h->bpf_hits_per_s = period_ns ? sub0(bpf_cnt, v->prev_bpf_cnt) * 1e9 / period_ns : 0.0;
	h->bpf_ns_per_switch = st->switch_run_cnt > v->prev_switch_cnt ?
		(double)sub0(st->switch_run_ns, v->prev_switch_ns) / (double)(st->switch_run_cnt - v->prev_switch_cnt) : 0.0;
	h->self_cpu_pct = vm_pct(sub0(own, v->prev_self_ns), period_ns);
	h->setup_cpu_ms = v->whole_run ? r->setup_cpu_ns / 1e6 : 0.0;
	h->map_full = st->stat[STAT_THREADS_FULL] + st->stat[STAT_PIDS_FULL] + st->stat[STAT_STACKS_FULL] +
		      st->stat[STAT_FUNCS_FULL];
	h->lost = st->stat[STAT_EXIT_DROPS];
	h->read_errors = st->stat[STAT_READ_ERRORS];
	h->threads_live = r->tt->n_live;
	h->threads_seen = r->tt->n_live + r->tt->n_exited + r->tt->threads_folded;
	h->nfuncs = r->uset ? r->uset->nr_funcs : 0;
	h->nlibs = r->uset ? r->uset->nr_libs : 0;
	h->uprobe_ns_per_hit = r->uprobe_run_cnt ? (double)r->uprobe_run_ns / r->uprobe_run_cnt : 0.0;
	h->sample_event = r->samples_live && !v->whole_run ? r->samples_live->event : NULL;
	h->sample_hz = r->samples_live ? r->samples_live->hz : 0;
	h->samples = v->sd.samples;
	if (!v->whole_run) {
		v->prev_bpf_ns = bpf_ns;
		v->prev_bpf_cnt = bpf_cnt;
		v->prev_switch_ns = st->switch_run_ns;
		v->prev_switch_cnt = st->switch_run_cnt;
		v->prev_self_ns = own;
	}
}

/* ---------- update ---------- */

static void period_from(struct view *v, const struct report *r, struct thread_stats *cur, size_t n)
{
	int nev = r->evs->n;

	free_period(v);
	v->r = r;
	v->td = calloc(n ? n : 1, sizeof(*v->td));
	memset(&v->total, 0, sizeof(v->total));
	memset(&v->run_total, 0, sizeof(v->run_total));
	for (size_t i = 0; v->td && i < n; i++) {
		const struct thread_stats *p = v->prev && !v->whole_run ? thread_find(v->prev, v->nprev, &cur[i]) : NULL;

		thread_stats_add(&v->run_total, &cur[i], nev);
		if (p && p->exited)
			continue;	/* shown in the period it exited in */
		if (thread_is_folded(&cur[i]) && (!v->whole_run || !cur[i].pid))
			continue;	/* its threads were shown when they exited; the run's processes have it */
		thread_stats_sub(&v->td[v->ntd], &cur[i], p, nev);
		thread_stats_add(&v->total, &v->td[v->ntd], nev);
		v->ntd++;
	}
	build_procs(v, nev);
}

void view_update(struct view *v, const struct report *r)
{
	struct thread_stats *cur;
	struct func_sum *fcur, *fkeep;
	size_t n = snapshot(r, true, &cur), nf = func_sums(r->frows, r->nfrows, r->evs->n, true, &fcur);
	unsigned long long period = sub0(r->duration_ns, v->prev_ns);

	/* build_funcs turns fcur into deltas; the next period subtracts these sums */
	fkeep = malloc((nf ? nf : 1) * sizeof(*fkeep));
	if (fkeep)
		memcpy(fkeep, fcur, nf * sizeof(*fkeep));
	v->whole_run = false;
	period_from(v, r, cur, n);
	build_funcs(v, r, fcur, nf);
	build_samples(v, r);
	build_header(v, r, period);
	free(v->prev);
	v->prev = cur;
	v->nprev = n;
	free(v->fprev);
	v->fprev = fkeep;
	v->nfprev = fkeep ? nf : 0;
	v->prev_ns = r->duration_ns;
	v->updated = true;
	view_build(v);
}

void view_start(struct view *v, const struct report *r)
{
	struct vm_header *h = &v->hdr;

	v->r = r;
	snprintf(h->target, sizeof(h->target), "%s", r->target);
	h->cpu = r->host->cpu;
	h->recipe = r->recipe;
	h->pmu = r->host->pmu;
	h->tma_level = report_has_tma(r) ? r->tma_level : 0;
	tma_why(r, h->tma_why, sizeof(h->tma_why));
	v->prev_self_ns = self_cpu_ns();	/* the first period leaves out the setup */
	view_build(v);
}

void view_whole_run(struct view *v, const struct report *r)
{
	struct thread_stats *cur;
	struct func_sum *fcur;
	size_t n = snapshot(r, false, &cur), nf = func_sums(r->frows, r->nfrows, r->evs->n, true, &fcur);

	v->whole_run = true;
	v->prev_bpf_ns = v->prev_bpf_cnt = v->prev_switch_ns = v->prev_switch_cnt = 0;
	v->prev_self_ns = r->setup_cpu_ns;	/* a rate over the run: the setup is shown apart */
	period_from(v, r, cur, n);
	build_funcs(v, r, fcur, nf);
	build_header(v, r, r->duration_ns);
	free(cur);
	v->updated = true;
	view_build(v);
}

/* ---------- columns ---------- */

static int col_of(const struct vm_table *t, int key)
{
	for (int c = 0; c < t->ncols; c++)
		if (t->col[c].key == key)
			return c;
	return -1;
}

static int add_col(struct vm_table *t, int key, const char *name, enum vm_fmt fmt, int width, int cwidth, int prio,
		   int arg)
{
	struct vm_col *c;

	if (t->ncols >= VM_MAX_COLS)
		return -1;
	c = &t->col[t->ncols];
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->fmt = fmt;
	c->width = width;
	c->cwidth = cwidth;
	c->prio = prio;
	c->arg = arg;
	c->left = fmt == VM_F_STR || fmt == VM_F_NODE || fmt == VM_F_BAR;
	c->stretch = false;
	c->key = key;
	return t->ncols++;
}

static void counter_cols(struct vm_table *t, const struct report *r, int key)
{
	for (int e = 0; e < r->evs->n; e++) {
		int w = (int)strlen(r->evs->ev[e].name);

		add_col(t, key, r->evs->ev[e].name, VM_F_COUNTER, 14, w < 7 ? 7 : w > 12 ? 12 : w, e ? 4 : 3, e);
	}
}

static void tma_cols(struct vm_table *t, const struct report *r)
{
	if (!report_has_tma(r))
		return;
	add_col(t, K_TMA_BAR, "TMA_L1", VM_F_BAR, 20, 20, 2, 0);
	add_col(t, K_TMA_L2, "TMA_L2", VM_F_NODE, 20, 18, 3, 0);
}

static void sums_cols(struct vm_table *t, const struct report *r)
{
	add_col(t, K_ONCPU, "ONCPU%", VM_F_PCT, 7, 6, 1, 0);
	add_col(t, K_BLOCK, "BLOCK%", VM_F_PCT, 7, 6, 2, 0);
	add_col(t, K_RUNQ, "RUNQ%", VM_F_PCT, 7, 6, 2, 0);
	add_col(t, K_VCSW, "VCSW", VM_F_INT, 7, 6, 5, 0);
	add_col(t, K_IVCSW, "IVCSW", VM_F_INT, 7, 6, 5, 0);
	add_col(t, K_MIGR, "MIGR", VM_F_INT, 5, 5, 6, 0);
	counter_cols(t, r, K_CTR);
	tma_cols(t, r);
}

static void build_cols(struct view *v)
{
	const struct report *r = v->r;
	bool sampled = r->samples_live && !v->whole_run;
	struct vm_table *t;

	t = &v->tab[VM_THREADS];
	t->kind = VM_THREADS;
	t->title = "threads";
	t->ncols = 0;
	add_col(t, K_PID, "PID", VM_F_ID, 7, 7, 2, 0);
	add_col(t, K_TID, "TID", VM_F_ID, 7, 7, 1, 0);
	add_col(t, K_COMM, "COMM", VM_F_STR, 16, 15, 1, 0);
	sums_cols(t, r);

	t = &v->tab[VM_PROCS];
	t->kind = VM_PROCS;
	t->title = "processes";
	t->ncols = 0;
	add_col(t, K_PID, "PID", VM_F_ID, 7, 7, 1, 0);
	add_col(t, K_NTHREADS, "THREADS", VM_F_INT, 7, 7, 3, 0);
	add_col(t, K_COMM, "COMM", VM_F_STR, 16, 15, 1, 0);
	sums_cols(t, r);

	t = &v->tab[VM_FUNCS];
	t->kind = VM_FUNCS;
	t->title = "functions";
	t->ncols = 0;
	add_col(t, K_PID, "PID", VM_F_ID, 7, 7, 2, 0);
	add_col(t, K_SRC, "S", VM_F_CHAR, 1, 1, 2, 0);
	t->col[add_col(t, K_FUNC, "FUNCTION", VM_F_STR, 28, 24, 1, 0)].stretch = true;
	add_col(t, K_CALLS, "CALLS", VM_F_INT, 9, 7, 3, 0);
	add_col(t, K_CALLS_S, "CALLS/s", VM_F_RATE, 9, 7, 1, 0);
	if (sampled)	/* what sampling is for: kept on narrow terminals */
		add_col(t, K_SAMPLES, "SAMPLES", VM_F_INT, 8, 7, 1, 0);
	if (sampled)
		add_col(t, K_SAMPLES_S, "SAMPLES/s", VM_F_RATE, 9, 9, 3, 0);
	add_col(t, K_WALL, "WALL_MS", VM_F_MS, 10, 9, 4, 0);
	add_col(t, K_FONCPU, "ONCPU_MS", VM_F_MS, 10, 9, 1, 0);
	if (sampled)
		add_col(t, K_SHARE, "SHARE%", VM_F_PCT, 6, 6, 1, 0);
	add_col(t, K_SELF, "SELF_MS", VM_F_MS, 10, 9, 2, 0);
	add_col(t, K_SELF_PCT, "SELF%", VM_F_PCT, 6, 6, 3, 0);
	add_col(t, K_FBLOCK, "BLOCK_MS", VM_F_MS, 9, 9, 4, 0);
	add_col(t, K_FRUNQ, "RUNQ_MS", VM_F_MS, 9, 9, 5, 0);
	counter_cols(t, r, K_FCTR);
	tma_cols(t, r);

	t = &v->tab[VM_EVENTS];
	t->kind = VM_EVENTS;
	t->title = "events";
	t->ncols = 0;
	add_col(t, K_EVNAME, "EVENT", VM_F_STR, 28, 24, 1, 0);
	add_col(t, K_EVPMU, "PMU", VM_F_STR, 10, 8, 3, 1);
	add_col(t, K_EVCONFIG, "CONFIG", VM_F_HEX, 18, 12, 4, 0);
	add_col(t, K_EVGROUP, "GROUP", VM_F_ID, 5, 5, 4, 0);
	add_col(t, K_EVRUNNING, "RUNNING%", VM_F_PCT, 8, 8, 2, 0);
	add_col(t, K_EVVALUE, "VALUE", VM_F_COUNTER, 16, 10, 1, 0);
	add_col(t, K_EVTOTAL, "RUN_TOTAL", VM_F_INT, 18, 10, 2, 0);

	if (v->tab[VM_THREADS].sort_col < 0)
		v->tab[VM_THREADS].sort_col = 3;	/* ONCPU% */
	if (v->tab[VM_PROCS].sort_col < 0)
		v->tab[VM_PROCS].sort_col = 3;
	if (v->tab[VM_FUNCS].sort_col < 0)
		v->tab[VM_FUNCS].sort_col = col_of(&v->tab[VM_FUNCS], K_FONCPU);
}

/* ---------- rows ---------- */

static double sums_cell(int key, int arg, const struct thread_stats *s, double period_ns)
{
	switch (key) {
	case K_PID: return s->pid;
	case K_TID: return s->tid;
	case K_ONCPU: return vm_pct(s->oncpu_ns, period_ns);
	case K_BLOCK: return vm_pct(s->offcpu_blocked_ns, period_ns);
	case K_RUNQ: return vm_pct(s->offcpu_runqueue_ns, period_ns);
	case K_VCSW: return s->switches_voluntary;
	case K_IVCSW: return s->switches_involuntary;
	case K_MIGR: return s->migrations;
	case K_CTR: return counter_scaled(&s->c[arg]);
	}
	return NAN;	/* TMA columns: filled in by view_tma_rows() */
}

static double func_cell(int key, int arg, const struct func_sum *f, double period_ns)
{
	switch (key) {
	case K_PID: return f->pid;
	case K_CALLS: return f->s.calls;
	case K_CALLS_S: return period_ns > 0 ? f->s.calls * 1e9 / period_ns : 0.0;
	case K_WALL: return f->s.wall_ns / 1e6;
	case K_FONCPU: return f->s.oncpu_ns / 1e6;
	case K_SELF: return f->s.self_oncpu_ns / 1e6;
	case K_SELF_PCT: return f->s.oncpu_ns ? vm_pct(f->s.self_oncpu_ns, f->s.oncpu_ns) : NAN;
	case K_FBLOCK: return f->s.offcpu_blocked_ns / 1e6;
	case K_FRUNQ: return f->s.offcpu_runqueue_ns / 1e6;
	case K_FCTR: return counter_scaled(&f->s.c[arg]);
	case K_SRC: return 'u';
	}
	return NAN;	/* sampled-only columns; TMA columns: filled in by view_tma_rows() */
}

/* A sampled function: samples, their estimated time, share and counter
 * deltas; no calls, wall, self or off-CPU times (blank). */
static double sample_cell(const struct view *v, int key, int arg, const struct sample_func *f, double period_ns)
{
	switch (key) {
	case K_PID: return f->pid;
	case K_SAMPLES: return (double)f->count;
	case K_SAMPLES_S: return period_ns > 0 ? f->count * 1e9 / period_ns : 0.0;
	case K_FONCPU: return sample_func_ns(&v->sd, f) / 1e6;
	/* its share of the tracked threads' on-CPU time, estimated by its share of the samples */
	case K_SHARE: return vm_pct((double)f->count, (double)v->sd.samples);
	case K_FCTR: return counter_scaled(&f->c[arg]);
	case K_SRC: return 's';
	}
	return NAN;
}

static unsigned int mux_bits(const struct counter_val *c, int nev)
{
	unsigned int m = 0;

	for (int e = 0; e < nev; e++)
		if (c[e].running < c[e].enabled)
			m |= 1u << e;
	return m;
}

static bool is_number(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* Filter: a number matches pid or tid; text matches the name (case-insensitive). */
static bool keep(const struct view *v, unsigned int pid, long long tid, const char *name)
{
	const char *f = v->filter;

	if (!f[0])
		return true;
	if (is_number(f)) {
		unsigned long n = strtoul(f, NULL, 10);

		return n == pid || (tid >= 0 && (unsigned long long)tid == n);
	}
	return name && strcasestr(name, f);
}

static struct vm_row *new_row(struct vm_table *t)
{
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct vm_row *n = realloc(t->rows, cap * sizeof(*n));

		if (!n)
			return NULL;
		t->rows = n;
		t->cap = cap;
	}
	memset(&t->rows[t->nrows], 0, sizeof(t->rows[0]));
	return &t->rows[t->nrows++];
}

/* A new row of table t, counted in its total; NULL when the filter leaves it out. */
static struct vm_row *add_row(struct view *v, struct vm_table *t, unsigned int pid, long long tid, int id, char src,
			      size_t data, const char *name, const struct counter_val *c)
{
	struct vm_row *row;

	t->total++;
	if (!keep(v, pid, tid, name) || !(row = new_row(t)))
		return NULL;
	row->pid = pid;
	row->tid = tid;
	row->id = id;
	row->src = src;
	row->data = data;
	row->s[0] = name;
	row->mux = mux_bits(c, v->r->evs->n);
	return row;
}

static void sums_row(struct view *v, struct vm_table *t, const struct thread_stats *s, long long tid, size_t data,
		     unsigned int nthreads)
{
	double period = v->hdr.period_s * 1e9;
	struct vm_row *row = add_row(v, t, s->pid, tid, -1, 0, data, s->comm, s->c);

	for (int c = 0; row && c < t->ncols; c++)
		row->v[c] = t->col[c].key == K_NTHREADS ? nthreads :
			    sums_cell(t->col[c].key, t->col[c].arg, s, period);
}

static void func_row(struct view *v, struct vm_table *t, const struct func_sum *f, size_t data)
{
	const struct report *r = v->r;
	const char *sym = r->uset && f->fn < r->uset->nr_funcs ? r->uset->funcs[f->fn].symbol : "?";
	double period = v->hdr.period_s * 1e9;
	struct vm_row *row;

	if (!f->s.calls && !f->s.oncpu_ns && !f->s.wall_ns)
		return;	/* not called in this period */
	row = add_row(v, t, f->pid, f->tid, f->fn, 'u', data, sym, f->s.c);
	for (int c = 0; row && c < t->ncols; c++)
		row->v[c] = t->col[c].key == K_SHARE ? vm_pct(f->s.self_oncpu_ns, v->total.oncpu_ns) :
			    func_cell(t->col[c].key, t->col[c].arg, f, period);
}

static void sample_row(struct view *v, struct vm_table *t, const struct sample_func *f, size_t data)
{
	double period = v->hdr.period_s * 1e9;
	struct vm_row *row = add_row(v, t, f->pid, f->tid, sample_id(v, f), 's', data, f->symbol, f->c);

	for (int c = 0; row && c < t->ncols; c++)
		row->v[c] = sample_cell(v, t->col[c].key, t->col[c].arg, f, period);
}

static void event_row(struct view *v, struct vm_table *t, int e)
{
	const struct event_desc *d = &v->r->evs->ev[e];
	const struct counter_val *c = &v->total.c[e];
	struct vm_row *row;

	t->total++;
	if (v->filter[0] && !strcasestr(d->name, v->filter))
		return;
	if (!(row = new_row(t)))
		return;
	row->tid = -1;
	row->id = e;
	row->data = (size_t)e;
	row->s[0] = d->name;
	row->s[1] = d->pmu;
	row->mux = c->running < c->enabled;	/* the VALUE column's '*' (arg 0) */
	for (int k = 0; k < t->ncols; k++) {
		switch (t->col[k].key) {
		case K_EVCONFIG: row->v[k] = (double)d->attr.config; break;
		case K_EVGROUP: row->v[k] = d->group; break;
		case K_EVRUNNING: row->v[k] = 100.0 * counter_running_share(c); break;
		case K_EVVALUE: row->v[k] = counter_scaled(c); break;
		case K_EVTOTAL: row->v[k] = counter_scaled(&v->run_total.c[e]); break;
		default: row->v[k] = NAN;
		}
	}
}

void view_row_sums(const struct view *v, enum vm_kind k, const struct vm_row *row, struct thread_stats *out)
{
	const struct func_stats *fs;

	switch (k) {
	case VM_THREADS: *out = v->td[row->data]; return;
	case VM_PROCS: *out = v->pd[row->data].d; return;
	case VM_FUNCS:
		memset(out, 0, sizeof(*out));
		if (row->src == 's') {
			const struct sample_func *sf = &v->sd.funcs[row->data];

			memcpy(out->c, sf->c, sizeof(out->c));
			out->oncpu_ns = (unsigned long long)sample_func_ns(&v->sd, sf);
			return;
		}
		fs = &v->fd[row->data].s;
		memcpy(out->c, fs->c, sizeof(out->c));
		out->oncpu_ns = fs->oncpu_ns;
		return;
	default:
		memset(out, 0, sizeof(*out));
	}
}

static bool has_tma_cols(const struct vm_table *t)
{
	for (int c = 0; c < t->ncols; c++)
		if (t->col[c].fmt == VM_F_BAR || t->col[c].fmt == VM_F_NODE)
			return true;
	return false;
}

void view_tma_rows(struct view *v, enum vm_kind k, size_t first, size_t n)
{
	struct vm_table *t = &v->tab[k];
	static struct thread_stats s;

	if (!v->r || !report_has_tma(v->r) || !has_tma_cols(t))
		return;
	for (size_t i = first; i < t->nrows && i < first + n; i++) {
		struct vm_row *row = &t->rows[i];

		if (row->tma_done)
			continue;
		view_row_sums(v, k, row, &s);
		tma_of(v->r, &s, &row->tma);
		row->tma_done = true;
		for (int c = 0; c < t->ncols; c++) {
			if (t->col[c].fmt == VM_F_BAR)
				row->v[c] = row->tma.ok ? row->tma.l1[VM_BE] : NAN;
			else if (t->col[c].fmt == VM_F_NODE)
				row->v[c] = row->tma.ok && row->tma.l2[0] ? row->tma.l2_value : NAN;
		}
	}
}

static int cmp_rows(const void *a, const void *b, void *ctx)
{
	const struct vm_table *t = ctx;
	const struct vm_row *x = a, *y = b;
	int c = t->sort_col, r = 0;

	if (c >= 0 && c < t->ncols) {
		if (t->col[c].fmt == VM_F_STR) {
			r = strcmp(x->s[t->col[c].arg] ? x->s[t->col[c].arg] : "",
				   y->s[t->col[c].arg] ? y->s[t->col[c].arg] : "");
		} else if (t->col[c].fmt == VM_F_NODE && x->tma.l2[0] != y->tma.l2[0]) {
			r = x->tma.l2[0] ? -1 : 1;	/* n/a last */
		} else {
			double p = x->v[c], q = y->v[c];

			if (isnan(p) || isnan(q))
				return isnan(p) - isnan(q);	/* n/a last, whichever the direction */
			r = p > q ? -1 : p < q;	/* numbers: largest first */
		}
		if (t->reverse)
			r = -r;
		if (r)
			return r;
	}
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Sorting by a TMA column computes every row's TMA first (the costly case). */
static void sort_table(struct view *v, enum vm_kind k)
{
	struct vm_table *t = &v->tab[k];

	if (t->sort_col >= 0 && t->sort_col < t->ncols &&
	    (t->col[t->sort_col].fmt == VM_F_BAR || t->col[t->sort_col].fmt == VM_F_NODE))
		view_tma_rows(v, k, 0, t->nrows);
	qsort_r(t->rows, t->nrows, sizeof(*t->rows), cmp_rows, t);
}

void view_build(struct view *v)
{
	struct vm_table *t;

	if (!v->r)
		return;
	build_cols(v);
	for (int k = 0; k < VM_NKINDS; k++)
		v->tab[k].nrows = v->tab[k].total = 0;
	t = &v->tab[VM_THREADS];
	for (size_t i = 0; i < v->ntd; i++)
		if (!thread_is_folded(&v->td[i]))	/* (in its process' row) */
			sums_row(v, t, &v->td[i], v->td[i].tid, i, 1);
	t = &v->tab[VM_PROCS];
	for (size_t i = 0; i < v->npd; i++)
		sums_row(v, t, &v->pd[i].d, -1, i, v->pd[i].nthreads);
	t = &v->tab[VM_FUNCS];
	for (size_t i = 0; i < v->nfd; i++)
		func_row(v, t, &v->fd[i], i);
	for (size_t i = 0; i < v->sd.nprocs; i++)
		sample_row(v, t, &v->sd.funcs[i], i);
	t = &v->tab[VM_EVENTS];
	for (int e = 0; e < v->r->evs->n; e++)
		event_row(v, t, e);
	for (int k = 0; k < VM_NKINDS; k++)
		sort_table(v, (enum vm_kind)k);
}

void view_set_filter(struct view *v, const char *filter)
{
	snprintf(v->filter, sizeof(v->filter), "%s", filter ? filter : "");
	view_build(v);
}

void view_set_sort(struct view *v, enum vm_kind k, int col, bool reverse)
{
	struct vm_table *t = &v->tab[k];

	t->sort_col = col >= -1 && col < t->ncols ? col : t->sort_col;
	t->reverse = reverse;
	sort_table(v, k);
}

const struct vm_row *view_find_row(const struct vm_table *t, unsigned int pid, long long tid, int id)
{
	for (size_t i = 0; i < t->nrows; i++)
		if (t->rows[i].pid == pid && t->rows[i].tid == tid && t->rows[i].id == id)
			return &t->rows[i];
	return NULL;
}

/* ---------- cells ---------- */

int view_col_width(const struct vm_col *c, bool compact)
{
	int w = compact ? c->cwidth : c->width;
	int n = (int)strlen(c->name);

	return compact && n > w && c->fmt != VM_F_COUNTER ? n : w;
}

int view_stretch_width(const struct vm_table *t, int c, bool compact, int spare)
{
	int base = view_col_width(&t->col[c], compact), longest = base;

	if (!t->col[c].stretch || spare <= 0)
		return base;
	for (size_t i = 0; i < t->nrows; i++) {
		const char *s = t->rows[i].s[t->col[c].arg];
		int n = s ? cxx_name_columns(s) : 0;

		if (n > longest)
			longest = n;
	}
	return longest < base + spare ? longest : base + spare;
}

void view_fit_text(const struct vm_col *col, const char *text, int width, char *buf, size_t len)
{
	char fit[1024];
	int cols, pad;
	size_t n;

	if (col->stretch) {
		cols = cxx_name_shorten(text, width, fit, sizeof(fit));
	} else {
		snprintf(fit, sizeof(fit), "%.*s", width, text);
		cols = cxx_name_columns(fit);
	}
	pad = width > cols ? width - cols : 0;
	n = strlen(fit);
	if (n + pad + 1 > len)
		pad = len > n + 1 ? (int)(len - n - 1) : 0;
	snprintf(buf, len, "%*s%s%*s", col->left ? 0 : pad, "", fit, col->left ? pad : 0, "");
}

int view_fit_columns(const struct vm_table *t, int width, bool compact, bool *shown)
{
	int used = -1;

	for (int c = 0; c < t->ncols; c++) {
		shown[c] = true;
		used += view_col_width(&t->col[c], compact) + 1;
	}
	while (used > width) {
		int drop = -1;

		for (int c = t->ncols - 1; c >= 0; c--)
			if (shown[c] && t->col[c].prio > 1 && (drop < 0 || t->col[c].prio > t->col[drop].prio))
				drop = c;
		if (drop < 0)
			break;	/* only the essentials left: the back end cuts the line */
		shown[drop] = false;
		used -= view_col_width(&t->col[drop], compact) + 1;
	}
	return used;
}

/* Short numbers for the live view: 1234 -> "1234", 12345 -> "12.3K", 1.2e9 -> "1.20G". */
static void human(double x, char *buf, size_t len)
{
	static const char suf[] = "KMGTPE";
	int i = -1;

	if (fabs(x) < 10000) {
		snprintf(buf, len, "%.0f", x);
		return;
	}
	while (fabs(x) >= 1000 && i < 5) {
		x /= 1000;
		i++;
	}
	snprintf(buf, len, fabs(x) < 10 ? "%.2f%c" : fabs(x) < 100 ? "%.1f%c" : "%.0f%c", x, suf[i]);
}

void view_format_cell(const struct vm_table *t, const struct vm_row *row, int c, bool compact, char *buf,
		      size_t len)
{
	const struct vm_col *col = &t->col[c];
	double x = row->v[c];
	char num[32];

	if (!len)
		return;
	switch (col->fmt) {
	case VM_F_STR:
		snprintf(buf, len, "%s", row->s[col->arg] ? row->s[col->arg] : "");
		return;
	case VM_F_CHAR:
		snprintf(buf, len, "%c", row->src ? row->src : '-');
		return;
	case VM_F_BAR: {
		int w = compact ? col->cwidth : col->width;
		char bar[128];

		vm_tma_bar(&row->tma, w < (int)sizeof(bar) ? w : (int)sizeof(bar) - 1, bar);
		snprintf(buf, len, "%s", bar);
		return;
	}
	case VM_F_NODE:
		snprintf(buf, len, "%s", row->tma.ok && row->tma.l2[0] ? row->tma.l2 : "-");
		return;
	default:
		break;
	}
	if (isnan(x)) {
		snprintf(buf, len, "-");
		return;
	}
	switch (col->fmt) {
	case VM_F_ID:
		if (x < 0)
			snprintf(buf, len, "-");
		else
			snprintf(buf, len, "%.0f", x);
		break;
	case VM_F_PCT:
		snprintf(buf, len, "%.1f", x);
		break;
	case VM_F_MS:
		snprintf(buf, len, "%.2f", x);
		break;
	case VM_F_HEX:
		snprintf(buf, len, "0x%llx", (unsigned long long)x);
		break;
	case VM_F_COUNTER: {
		bool mux = row->mux & (1u << col->arg);

		if (compact)
			human(x, num, sizeof(num));
		else
			snprintf(num, sizeof(num), "%.0f", x);
		snprintf(buf, len, "%s%s", num, mux ? "*" : compact ? "" : " ");
		break;
	}
	default:	/* VM_F_INT, VM_F_RATE */
		if (compact)
			human(x, buf, len);
		else
			snprintf(buf, len, "%.0f", x);
	}
}

/* ---------- TMA ---------- */

static int l1_slot(const char *name)
{
	if (strstr(name, "frontend"))
		return VM_FE;
	if (strstr(name, "bad_spec"))
		return VM_BS;
	if (strstr(name, "backend"))
		return VM_BE;
	if (strstr(name, "retiring"))
		return VM_RE;
	return -1;
}

void vm_tma_from_result(const struct tma_result *res, struct vm_tma *out)
{
	int best = -1, l2 = -1;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < VM_TMA_L1; i++)
		out->l1[i] = NAN;
	for (int i = 0; i < res->n; i++) {
		const struct tma_node *nd = &res->node[i];
		int s;

		if (nd->parent >= 0 || isnan(nd->value) || (s = l1_slot(nd->name)) < 0)
			continue;
		out->l1[s] = nd->value;
		out->ok = true;
		if (best < 0 || nd->value > res->node[best].value)
			best = i;
	}
	for (int i = 0; best >= 0 && i < res->n; i++)
		if (res->node[i].parent == best && !isnan(res->node[i].value) &&
		    (l2 < 0 || res->node[i].value > res->node[l2].value))
			l2 = i;
	if (l2 >= 0) {
		snprintf(out->l2, sizeof(out->l2), "%s", res->node[l2].label);
		out->l2_value = res->node[l2].value;
	}
}

void vm_tma_bar(const struct vm_tma *t, int width, char *buf)
{
	static const char letter[VM_TMA_L1] = { 'F', 'S', 'B', 'R' };
	double v[VM_TMA_L1], sum = 0;
	int n[VM_TMA_L1], k = 0, left = width;

	if (width <= 0) {
		buf[0] = 0;
		return;
	}
	for (int i = 0; i < VM_TMA_L1; i++) {
		v[i] = t->ok && !isnan(t->l1[i]) && t->l1[i] > 0 ? t->l1[i] : 0;
		sum += v[i];
	}
	if (sum <= 0) {
		memset(buf, '-', width);
		buf[width] = 0;
		return;
	}
	/* largest remainders: the letters add up to width exactly */
	for (int i = 0; i < VM_TMA_L1; i++) {
		n[i] = (int)floor(v[i] / sum * width);
		left -= n[i];
	}
	while (left > 0) {
		int best = -1;
		double bestr = -1;

		for (int i = 0; i < VM_TMA_L1; i++) {
			double r = v[i] / sum * width - n[i];

			if (v[i] > 0 && r > bestr) {
				bestr = r;
				best = i;
			}
		}
		n[best]++;
		left--;
	}
	for (int i = 0; i < VM_TMA_L1; i++)
		for (int j = 0; j < n[i]; j++)
			buf[k++] = letter[i];
	buf[k] = 0;
}
