// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The plain-text back end of the view model: fixed-width columns, one space
 * apart, numbers right-aligned, names left-aligned; the same content as the
 * live view (view_curses.c), in the output's width: columns dropped by their
 * priority (said under the table), names elided in the middle, lines wrapped.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/text_fit.h"
#include "lib/text_safe.h"
#include "view/report_text.h"

/* Any --itt span among the functions (their kind, 'i', then has a legend). */
static bool itt_rows(const struct report *r)
{
	for (int i = 0; r->uset && i < r->uset->nr_funcs; i++)
		if (r->uset->funcs[i].itt)
			return true;
	return false;
}

static void print_tma(const struct vm_header *h, int width, FILE *f)
{
	static const char *const name[VM_TMA_L1] = { "Frontend_Bound", "Bad_Speculation", "Backend_Bound", "Retiring" };
	char bar[41], line[512];
	int n;

	if (!h->tma_level) {
		text_wrapf(f, width, 2, "tma: off (%s)", h->tma_why);
		return;
	}
	if (!h->tma.ok) {
		fprintf(f, "tma: n/a (no counts in this period)\n");
		return;
	}
	vm_tma_bar(&h->tma, 40, bar);
	n = snprintf(line, sizeof(line), "tma: [%s]", bar);
	for (int i = 0; i < VM_TMA_L1; i++)
		if (!isnan(h->tma.l1[i]) && n < (int)sizeof(line))
			n += snprintf(line + n, sizeof(line) - n, " %s %.1f%%", name[i], h->tma.l1[i]);
	if (h->tma.l2[0] && n < (int)sizeof(line))
		snprintf(line + n, sizeof(line) - n, "  L2: %s %.1f%%", h->tma.l2, h->tma.l2_value);
	text_wrap(f, width, 2, line);
}

/* The overhead line is shown past these, or with -v: a drop of any kind, any multiplexing, or BPF and
 * tmabpf together at 1 % of one CPU or more (docs/overhead.md has the costs). */
#define OVERHEAD_SHOWN_CPU_PCT 1.0

static bool overhead_shown(const struct view *v)
{
	const struct vm_header *h = &v->hdr;

	return v->verbose || h->map_full || h->lost || h->read_errors || h->mux_pct > 0 ||
	       (h->bpf_stats ? h->bpf_cpu_pct : 0) + h->self_cpu_pct >= OVERHEAD_SHOWN_CPU_PCT;
}

void report_text_header(const struct view *v, FILE *f)
{
	const struct vm_header *h = &v->hdr;
	const struct event_list *evs = v->r->evs;
	int width = text_width(f, v->width), room;
	char target[sizeof(h->target)], fit[sizeof(h->target)], head[64], tail[64], line[1024];
	int n;

	/* line 1: the target elided in the middle to fit */
	snprintf(head, sizeof(head), "tmabpf %.1fs  target: ", h->elapsed_s);
	snprintf(tail, sizeof(tail), "  threads: %zu", h->threads_seen);
	room = width - (int)strlen(head) - (int)strlen(tail);
	text_elide_middle(text_safe(h->target, target, sizeof(target)), room > 12 ? room : 12, fit, sizeof(fit));
	text_wrapf(f, width, 2, "%s%s%s", head, fit, tail);
	n = snprintf(line, sizeof(line), "pmu: %s  recipe: %s  %s", h->pmu ? "yes" : "no (software events)",
		     h->recipe ? h->recipe : "none",
		     v->r->estimated ? "events (threads' counts estimated from event samples):" : "events:");
	for (int e = 0; e < evs->n && n < (int)sizeof(line); e++)
		n += snprintf(line + n, sizeof(line) - n, " %s", evs->ev[e].name);
	text_wrap(f, width, 2, line);
	if (overhead_shown(v)) {
		if (h->bpf_stats && v->r->estimated)
			n = snprintf(line, sizeof(line), "bpf: %.3f%% of one CPU, %.0f hits/s, nothing per switch",
				     h->bpf_cpu_pct, h->bpf_hits_per_s);
		else if (h->bpf_stats)
			n = snprintf(line, sizeof(line), "bpf: %.3f%% of one CPU, %.0f hits/s, %.0f ns/switch",
				     h->bpf_cpu_pct, h->bpf_hits_per_s, h->bpf_ns_per_switch);
		else
			n = snprintf(line, sizeof(line), "bpf: n/a (kernel BPF stats off)");
		n += snprintf(line + n, sizeof(line) - n, "  mux: %.1f%%  drops: map-full %llu, lost %llu, "
			      "read-errors %llu  tmabpf: %.2f%% of one CPU", h->mux_pct, h->map_full, h->lost,
			      h->read_errors, h->self_cpu_pct);
		if (h->setup_cpu_ms > 0 && n < (int)sizeof(line))
			snprintf(line + n, sizeof(line) - n, " (setup %.0f ms CPU)", h->setup_cpu_ms);
		text_wrap(f, width, 2, line);
	}
	print_tma(h, width, f);
}

static void print_cell(const struct vm_col *c, int width, const char *text, FILE *f)
{
	char fit[1024];

	view_fit_text(c, text, width, fit, sizeof(fit));
	fputs(fit, f);
}

/* "(3 columns hidden: VCSW IVCSW MIGR; widen or --width)" under a table that dropped some. */
static void print_hidden(const struct view *v, const struct vm_table *t, const bool *shown, int width, FILE *f)
{
	char names[2048];
	int n = 0, hidden = 0;

	names[0] = 0;
	for (int c = 0; c < t->ncols; c++)
		if (!shown[c] && n < (int)sizeof(names)) {	/* counters by their whole names */
			n += snprintf(names + n, sizeof(names) - n, "%s%s", hidden ? " " : "",
				      t->col[c].fmt == VM_F_COUNTER ? v->r->evs->ev[t->col[c].arg].name : t->col[c].name);
			hidden++;
		}
	if (hidden)
		text_wrapf(f, width, 3, "  (%d column%s hidden: %s; widen or --width)", hidden, hidden > 1 ? "s" : "",
			   names);
}

void report_text_table(struct view *v, enum vm_kind k, FILE *f, size_t max_rows)
{
	const struct vm_table *t = &v->tab[k];
	int width[VM_MAX_COLS], cols = text_width(f, v->width), used, n;
	bool shown[VM_MAX_COLS];
	char buf[1024];

	view_tma_rows(v, k, 0, max_rows);
	used = view_fit_columns(t, cols, false, shown);
	for (int c = 0; c < t->ncols; c++)	/* the name columns take what the width has left */
		width[c] = view_stretch_width(t, c, false, cols > used ? cols - used : 0);
	for (int c = 0, first = 1; c < t->ncols; c++) {
		if (!shown[c])
			continue;
		if (!first)
			fputc(' ', f);
		first = 0;
		n = text_elide_middle(t->col[c].fmt == VM_F_COUNTER ? v->r->evs->ev[t->col[c].arg].name :
				      t->col[c].name, width[c], buf, sizeof(buf));	/* a counter's: "CPU_CL…THREAD" */
		fprintf(f, "%*s%s%*s", t->col[c].left ? 0 : width[c] - n, "", buf, t->col[c].left ? width[c] - n : 0, "");
	}
	fputc('\n', f);
	for (size_t i = 0; i < t->nrows && i < max_rows; i++) {
		for (int c = 0, first = 1; c < t->ncols; c++) {
			if (!shown[c])
				continue;
			if (!first)
				fputc(' ', f);
			first = 0;
			view_format_cell(t, &t->rows[i], c, false, buf, sizeof(buf));
			print_cell(&t->col[c], width[c], buf, f);
		}
		fputc('\n', f);
	}
	if (t->nrows > max_rows)
		fprintf(f, "  ... %zu more %s\n", t->nrows - max_rows, t->title);
	print_hidden(v, t, shown, cols, f);
}

static void print_funcs(struct view *v, FILE *f)
{
	const struct vm_header *h = &v->hdr;
	char line[1024];
	int n;

	if (!v->r->uset && !h->sample_event && !v->tab[VM_FUNCS].total)
		return;
	n = snprintf(line, sizeof(line), "functions (");
	if (v->r->uset)
		n += snprintf(line + n, sizeof(line) - n, "uprobes: %d in %d files, %.0f ns BPF per hit; ", h->nfuncs,
			      h->nlibs, h->uprobe_ns_per_hit);
	if (h->sample_event)
		n += snprintf(line + n, sizeof(line) - n, "samples: %llu, %s at %d Hz; ", h->samples, h->sample_event,
			      h->sample_hz);
	snprintf(line + n, sizeof(line) - n, "S: u = uprobes, %ss = samples):", itt_rows(v->r) ? "i = ITT spans, " : "");
	text_wrap(f, text_width(f, v->width), 2, line);
	report_text_table(v, VM_FUNCS, f, (size_t)v->top);
}

void report_text_interval(struct view *v, FILE *f)
{
	char l1[512], l2[512];
	int width = text_width(f, v->width);

	report_text_header(v, f);
	if (report_iterations_live(v->r, VIEW_TOKENS, l1, l2, sizeof(l1))) {
		text_wrap(f, width, 2, l1);
		text_wrap(f, width, 4, l2);
		if (report_roofline_live(v->r, VIEW_TOKENS, l1, sizeof(l1)))
			text_wrap(f, width, 4, l1);
	}
	report_text_table(v, VM_THREADS, f, (size_t)v->top);
	print_funcs(v, f);
	fputc('\n', f);
	fflush(f);
}

static void print_paths(const struct view *v, int width, FILE *f)
{
	const struct report *r = v->r;
	const struct vm_table *tp = &v->tab[VM_PROCS], *tt = &v->tab[VM_THREADS];
	char path[512], comm[64];

	if (!report_has_tma(r))
		return;
	text_wrapf(f, width, 2, "TMA bottleneck path (recipe %s; full tree per thread in --json):", r->recipe);
	for (size_t i = 0; i < tp->nrows && (int)i < v->top; i++)
		if (report_tma_path(r, &v->pd[tp->rows[i].data].d, path, sizeof(path)) == 0)
			text_wrapf(f, width, 29, "  pid %7u %-16.16s %s", tp->rows[i].pid,
				   text_safe(tp->rows[i].s[0], comm, sizeof(comm)), path);
	for (size_t i = 0; i < tt->nrows && (int)i < v->top; i++) {
		const struct thread_stats *s = &v->td[tt->rows[i].data];

		if (s->oncpu_ns && report_tma_path(r, s, path, sizeof(path)) == 0)
			text_wrapf(f, width, 29, "  tid %7u %-16.16s %s", s->tid, text_safe(s->comm, comm, sizeof(comm)),
				   path);
	}
}

/* Any process of several threads: else the processes table repeats the threads'. */
static bool several_threads(const struct view *v)
{
	for (size_t i = 0; i < v->npd; i++)
		if (v->pd[i].nthreads > 1)
			return true;
	return false;
}

/* Any counter of a shown row multiplexed (scaled, marked *). */
static bool multiplexed(const struct view *v)
{
	static const enum vm_kind k[] = { VM_THREADS, VM_PROCS, VM_FUNCS };

	if (v->hdr.mux_pct > 0)
		return true;
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		for (size_t j = 0; j < v->tab[k[i]].nrows; j++)
			if (v->tab[k[i]].rows[j].mux)
				return true;
	return false;
}

void report_text_final(const struct report *r, FILE *f, int top, int width, bool verbose)
{
	struct view v;

	view_init(&v, top);
	v.width = width = text_width(f, width);
	v.verbose = verbose;
	view_whole_run(&v, r);
	fprintf(f, "=== tmabpf final report (%s) ===\n", r->stop_reason ? r->stop_reason : "done");
	report_text_header(&v, f);
	report_text_table(&v, VM_THREADS, f, (size_t)top);
	if (several_threads(&v)) {
		fprintf(f, "processes:\n");
		report_text_table(&v, VM_PROCS, f, (size_t)top);
	}
	print_paths(&v, width, f);
	print_funcs(&v, f);
	report_samples_text(r, f, top, width);
	report_offcpu_text(r, f, top, width);
	report_memsamples_text(r, f, top, width);
	report_roofline_text(r, f, top, width);
	report_iterations_text(r, f, width);
	text_wrapf(f, width, 1, "(ONCPU%%/BLOCK%%/RUNQ%% of wall time;%s%s full data in --json)",
		   view_col_of(&v.tab[VM_THREADS], "CPUS") >= 0 ? " CPUS: CPUs utilized, task-clock / wall time;" : "",
		   multiplexed(&v) ? " counters marked * were multiplexed and scaled;" : "");
	fflush(f);
	view_free(&v);
}
