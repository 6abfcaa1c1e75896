// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>
#include "report_text.h"

struct row {
	struct thread_stats d;	/* sums over the period shown */
};

void text_view_init(struct text_view *v, int top)
{
	memset(v, 0, sizeof(*v));
	v->top = top;
}

void text_view_free(struct text_view *v)
{
	free(v->prev);
	free(v->fprev);
	memset(v, 0, sizeof(*v));
}

static int cmp_oncpu_desc(const void *a, const void *b)
{
	const struct thread_stats *x = a, *y = b;

	if (x->oncpu_ns != y->oncpu_ns)
		return x->oncpu_ns > y->oncpu_ns ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static double pct(unsigned long long part, unsigned long long whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void print_header_line(const struct report *r, FILE *f, unsigned long long period_ns, size_t nthreads)
{
	const struct self_stats *s = &r->self;
	unsigned long long drops = s->stat[STAT_THREADS_FULL] + s->stat[STAT_PIDS_FULL] + s->stat[STAT_EXIT_DROPS];

	fprintf(f, "tmabpf %.1fs  target: %s  threads: %zu  pmu: %s  recipe: %s\n",
		r->duration_ns / 1e9, r->target, nthreads, r->host->pmu ? "yes" : "no (software events)",
		r->recipe ? r->recipe : "none");
	fprintf(f, "events:");
	for (int e = 0; e < r->evs->n; e++)
		fprintf(f, " %s", r->evs->ev[e].name);
	fprintf(f, "  | bpf: %.3f%% of one CPU, %llu ns/switch  drops: %llu\n",
		r->duration_ns ? pct(s->bpf_run_ns, r->duration_ns) : 0.0,
		s->switch_run_cnt ? s->switch_run_ns / s->switch_run_cnt : 0, drops);
	(void)period_ns;
}

static void print_table_head(const struct report *r, FILE *f)
{
	fprintf(f, "%7s %7s %-16s %7s %7s %7s %7s %7s %5s", "PID", "TID", "COMM", "ONCPU%", "BLOCK%", "RUNQ%",
		"VCSW", "IVCSW", "MIGR");
	for (int e = 0; e < r->evs->n; e++)
		fprintf(f, " %14.14s", r->evs->ev[e].name);
	fputc('\n', f);
}

static void print_row(const struct report *r, FILE *f, const struct thread_stats *d, unsigned long long period_ns,
		      bool is_proc)
{
	char tid[16];

	if (is_proc)
		snprintf(tid, sizeof(tid), "-");
	else
		snprintf(tid, sizeof(tid), "%u", d->tid);
	fprintf(f, "%7u %7s %-16.16s %7.1f %7.1f %7.1f %7llu %7llu %5llu", d->pid, tid, d->comm,
		pct(d->oncpu_ns, period_ns), pct(d->offcpu_blocked_ns, period_ns), pct(d->offcpu_runqueue_ns, period_ns),
		(unsigned long long)d->switches_voluntary, (unsigned long long)d->switches_involuntary,
		(unsigned long long)d->migrations);
	for (int e = 0; e < r->evs->n; e++) {
		double v = counter_scaled(&d->c[e]);
		bool mux = d->c[e].running < d->c[e].enabled;

		fprintf(f, " %13.0f%c", v, mux ? '*' : ' ');
	}
	fputc('\n', f);
}

/* Snapshot of every thread, sorted for lookups. */
static size_t snapshot(const struct report *r, struct thread_stats **out)
{
	const struct thread_stats **all;
	size_t n = thread_table_all(r->tt, &all);
	struct thread_stats *v = calloc(n ? n : 1, sizeof(*v));

	for (size_t i = 0; v && i < n; i++)
		v[i] = *all[i];
	free(all);
	if (!v)
		n = 0;
	else
		qsort(v, n, sizeof(*v), thread_stats_cmp);
	*out = v;
	return n;
}

void report_text_interval(struct text_view *v, const struct report *r, FILE *f)
{
	struct thread_stats *cur, *rows;
	size_t n = snapshot(r, &cur), nrows = 0;
	unsigned long long period = r->duration_ns - v->prev_ns;

	rows = calloc(n ? n : 1, sizeof(*rows));
	for (size_t i = 0; rows && i < n; i++) {
		const struct thread_stats *p = thread_find(v->prev, v->nprev, &cur[i]);

		if (p && p->exited)
			continue;	/* reported in an earlier interval */
		thread_stats_sub(&rows[nrows++], &cur[i], p, r->evs->n);
	}
	qsort(rows, nrows, sizeof(*rows), cmp_oncpu_desc);
	print_header_line(r, f, period, n);
	print_table_head(r, f);
	for (size_t i = 0; i < nrows && (int)i < v->top; i++)
		print_row(r, f, &rows[i], period, false);
	if ((int)nrows > v->top)
		fprintf(f, "  ... %zu more threads\n", nrows - v->top);
	if (r->uset) {
		report_functions_text(r, f, v->top, v->fprev, v->nfprev, period);
		free(v->fprev);
		v->nfprev = report_func_sums(r, &v->fprev, false);
	}
	fputc('\n', f);
	fflush(f);
	free(rows);
	free(v->prev);
	v->prev = cur;
	v->nprev = n;
	v->prev_ns = r->duration_ns;
}

void report_text_final(const struct report *r, FILE *f, int top)
{
	struct thread_stats *all, *procs;
	size_t n = snapshot(r, &all), np = thread_table_processes(r->tt, &procs);

	fprintf(f, "=== tmabpf final report (%s) ===\n", r->stop_reason ? r->stop_reason : "done");
	print_header_line(r, f, r->duration_ns, n);
	qsort(all, n, sizeof(*all), cmp_oncpu_desc);
	print_table_head(r, f);
	for (size_t i = 0; i < n && (int)i < top; i++)
		print_row(r, f, &all[i], r->duration_ns, false);
	if ((int)n > top)
		fprintf(f, "  ... %zu more threads (see --json)\n", n - top);
	fprintf(f, "processes:\n");
	qsort(procs, np, sizeof(*procs), cmp_oncpu_desc);
	for (size_t i = 0; i < np && (int)i < top; i++)
		print_row(r, f, &procs[i], r->duration_ns, true);
	if (r->tma_path) {
		char path[512];

		fprintf(f, "TMA bottleneck path (recipe %s; full tree per thread in --json):\n", r->recipe);
		for (size_t i = 0; i < np && (int)i < top; i++)
			if (r->tma_path(r, &procs[i], path, sizeof(path)) == 0)
				fprintf(f, "  pid %7u %-16.16s %s\n", procs[i].pid, procs[i].comm, path);
		for (size_t i = 0; i < n && (int)i < top; i++)
			if (all[i].oncpu_ns && r->tma_path(r, &all[i], path, sizeof(path)) == 0)
				fprintf(f, "  tid %7u %-16.16s %s\n", all[i].tid, all[i].comm, path);
	}
	report_functions_text(r, f, top, NULL, 0, r->duration_ns);
	report_samples_text(r, f, top);
	report_offcpu_text(r, f, top);
	report_memsamples_text(r, f, top);
	fprintf(f, "(ONCPU%%/BLOCK%%/RUNQ%% of wall time; counters marked * were multiplexed and scaled)\n");
	fflush(f);
	free(all);
	free(procs);
}
