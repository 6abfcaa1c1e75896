// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The view model's periods: per-period sums (threads, processes, functions,
 * samples) and the header.  Tables: view_table.c; cells and TMA bars:
 * view_cells.c; drill-downs: view_drill.c.
 *
 *   report (the run's maps read) -> view_update: deltas since the previous
 *   update -> view_build: rows (filter, TMA per row) -> sort -> back ends.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "lib/clock.h"
#include "lib/cxx_name.h"
#include "model/thread_table.h"
#include "view/view_model.h"

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
		if (open_slices && r->mono_ns)
			thread_close_slice(&s[i], r->mono_ns);
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
	vm_tma_of(r, &v->total, &h->tma);
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
