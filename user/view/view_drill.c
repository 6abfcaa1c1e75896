// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Drill-down of one row of the view model, as lines of text both back ends
 * show: times and switches (period and whole run), counters with percent
 * running, the TMA tree and bottleneck path, and the hottest functions (a
 * thread, a process: uprobed and sampled), the threads running a function,
 * an event's top threads.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/grow.h"
#include "lib/text_fit.h"
#include "output/tma_output.h"
#include "view/view_model.h"

static void add_line(struct vm_lines *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add_line(struct vm_lines *l, const char *fmt, ...)
{
	va_list ap;
	char *s;

	char **n = grow(l->line, &l->cap, l->n, sizeof(*n), 64);

	if (!n)
		return;
	l->line = n;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) >= 0)
		l->line[l->n++] = s;
	va_end(ap);
}

void vm_lines_free(struct vm_lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->line[i]);
	free(l->line);
	memset(l, 0, sizeof(*l));
}

/* Lines of text a FILE* writer produced (tma_result_print). */
static void add_text(struct vm_lines *l, const char *text)
{
	const char *p = text;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		int n = nl ? (int)(nl - p) : (int)strlen(p);

		add_line(l, "%.*s", n, p);
		p = nl ? nl + 1 : NULL;
	}
}

void vm_lines_wrap(struct vm_lines *l, int width)
{
	struct vm_lines out = {};

	for (size_t i = 0; i < l->n; i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *m;

		if (text_columns(l->line[i]) <= width || !(m = open_memstream(&buf, &len))) {
			add_line(&out, "%s", l->line[i]);	/* fits (or no memory: cut at the edge) */
			continue;
		}
		text_wrap(m, width, (int)strspn(l->line[i], " ") + 2, l->line[i]);
		fclose(m);
		if (buf && len && buf[len - 1] == '\n')
			buf[len - 1] = 0;
		add_text(&out, buf);
		free(buf);
	}
	vm_lines_free(l);
	*l = out;
}

static const char *period_name(const struct view *v)
{
	return v->whole_run ? "whole run" : "this interval";
}

static void time_line(struct vm_lines *l, const char *what, double ns, double period, const double *run_ns,
		      double run_period)
{
	char a[32], b[32];

	snprintf(a, sizeof(a), "%.3f s", ns / 1e9);
	snprintf(b, sizeof(b), "%.3f s", run_ns ? *run_ns / 1e9 : 0);
	if (run_ns)
		add_line(l, "  %-20s %14s %7.1f%%   %14s %7.1f%%", what, a, vm_pct(ns, period), b, vm_pct(*run_ns, run_period));
	else
		add_line(l, "  %-20s %14s %7.1f%%", what, a, vm_pct(ns, period));
}

static void count_line(struct vm_lines *l, const char *what, const char *a, const char *b)
{
	if (b)
		add_line(l, "  %-20s %14s %8s   %14s", what, a, "", b);
	else
		add_line(l, "  %-20s %14s", what, a);
}

static void drill_times(const struct view *v, const struct thread_stats *d, const struct thread_stats *run,
			struct vm_lines *l)
{
	double p = v->hdr.period_s * 1e9, w = v->hdr.elapsed_s * 1e9;
	double r_on = run ? run->oncpu_ns : 0, r_bl = run ? run->offcpu_blocked_ns : 0;
	double r_rq = run ? run->offcpu_runqueue_ns : 0;
	char a[48], b[48];

	add_line(l, "%-22s %14s %8s   %14s", "time", period_name(v), "", run ? "whole run" : "");
	time_line(l, "on-CPU", d->oncpu_ns, p, run ? &r_on : NULL, w);
	time_line(l, "off-CPU blocked", d->offcpu_blocked_ns, p, run ? &r_bl : NULL, w);
	time_line(l, "off-CPU runqueue", d->offcpu_runqueue_ns, p, run ? &r_rq : NULL, w);
	snprintf(a, sizeof(a), "%llu / %llu", (unsigned long long)d->switches_voluntary,
		 (unsigned long long)d->switches_involuntary);
	if (run)
		snprintf(b, sizeof(b), "%llu / %llu", (unsigned long long)run->switches_voluntary,
			 (unsigned long long)run->switches_involuntary);
	count_line(l, "switches vol/invol", a, run ? b : NULL);
	snprintf(a, sizeof(a), "%llu", (unsigned long long)d->migrations);
	if (run)
		snprintf(b, sizeof(b), "%llu", (unsigned long long)run->migrations);
	count_line(l, "migrations", a, run ? b : NULL);
}

static void drill_counters(const struct view *v, const struct counter_val *c, const struct counter_val *run,
			   const struct counter_val *self, struct vm_lines *l)
{
	const struct event_list *evs = v->r->evs;

	add_line(l, "counters (multiplex-scaled; RUNNING = share of enabled time counted)");
	add_line(l, "  %-40s %16s %8s %18s %8s", "EVENT", period_name(v), "RUNNING", run ? "whole run" : self ? "self" : "",
		 run ? "RUNNING" : "");
	for (int e = 0; e < evs->n; e++) {
		if (run)
			add_line(l, "  %-40.40s %16.0f %7.1f%% %18.0f %7.1f%%", evs->ev[e].name, counter_scaled(&c[e]),
				 100 * counter_running_share(&c[e]), counter_scaled(&run[e]),
				 100 * counter_running_share(&run[e]));
		else if (self)
			add_line(l, "  %-40.40s %16.0f %7.1f%% %18.0f", evs->ev[e].name, counter_scaled(&c[e]),
				 100 * counter_running_share(&c[e]), counter_scaled(&self[e]));
		else
			add_line(l, "  %-40.40s %16.0f %7.1f%%", evs->ev[e].name, counter_scaled(&c[e]),
				 100 * counter_running_share(&c[e]));
	}
}

static void drill_tma(const struct view *v, const struct thread_stats *s, struct vm_lines *l)
{
	const struct report *r = v->r;
	struct tma_result res;
	char path[512], *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!report_has_tma(r)) {
		add_line(l, "TMA: not available (%s)", v->hdr.tma_why);
		return;
	}
	add_line(l, "TMA (recipe %s, levels 1-%d, %s)%s", r->recipe ? r->recipe : "?", r->tma_level, period_name(v),
		 r->tma_level < 3 ? "; --tma=3 shows the tree to level 3" : "");
	if (!s->oncpu_ns || report_tma(r, s, &res)) {
		add_line(l, "  n/a: no counts in this period");
		return;
	}
	f = open_memstream(&text, &len);
	if (f) {
		tma_result_print(&res, f, 2);
		fclose(f);
		add_text(l, text);
		free(text);
	}
	if (tma_bottleneck_path(&res, path, sizeof(path)) > 0)
		add_line(l, "  bottleneck: %s", path);
}

/* One line of a drill-down's function list: uprobed (calls, times) or sampled (samples, estimated time). */
struct hot {
	char src;
	const char *name;
	long long tid;
	double calls, samples, oncpu_ns, self_ns, wall_ns;	/* NaN: n/a for this source */
};

static int cmp_hot(const void *a, const void *b)
{
	const struct hot *x = a, *y = b;

	if (x->oncpu_ns != y->oncpu_ns)
		return x->oncpu_ns > y->oncpu_ns ? -1 : 1;
	return x->src != y->src ? (x->src < y->src ? 1 : -1) : strcmp(x->name, y->name);
}

static void hot_cell(char *buf, size_t len, double x, double scale, const char *fmt)
{
	if (isnan(x))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, fmt, x / scale);
}

static const char *thread_comm(const struct view *v, long long tid)
{
	for (size_t k = 0; k < v->ntd; k++)
		if ((long long)v->td[k].tid == tid)
			return v->td[k].comm;
	return "?";
}

/* Hottest functions of a thread (tid >= 0) or process (tid < 0), uprobed and
 * sampled, or the threads running one function (fn: the row); by on-CPU time
 * (sampled: estimated from the samples). */
static void drill_funcs(const struct view *v, unsigned int pid, long long tid, const struct vm_row *fn,
			struct vm_lines *l)
{
	const struct sample_result *sd = &v->sd;
	const struct sample_func *sfn = fn && fn->src == 's' ? &sd->funcs[fn->data] : NULL;
	struct hot *sel = malloc((v->nftd + sd->nfuncs + 1) * sizeof(*sel));
	const struct report *r = v->r;
	size_t n = 0;

	if (!sel)
		return;
	for (size_t i = 0; (!fn || fn->src != 's') && i < v->nftd; i++) {
		const struct func_sum *f = &v->ftd[i];

		if (f->pid != pid || (tid >= 0 && f->tid != tid) || (fn && f->fn != fn->id))
			continue;
		if (f->s.calls || f->s.oncpu_ns)
			sel[n++] = (struct hot){ r->uset->funcs[f->fn].itt ? 'i' : 'u', r->uset->funcs[f->fn].symbol, f->tid, f->s.calls, NAN,
						 f->s.oncpu_ns, f->s.self_oncpu_ns, f->s.wall_ns };
	}
	/* sampled: per-process rows for a process, per-thread rows otherwise */
	for (size_t i = tid < 0 && !fn ? 0 : sd->nprocs; (!fn || sfn) && i < (tid < 0 && !fn ? sd->nprocs : sd->nfuncs);
	     i++) {
		const struct sample_func *f = &sd->funcs[i];

		if (f->pid != pid || (tid >= 0 && f->tid != tid) ||
		    (sfn && (f->symbol != sfn->symbol || f->module != sfn->module)))
			continue;
		sel[n++] = (struct hot){ 's', f->symbol, f->tid, NAN, (double)f->count, sample_func_ns(sd, f), NAN, NAN };
	}
	qsort(sel, n, sizeof(*sel), cmp_hot);
	if (fn)
		add_line(l, "threads running it (%s)", period_name(v));
	else
		add_line(l, "hottest functions (%s; S: u = uprobes, s = samples)", period_name(v));
	if (!n) {
		add_line(l, r->uset || v->hdr.sample_event ? "  none in this period" :
			 "  none: no --uprobe or --sample");
		free(sel);
		return;
	}
	add_line(l, "  %s %-32s %9s %9s %10s %10s %10s", fn ? "TID    " : "S", fn ? "COMM" : "FUNCTION", "CALLS",
		 "SAMPLES", "ONCPU_MS", "SELF_MS", "WALL_MS");
	for (size_t i = 0; i < n && i < 10; i++) {
		const struct hot *h = &sel[i];
		char who[16], c[5][32];

		if (fn)
			snprintf(who, sizeof(who), "%-7lld", h->tid);
		else
			snprintf(who, sizeof(who), "%c", h->src);
		hot_cell(c[0], sizeof(c[0]), h->calls, 1, "%.0f");
		hot_cell(c[1], sizeof(c[1]), h->samples, 1, "%.0f");
		hot_cell(c[2], sizeof(c[2]), h->oncpu_ns, 1e6, "%.2f");
		hot_cell(c[3], sizeof(c[3]), h->self_ns, 1e6, "%.2f");
		hot_cell(c[4], sizeof(c[4]), h->wall_ns, 1e6, "%.2f");
		add_line(l, "  %s %-32.32s %9s %9s %10s %10s %10s", who, fn ? thread_comm(v, h->tid) : h->name, c[0], c[1],
			 c[2], c[3], c[4]);
	}
	if (n > 10)
		add_line(l, "  ... %zu more", n - 10);
	free(sel);
}

static void drill_thread(const struct view *v, const struct vm_row *row, struct vm_lines *l)
{
	const struct thread_stats *d = &v->td[row->data];
	const struct thread_stats *run = v->whole_run ? NULL : thread_find(v->prev, v->nprev, d);

	add_line(l, "thread %u \"%s\" of process %u  (%s: %.1f s; run %.1f s)", d->tid, d->comm, d->pid, period_name(v),
		 v->hdr.period_s, v->hdr.elapsed_s);
	drill_times(v, d, run, l);
	drill_counters(v, d->c, run ? run->c : NULL, NULL, l);
	drill_tma(v, d, l);
	drill_funcs(v, d->pid, d->tid, NULL, l);
}

static int cmp_td_oncpu(const void *a, const void *b)
{
	const struct thread_stats *x = *(const struct thread_stats *const *)a, *y = *(const struct thread_stats *const *)b;

	if (x->oncpu_ns != y->oncpu_ns)
		return x->oncpu_ns > y->oncpu_ns ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void drill_proc(const struct view *v, const struct vm_row *row, struct vm_lines *l)
{
	const struct vm_proc *p = &v->pd[row->data];
	const struct thread_stats **thr = malloc((v->ntd ? v->ntd : 1) * sizeof(*thr));
	double period = v->hdr.period_s * 1e9;
	size_t n = 0;

	add_line(l, "process %u \"%s\", %u threads  (%s: %.1f s; run %.1f s)", p->d.pid, p->d.comm, p->nthreads,
		 period_name(v), v->hdr.period_s, v->hdr.elapsed_s);
	drill_times(v, &p->d, NULL, l);
	drill_counters(v, p->d.c, NULL, NULL, l);
	drill_tma(v, &p->d, l);
	for (size_t i = 0; thr && i < v->ntd; i++)
		if (v->td[i].pid == p->d.pid)
			thr[n++] = &v->td[i];
	if (thr)
		qsort(thr, n, sizeof(*thr), cmp_td_oncpu);
	add_line(l, "threads (%s)", period_name(v));
	add_line(l, "  %7s %-16s %7s %7s %7s", "TID", "COMM", "ONCPU%", "BLOCK%", "RUNQ%");
	for (size_t i = 0; i < n && i < 10; i++)
		add_line(l, "  %7u %-16.16s %7.1f %7.1f %7.1f", thr[i]->tid, thr[i]->comm, vm_pct(thr[i]->oncpu_ns, period),
			 vm_pct(thr[i]->offcpu_blocked_ns, period), vm_pct(thr[i]->offcpu_runqueue_ns, period));
	if (n > 10)
		add_line(l, "  ... %zu more", n - 10);
	free(thr);
	drill_funcs(v, p->d.pid, -1, NULL, l);
}

static void drill_func(const struct view *v, const struct vm_row *row, struct vm_lines *l)
{
	const struct func_sum *f = &v->fd[row->data];
	const struct report *r = v->r;
	const struct uprobe_func *uf = &r->uset->funcs[f->fn];
	static struct thread_stats t;
	double period = v->hdr.period_s * 1e9;

	add_line(l, "function %s in %s+0x%lx, pid %u  (source: %s; %s: %.1f s)", uf->symbol,
		 r->uset->libs[uf->lib].module, uf->offset, f->pid, row->src == 's' ? "samples" : "uprobes",
		 period_name(v), v->hdr.period_s);
	add_line(l, "  calls %llu (%.0f/s), returns %llu, unmatched %llu%s", (unsigned long long)f->s.calls,
		 period > 0 ? f->s.calls * 1e9 / period : 0.0, (unsigned long long)f->s.returns,
		 (unsigned long long)f->s.unmatched, uf->detached ? ", detached by --max-rate" : "");
	add_line(l, "  wall %.3f ms; on-CPU inclusive %.3f ms, self %.3f ms (%.1f%% self); off-CPU blocked %.3f ms, "
		 "runqueue %.3f ms", f->s.wall_ns / 1e6, f->s.oncpu_ns / 1e6, f->s.self_oncpu_ns / 1e6,
		 vm_pct(f->s.self_oncpu_ns, f->s.oncpu_ns), f->s.offcpu_blocked_ns / 1e6, f->s.offcpu_runqueue_ns / 1e6);
	drill_counters(v, f->s.c, NULL, f->s.self, l);
	view_row_sums(v, VM_FUNCS, row, &t);
	drill_tma(v, &t, l);
	drill_funcs(v, f->pid, -1, row, l);
}

/* A sampled function's direct callers in the stacks sampled so far in the run (the live snapshot's,
 * sample_caller rows: by pid, function, then count). */
static void drill_callers(const struct view *v, const struct sample_func *f, struct vm_lines *l)
{
	const struct sample_result *live = v->r->samples_live;
	unsigned long long total = 0;
	size_t first = 0, n = 0;

	for (size_t i = 0; live && i < live->ncallers; i++) {
		const struct sample_caller *c = &live->callers[i];

		if (c->pid != f->pid || c->module != f->module || c->symbol != f->symbol)
			continue;
		if (!n++)
			first = i;
		total += c->count;
	}
	if (!n) {
		add_line(l, "callers: none in the stacks sampled so far");
		return;
	}
	add_line(l, "callers (whole run so far: %llu samples in %s)", total, f->symbol);
	add_line(l, "  %9s %7s  %s", "SAMPLES", "SHARE", "CALLER");
	for (size_t i = first; i < first + n && i < first + 10; i++)
		add_line(l, "  %9llu %6.1f%%  %s", live->callers[i].count, vm_pct((double)live->callers[i].count,
			 (double)total), live->callers[i].caller);
	if (n > 10)
		add_line(l, "  ... %zu more", n - 10);
}

static void drill_sampled(const struct view *v, const struct vm_row *row, struct vm_lines *l)
{
	const struct sample_func *f = &v->sd.funcs[row->data];
	double period = v->hdr.period_s * 1e9, ns = sample_func_ns(&v->sd, f);
	static struct thread_stats t;

	add_line(l, "function %s in %s, pid %u  (source: samples, %s at %d Hz; %s: %.1f s)", f->symbol,
		 f->module ? f->module : "?", f->pid, v->sd.event ? v->sd.event : "?", v->sd.hz, period_name(v),
		 v->hdr.period_s);
	add_line(l, "  samples %llu (%.0f/s), %.1f%% of the tracked threads' samples", f->count,
		 period > 0 ? f->count * 1e9 / period : 0.0, vm_pct((double)f->count, (double)v->sd.samples));
	add_line(l, "  estimated on-CPU %.3f ms (%s); a sampled leaf: no calls, self or off-CPU times", ns / 1e6,
		 v->sd.cpu_clock ? "sum of the sample periods" : "samples / Hz");
	drill_counters(v, f->c, NULL, NULL, l);
	view_row_sums(v, VM_FUNCS, row, &t);
	drill_tma(v, &t, l);
	drill_callers(v, f, l);
	drill_funcs(v, f->pid, -1, row, l);
}

static int cmp_by_event(const void *a, const void *b, void *ctx)
{
	int e = *(const int *)ctx;
	const struct thread_stats *x = *(const struct thread_stats *const *)a, *y = *(const struct thread_stats *const *)b;
	double p = counter_scaled(&x->c[e]), q = counter_scaled(&y->c[e]);

	return p > q ? -1 : p < q;
}

static void drill_event(const struct view *v, const struct vm_row *row, struct vm_lines *l)
{
	int e = row->id;
	const struct event_desc *d = &v->r->evs->ev[e];
	const struct thread_stats **thr = malloc((v->ntd ? v->ntd : 1) * sizeof(*thr));
	size_t n = 0;

	add_line(l, "event %s", d->name);
	add_line(l, "  pmu %s, type %s (%u), config 0x%llx, config1 0x%llx, config2 0x%llx", d->pmu,
		 events_type_name(d->attr.type), d->attr.type, (unsigned long long)d->attr.config,
		 (unsigned long long)d->attr.config1, (unsigned long long)d->attr.config2);
	add_line(l, "  group %d%s%s%s", d->group, d->leader ? " (leader)" : "", d->need[0] ? "; needed by " : "", d->need);
	add_line(l, "  %s: %.0f, running %.1f%%; whole run: %.0f, running %.1f%%", period_name(v),
		 counter_scaled(&v->total.c[e]), 100 * counter_running_share(&v->total.c[e]),
		 counter_scaled(&v->run_total.c[e]), 100 * counter_running_share(&v->run_total.c[e]));
	for (size_t i = 0; thr && i < v->ntd; i++)
		thr[n++] = &v->td[i];
	if (thr)
		qsort_r(thr, n, sizeof(*thr), cmp_by_event, &e);
	add_line(l, "top threads (%s)", period_name(v));
	add_line(l, "  %7s %7s %-16s %16s %8s", "PID", "TID", "COMM", "VALUE", "RUNNING");
	for (size_t i = 0; i < n && i < 10; i++)
		add_line(l, "  %7u %7u %-16.16s %16.0f %7.1f%%", thr[i]->pid, thr[i]->tid, thr[i]->comm,
			 counter_scaled(&thr[i]->c[e]), 100 * counter_running_share(&thr[i]->c[e]));
	free(thr);
}

void view_drill(const struct view *v, enum vm_kind k, const struct vm_row *row, struct vm_lines *out)
{
	if (!v->r || !row)
		return;
	switch (k) {
	case VM_THREADS: drill_thread(v, row, out); break;
	case VM_PROCS: drill_proc(v, row, out); break;
	case VM_FUNCS:
		if (row->src == 's')
			drill_sampled(v, row, out);
		else
			drill_func(v, row, out);
		break;
	case VM_EVENTS: drill_event(v, row, out); break;
	default: break;
	}
}
