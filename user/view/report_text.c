// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The plain-text back end of the view model: fixed-width columns, one space
 * apart, numbers right-aligned, names left-aligned; the same content as the
 * live view (view_curses.c), every column, full numbers.
 */
#include <math.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
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

static void print_tma(const struct vm_header *h, FILE *f)
{
	static const char *const name[VM_TMA_L1] = { "Frontend_Bound", "Bad_Speculation", "Backend_Bound", "Retiring" };
	char bar[41];

	if (!h->tma_level) {
		fprintf(f, "tma: off (%s)\n", h->tma_why);
		return;
	}
	if (!h->tma.ok) {
		fprintf(f, "tma: n/a (no counts in this period)\n");
		return;
	}
	vm_tma_bar(&h->tma, 40, bar);
	fprintf(f, "tma: [%s]", bar);
	for (int i = 0; i < VM_TMA_L1; i++)
		if (!isnan(h->tma.l1[i]))
			fprintf(f, " %s %.1f%%", name[i], h->tma.l1[i]);
	if (h->tma.l2[0])
		fprintf(f, "  L2: %s %.1f%%", h->tma.l2, h->tma.l2_value);
	fputc('\n', f);
}

void report_text_header(const struct view *v, FILE *f)
{
	const struct vm_header *h = &v->hdr;
	const struct event_list *evs = v->r->evs;
	char target[sizeof(h->target)];

	fprintf(f, "tmabpf %.1fs  target: %s  threads: %zu  pmu: %s  recipe: %s\n", h->elapsed_s,
		text_safe(h->target, target, sizeof(target)),
		h->threads_seen, h->pmu ? "yes" : "no (software events)", h->recipe ? h->recipe : "none");
	fprintf(f, v->r->estimated ? "events (threads' counts estimated from event samples):" : "events:");
	for (int e = 0; e < evs->n; e++)
		fprintf(f, " %s", evs->ev[e].name);
	if (h->bpf_stats && v->r->estimated)
		fprintf(f, "  | bpf: %.3f%% of one CPU, %.0f hits/s, nothing per switch", h->bpf_cpu_pct,
			h->bpf_hits_per_s);
	else if (h->bpf_stats)
		fprintf(f, "  | bpf: %.3f%% of one CPU, %.0f hits/s, %.0f ns/switch", h->bpf_cpu_pct, h->bpf_hits_per_s,
			h->bpf_ns_per_switch);
	else
		fprintf(f, "  | bpf: n/a (kernel BPF stats off)");
	fprintf(f, "  mux: %.1f%%  drops: map-full %llu, lost %llu, read-errors %llu  tmabpf: %.2f%% of one CPU",
		h->mux_pct, h->map_full, h->lost, h->read_errors, h->self_cpu_pct);
	if (h->setup_cpu_ms > 0)
		fprintf(f, " (setup %.0f ms CPU)", h->setup_cpu_ms);
	fputc('\n', f);
	print_tma(h, f);
}

static void print_cell(const struct vm_col *c, int width, const char *text, FILE *f)
{
	char fit[1024];

	if (c->stretch) {
		view_fit_text(c, text, width, fit, sizeof(fit));
		fputs(fit, f);
	} else if (c->left) {
		fprintf(f, "%-*.*s", width, width, text);
	} else {
		fprintf(f, "%*.*s", width, width, text);
	}
}

/* The output's width in columns: its terminal's, else $COLUMNS, else 0 (unknown). */
static int output_columns(FILE *f)
{
	struct winsize ws;
	const char *env = getenv("COLUMNS");

	if (isatty(fileno(f)) && ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col)
		return ws.ws_col;
	return env ? atoi(env) : 0;
}

void report_text_table(struct view *v, enum vm_kind k, FILE *f, size_t max_rows)
{
	const struct vm_table *t = &v->tab[k];
	int width[VM_MAX_COLS], used = -1, cols = output_columns(f);
	char buf[1024];

	view_tma_rows(v, k, 0, max_rows);
	for (int c = 0; c < t->ncols; c++)
		used += t->col[c].width + 1;
	for (int c = 0; c < t->ncols; c++)	/* FUNCTION takes what the terminal has left */
		width[c] = view_stretch_width(t, c, false, cols > used ? cols - used : 0);
	for (int c = 0; c < t->ncols; c++) {
		if (c)
			fputc(' ', f);
		print_cell(&t->col[c], width[c], t->col[c].name, f);
	}
	fputc('\n', f);
	for (size_t i = 0; i < t->nrows && i < max_rows; i++) {
		for (int c = 0; c < t->ncols; c++) {
			if (c)
				fputc(' ', f);
			view_format_cell(t, &t->rows[i], c, false, buf, sizeof(buf));
			print_cell(&t->col[c], width[c], buf, f);
		}
		fputc('\n', f);
	}
	if (t->nrows > max_rows)
		fprintf(f, "  ... %zu more %s\n", t->nrows - max_rows, t->title);
}

static void print_funcs(struct view *v, FILE *f)
{
	const struct vm_header *h = &v->hdr;

	if (!v->r->uset && !h->sample_event && !v->tab[VM_FUNCS].total)
		return;
	fprintf(f, "functions (");
	if (v->r->uset)
		fprintf(f, "uprobes: %d in %d files, %.0f ns BPF per hit; ", h->nfuncs, h->nlibs, h->uprobe_ns_per_hit);
	if (h->sample_event)
		fprintf(f, "samples: %llu, %s at %d Hz; ", h->samples, h->sample_event, h->sample_hz);
	fprintf(f, "S: u = uprobes, %ss = samples):\n", itt_rows(v->r) ? "i = ITT spans, " : "");
	report_text_table(v, VM_FUNCS, f, (size_t)v->top);
}

void report_text_interval(struct view *v, FILE *f)
{
	char l1[512], l2[512];

	report_text_header(v, f);
	if (report_iterations_live(v->r, VIEW_TOKENS, l1, l2, sizeof(l1)))
		fprintf(f, "%s\n%s\n", l1, l2);
	report_text_table(v, VM_THREADS, f, (size_t)v->top);
	print_funcs(v, f);
	fputc('\n', f);
	fflush(f);
}

static void print_paths(const struct view *v, FILE *f)
{
	const struct report *r = v->r;
	const struct vm_table *tp = &v->tab[VM_PROCS], *tt = &v->tab[VM_THREADS];
	char path[512], comm[64];

	if (!report_has_tma(r))
		return;
	fprintf(f, "TMA bottleneck path (recipe %s; full tree per thread in --json):\n", r->recipe);
	for (size_t i = 0; i < tp->nrows && (int)i < v->top; i++)
		if (report_tma_path(r, &v->pd[tp->rows[i].data].d, path, sizeof(path)) == 0)
			fprintf(f, "  pid %7u %-16.16s %s\n", tp->rows[i].pid, text_safe(tp->rows[i].s[0], comm, sizeof(comm)),
				path);
	for (size_t i = 0; i < tt->nrows && (int)i < v->top; i++) {
		const struct thread_stats *s = &v->td[tt->rows[i].data];

		if (s->oncpu_ns && report_tma_path(r, s, path, sizeof(path)) == 0)
			fprintf(f, "  tid %7u %-16.16s %s\n", s->tid, text_safe(s->comm, comm, sizeof(comm)), path);
	}
}

void report_text_final(const struct report *r, FILE *f, int top)
{
	struct view v;

	view_init(&v, top);
	view_whole_run(&v, r);
	fprintf(f, "=== tmabpf final report (%s) ===\n", r->stop_reason ? r->stop_reason : "done");
	report_text_header(&v, f);
	report_text_table(&v, VM_THREADS, f, (size_t)top);
	fprintf(f, "processes:\n");
	report_text_table(&v, VM_PROCS, f, (size_t)top);
	print_paths(&v, f);
	print_funcs(&v, f);
	report_samples_text(r, f, top);
	report_offcpu_text(r, f, top);
	report_memsamples_text(r, f, top);
	report_roofline_text(r, f, top);
	report_iterations_text(r, f);
	fprintf(f, "(ONCPU%%/BLOCK%%/RUNQ%% of wall time; counters marked * were multiplexed and scaled; "
		"full data in --json)\n");
	fflush(f);
	view_free(&v);
}
