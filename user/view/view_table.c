// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The view model's tables: columns (with their priorities on narrow terminals),
 * rows of each period's sums, filter and sort.  See view_model.h. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/grow.h"
#include "model/counters.h"
#include "pmu/events.h"
#include "view/view_model.h"

/* What a column shows. */
enum vm_key {
	K_PID, K_TID, K_NTHREADS, K_COMM, K_ONCPU, K_BLOCK, K_RUNQ, K_STATE, K_CPUS, K_VCSW, K_IVCSW, K_MIGR, K_CTR,
	K_TMA_BAR, K_TMA_L2,
	K_SRC, K_FUNC, K_CALLS, K_CALLS_S, K_SAMPLES, K_SAMPLES_S, K_WALL, K_FONCPU, K_SHARE, K_SELF, K_SELF_PCT,
	K_FBLOCK, K_FRUNQ, K_FCTR,
	K_EVNAME, K_EVPMU, K_EVCONFIG, K_EVGROUP, K_EVRUNNING, K_EVVALUE, K_EVTOTAL,
};

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

/* ---------- columns ---------- */

static int col_of(const struct vm_table *t, int key)
{
	for (int c = 0; c < t->ncols; c++)
		if (t->col[c].key == key)
			return c;
	return -1;
}

int view_col_of(const struct vm_table *t, const char *name)
{
	for (int c = 0; c < t->ncols; c++)
		if (!strcmp(t->col[c].name, name))
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
	c->left = fmt == VM_F_STR || fmt == VM_F_NODE || fmt == VM_F_BAR || fmt == VM_F_STATE;
	c->stretch = false;
	c->ns = false;
	c->key = key;
	return t->ncols++;
}

static void counter_cols(struct vm_table *t, const struct report *r, int key)
{
	for (int e = 0; e < r->evs->n; e++) {
		int w = (int)strlen(r->evs->ev[e].name);

		int k = add_col(t, key, r->evs->ev[e].name, VM_F_COUNTER, w < 9 ? 9 : w > 14 ? 14 : w, w < 7 ? 7 : w > 12 ? 12 : w,
				e ? 4 : 3, e);

		if (k >= 0)	/* "684.9 ms" as perf stat prints it */
			t->col[k].ns = events_count_ns(&r->evs->ev[e]);
	}
}

/* A fixed column: what it shows, its header, format, plain and compact widths, priority, argument.
 * SAMPLED: only while --sample shows this period's samples; STRETCH: the name column. */
struct col_spec {
	int key;
	const char *name;
	enum vm_fmt fmt;
	int width, cwidth, prio, arg;
	unsigned int flags;
};
#define SAMPLED 1u
#define STRETCH 2u
#define LIVE 4u		/* only in the live view's threads table (a process' shares add up past 100 %) */
#define TASK_CLOCK 8u	/* only when task-clock is counted (its arg: that event) */

static const struct col_spec thread_cols[] = {
	{ K_PID, "PID", VM_F_ID, 7, 7, 2, 0, 0 },
	{ K_TID, "TID", VM_F_ID, 7, 7, 1, 0, 0 },
	{ K_COMM, "COMM", VM_F_STR, 12, 15, 1, 0, STRETCH },
	{ 0 },
};
static const struct col_spec proc_cols[] = {
	{ K_PID, "PID", VM_F_ID, 7, 7, 1, 0, 0 },
	{ K_NTHREADS, "THREADS", VM_F_INT, 7, 7, 3, 0, 0 },
	{ K_COMM, "COMM", VM_F_STR, 12, 15, 1, 0, STRETCH },
	{ 0 },
};
/* what every thread and process row sums, then its counters and TMA */
static const struct col_spec sums_cols[] = {
	{ K_ONCPU, "ONCPU%", VM_F_PCT, 6, 6, 1, 0, 0 },
	{ K_BLOCK, "BLOCK%", VM_F_PCT, 6, 6, 2, 0, 0 },
	{ K_RUNQ, "RUNQ%", VM_F_PCT, 6, 6, 2, 0, 0 },
	{ K_STATE, "STATE", VM_F_STATE, 10, 10, 4, 0, LIVE },	/* right after ONCPU%, BLOCK%, RUNQ% */
	{ K_CPUS, "CPUS", VM_F_RATIO, 5, 5, 3, 0, TASK_CLOCK },	/* perf stat's "CPUs utilized" */
	{ K_VCSW, "VCSW", VM_F_INT, 6, 6, 5, 0, 0 },
	{ K_IVCSW, "IVCSW", VM_F_INT, 6, 6, 5, 0, 0 },
	{ K_MIGR, "MIGR", VM_F_INT, 5, 5, 6, 0, 0 },
	{ 0 },
};
static const struct col_spec func_cols[] = {
	{ K_PID, "PID", VM_F_ID, 7, 7, 2, 0, 0 },
	{ K_SRC, "S", VM_F_CHAR, 1, 1, 2, 0, 0 },
	{ K_FUNC, "FUNCTION", VM_F_STR, 20, 24, 1, 0, STRETCH },
	{ K_CALLS, "CALLS", VM_F_INT, 9, 7, 3, 0, 0 },
	{ K_CALLS_S, "CALLS/s", VM_F_RATE, 9, 7, 1, 0, 0 },
	/* what sampling is for: kept on narrow terminals */
	{ K_SAMPLES, "SAMPLES", VM_F_INT, 8, 7, 1, 0, SAMPLED },
	{ K_SAMPLES_S, "SAMPLES/s", VM_F_RATE, 9, 9, 3, 0, SAMPLED },
	{ K_WALL, "WALL_MS", VM_F_MS, 10, 9, 4, 0, 0 },
	{ K_FONCPU, "ONCPU_MS", VM_F_MS, 10, 9, 1, 0, 0 },
	{ K_SHARE, "SHARE%", VM_F_PCT, 6, 6, 1, 0, SAMPLED },
	{ K_SELF, "SELF_MS", VM_F_MS, 10, 9, 2, 0, 0 },
	{ K_SELF_PCT, "SELF%", VM_F_PCT, 6, 6, 3, 0, 0 },
	{ K_FBLOCK, "BLOCK_MS", VM_F_MS, 9, 9, 4, 0, 0 },
	{ K_FRUNQ, "RUNQ_MS", VM_F_MS, 9, 9, 5, 0, 0 },
	{ 0 },
};
static const struct col_spec event_cols[] = {
	{ K_EVNAME, "EVENT", VM_F_STR, 28, 24, 1, 0, 0 },
	{ K_EVPMU, "PMU", VM_F_STR, 10, 8, 3, 1, 0 },
	{ K_EVCONFIG, "CONFIG", VM_F_HEX, 18, 12, 4, 0, 0 },
	{ K_EVGROUP, "GROUP", VM_F_ID, 5, 5, 4, 0, 0 },
	{ K_EVRUNNING, "RUNNING%", VM_F_PCT, 8, 8, 2, 0, 0 },
	{ K_EVVALUE, "VALUE", VM_F_COUNTER, 16, 10, 1, 0, 0 },
	{ K_EVTOTAL, "RUN_TOTAL", VM_F_INT, 18, 10, 2, 0, 0 },
	{ 0 },
};

static void spec_cols(struct vm_table *t, const struct col_spec *c, const struct report *r, bool sampled, bool live)
{
	int tc = -1;	/* task-clock, whatever its name says */

	for (int e = 0; e < r->evs->n && tc < 0; e++)
		if (r->evs->ev[e].attr.type == PERF_TYPE_SOFTWARE && r->evs->ev[e].attr.config == PERF_COUNT_SW_TASK_CLOCK)
			tc = e;

	for (; c->name; c++) {
		int k;

		if (((c->flags & SAMPLED) && !sampled) || ((c->flags & LIVE) && (!live || t->kind != VM_THREADS)) ||
		    ((c->flags & TASK_CLOCK) && tc < 0))
			continue;
		k = add_col(t, c->key, c->name, c->fmt, c->width, c->cwidth, c->prio,
			    c->key == K_STATE ? col_of(t, K_ONCPU) : c->flags & TASK_CLOCK ? tc : c->arg);
		if (k >= 0 && (c->flags & STRETCH))
			t->col[k].stretch = true;
	}
}

/* Table k's columns: its own, then (threads, processes, functions) counters and TMA. */
static void table_cols(struct view *v, enum vm_kind k, const char *title, const struct col_spec *own,
		       const struct col_spec *sums, int ctr_key)
{
	const struct report *r = v->r;
	struct vm_table *t = &v->tab[k];

	t->kind = k;
	t->title = title;
	t->ncols = 0;
	spec_cols(t, own, r, r->samples_live && !v->whole_run, v->live);
	if (sums)
		spec_cols(t, sums, r, false, v->live);
	if (ctr_key < 0)
		return;
	counter_cols(t, r, ctr_key);
	if (report_has_tma(r)) {
		add_col(t, K_TMA_BAR, "TMA_L1", VM_F_BAR, 20, 20, 2, 0);
		add_col(t, K_TMA_L2, "TMA_L2", VM_F_NODE, 20, 18, 3, 0);
	}
}

static void build_cols(struct view *v)
{
	table_cols(v, VM_THREADS, "threads", thread_cols, sums_cols, K_CTR);
	table_cols(v, VM_PROCS, "processes", proc_cols, sums_cols, K_CTR);
	table_cols(v, VM_FUNCS, "functions", func_cols, NULL, K_FCTR);
	table_cols(v, VM_EVENTS, "events", event_cols, NULL, -1);
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
	case K_STATE: return vm_pct(s->oncpu_ns, period_ns);
	case K_CPUS: return period_ns > 0 ? counter_scaled(&s->c[arg]) / period_ns : NAN;
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
	struct vm_row *n = grow(t->rows, &t->cap, t->nrows, sizeof(*n), 64);

	if (!n)
		return NULL;
	t->rows = n;
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

	if (!f->s.calls && !f->s.oncpu_ns && !f->s.wall_ns &&
	    !(v->pinned && f->pid == v->pin_pid && f->tid == v->pin_tid && (int)f->fn == v->pin_id))
		return;	/* not called in this period (unless its details are open) */
	/* an ITT span (--itt) is a row like a probed function's, of its own kind */
	row = add_row(v, t, f->pid, f->tid, f->fn, r->uset && f->fn < r->uset->nr_funcs && r->uset->funcs[f->fn].itt ? 'i' : 'u',
		      data, sym, f->s.c);
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
		vm_tma_of(v->r, &s, &row->tma);
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
	if (t->nrows)	/* qsort_r(NULL, 0) is undefined: a table with no rows yet */
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
