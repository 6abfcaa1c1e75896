// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The sampled-functions section of the reports (--sample): JSON rows and the text table. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "lib/cxx_name.h"
#include "lib/text_fit.h"
#include "lib/text_safe.h"
#include "lib/units.h"
#include "model/counters.h"
#include "output/report_sections.h"

static double share_pct(const struct sample_result *s, unsigned long long count)
{
	return s->samples ? 100.0 * (double)count / (double)s->samples : 0.0;
}

/* Half-width of the 95 % binomial confidence interval of a share, in points. */
static double ci95_pct(const struct sample_result *s, unsigned long long count)
{
	double p, n = (double)s->samples;

	if (!s->samples)
		return 0.0;
	p = (double)count / n;
	return 100.0 * 1.96 * sqrt(p * (1.0 - p) / n);
}

static void tma_of(const struct report *r, struct json *j, const struct sample_func *f)
{
	struct thread_stats t = {};

	memcpy(t.c, f->c, sizeof(t.c));
	report_tma_json(r, &t, j);
}

/* --sample-events: the fewest samples any event of a row rests on (a TMA ratio's error is at
 * least that event's: 1/sqrt(n) relative). */
static unsigned long long min_samples(const struct report *r, const struct sample_func *f)
{
	unsigned long long m = ~0ULL;

	for (int e = 0; e < r->evs->n; e++)
		if (r->samples->ev[e].open && f->ev_samples[e] < m)
			m = f->ev_samples[e];
	return m == ~0ULL ? 0 : m;
}

static void event_samples_json(const struct report *r, struct json *j, const struct sample_func *f)
{
	if (!r->samples->events)
		return;
	json_obj_begin(j, "event_samples");
	for (int e = 0; e < r->evs->n; e++)
		json_u64(j, r->evs->ev[e].name, f->ev_samples[e]);
	json_obj_end(j);
	json_u64(j, "tma_min_samples", min_samples(r, f));
}

static void row_json(const struct report *r, struct json *j, const struct sample_func *f)
{
	json_obj_begin(j, NULL);
	json_str(j, "module", f->module);
	json_str(j, "symbol", f->symbol);
	report_json_ids(j, f->pid, f->tid);
	json_str(j, "comm", f->comm);
	json_u64(j, "count", f->count);
	json_double(j, "share_pct", share_pct(r->samples, f->count));
	json_u64(j, "period", f->period);
	report_counters_json(r, j, "counters", f->c);
	event_samples_json(r, j, f);
	tma_of(r, j, f);
	json_obj_end(j);
}

/* --sample-events: each process's estimates (its functions' rows added up), samples and TMA. */
static void processes_json(const struct report *r, struct json *j)
{
	const struct sample_result *s = r->samples;
	struct sample_func *p = calloc(s->nprocs ? s->nprocs : 1, sizeof(*p));
	size_t n = 0;

	json_arr_begin(j, "sampled_processes");
	for (size_t i = 0; p && i < s->nprocs; i++) {
		const struct sample_func *f = &s->funcs[i];
		size_t k;

		for (k = 0; k < n && p[k].pid != f->pid; k++)
			;
		if (k == n) {
			p[n] = *f;
			p[n++].symbol = NULL;
			continue;
		}
		p[k].count += f->count;
		for (int e = 0; e < r->evs->n; e++) {
			p[k].ev_samples[e] += f->ev_samples[e];
			p[k].c[e].value += f->c[e].value;
			p[k].c[e].enabled += f->c[e].enabled;
			p[k].c[e].running += f->c[e].running;
		}
	}
	for (size_t k = 0; k < n; k++) {
		json_obj_begin(j, NULL);
		report_json_ids(j, p[k].pid, -1);
		json_str(j, "comm", p[k].comm);
		json_u64(j, "count", p[k].count);
		report_counters_json(r, j, "counters", p[k].c);
		event_samples_json(r, j, &p[k]);
		tma_of(r, j, &p[k]);
		json_obj_end(j);
	}
	json_arr_end(j);
	free(p);
}

static void events_json(const struct report *r, struct json *j)
{
	const struct sample_result *s = r->samples;

	json_double(j, "events_hz", s->events_hz);
	json_u64(j, "events_freq", (uint64_t)s->events_freq);
	json_str(j, "shared_counters", s->shared);
	json_arr_begin(j, "events");
	for (int e = 0; e < r->evs->n; e++) {
		json_obj_begin(j, NULL);
		json_str(j, "name", r->evs->ev[e].name);
		json_bool(j, "sampled", s->ev[e].open);
		if (!s->ev[e].open)
			json_str(j, "why", s->ev[e].why);
		json_u64(j, "samples", s->ev[e].samples);
		json_double(j, "running_pct", s->ev[e].running_pct);
		json_obj_end(j);
	}
	json_arr_end(j);
}

void report_samples_json(const struct report *r, struct json *j)
{
	const struct sample_result *s = r->samples;

	json_arr_begin(j, "samples");
	for (size_t i = 0; s && i < s->nfuncs; i++)
		row_json(r, j, &s->funcs[i]);
	json_arr_end(j);
	if (!s)
		return;
	if (s->events)
		processes_json(r, j);
	json_obj_begin(j, "sampling");
	json_str(j, "event", s->event);
	json_u64(j, "hz", (uint64_t)s->hz);
	json_u64(j, "samples", s->samples);
	json_u64(j, "samples_target", s->target);
	json_u64(j, "samples_seen", s->seen);
	json_u64(j, "samples_expected", s->expected);
	json_u64(j, "rows", s->nr_rows);
	json_u64(j, "stacks", s->nr_stacks);
	json_u64(j, "rows_full", s->rows_full);
	json_u64(j, "stacks_full", s->stacks_full);
	json_u64(j, "stack_errors", s->stack_errors);
	json_u64(j, "notices_lost", s->notices_lost);
	json_u64(j, "folds_interrupted", s->folds_interrupted);
	json_u64(j, "unknown_leaf_samples", s->unknown_leaf);
	json_u64(j, "no_stack_samples", s->no_stack);
	json_u64(j, "unmapped_leaf_samples", s->unmapped_leaf);
	json_u64(j, "no_symbol_leaf_samples", s->nosym_leaf);
	json_u64(j, "jit_leaf_samples", s->jit_leaf);
	json_u64(j, "bpf_run_ns", s->bpf_run_ns);
	json_u64(j, "bpf_run_count", s->bpf_run_cnt);
	json_double(j, "bpf_ns_per_sample", s->bpf_run_cnt ? (double)s->bpf_run_ns / s->bpf_run_cnt : 0.0);
	if (s->events)
		events_json(r, j);
	json_obj_end(j);
}

/* A counter's value with its unit, as the threads table shows it ("684.9 ms", "1.23 M"). */
static void counter_text(const struct event_desc *d, double v, char *buf, size_t len)
{
	if (events_count_ns(d))
		units_ns(buf, len, v);
	else if (v >= 1000)
		units_si(buf, len, v, " ");
	else
		snprintf(buf, len, "%.0f", v);
}

/* The table's columns: at a short width TMA (the bottleneck path) goes first, then the counters (the
 * last first), MODULE, CI95; FUNCTION is shortened down to 28 columns before any goes. */
enum { S_PID, S_FUNC, S_MOD, S_SAMPLES, S_SHARE, S_CI95, S_CTR0 };
static const struct text_col sample_cols[] = {
	[S_PID] = { .name = "PID", .prio = 1 },
	[S_FUNC] = { .name = "FUNCTION (leaf)", .prio = 1, .left = true, .min = 28, .shorten = cxx_name_shorten },
	[S_MOD] = { .name = "MODULE", .prio = 3, .left = true, .min = 12 },
	[S_SAMPLES] = { .name = "SAMPLES", .prio = 1 }, [S_SHARE] = { .name = "SHARE%", .prio = 1 },
	[S_CI95] = { .name = "CI95", .prio = 2 },
};

void report_samples_text(const struct report *r, FILE *f, int top, int width, struct text_hidden *hid)
{
	const struct sample_result *s = r->samples;
	int nctr = r->evs->n < TMABPF_MAX_EVENTS ? r->evs->n : TMABPF_MAX_EVENTS;
	bool tma = report_has_tma(r);
	struct text_table t;

	if (!s)
		return;
	if (s->events) {
		text_wrapf(f, width, 2, "sampled events (%.0f samples/s per CPU in all; each event's estimate = its samples x "
			   "their periods, +/- 1.96/sqrt(samples) relative at 95 %%):", s->events_hz);
		for (int e = 0; e < r->evs->n; e++)
			if (s->ev[e].open)
				text_wrapf(f, width, 4, "  %-32s %10llu samples (+/-%.1f %%)%s", r->evs->ev[e].name,
					   s->ev[e].samples, s->ev[e].samples ? 196.0 / sqrt((double)s->ev[e].samples) : 100.0,
					   s->ev[e].running_pct < 99.95 ? " multiplexed" : "");
			else
				text_wrapf(f, width, 4, "  %-32s not sampled: %s", r->evs->ev[e].name, s->ev[e].why);
	}
	text_wrapf(f, width, 2, "sampled functions (%s at %d Hz per CPU: %llu samples of tracked threads, %.0f ns BPF per "
		   "sample; statistical estimates: SHARE%% is +/-CI95 points):", s->events ? "event samples" : s->event,
		   s->events ? (int)(s->events_hz + 0.5) : s->hz, s->samples,
		   s->bpf_run_cnt ? (double)s->bpf_run_ns / s->bpf_run_cnt : 0.0);
	text_table_init(&t, sample_cols, S_CTR0);
	for (int e = 0; e < nctr; e++)	/* the counters, by their whole names; then the TMA path */
		t.col[t.ncols++] = (struct text_col){ .name = r->evs->ev[e].name, .prio = 4 };
	if (tma)
		t.col[t.ncols++] = (struct text_col){ .name = "TMA", .prio = 5, .left = true, .min = 12, .gap = 2 };
	for (size_t i = 0; i < s->nprocs && (int)i < top; i++) {
		const struct sample_func *x = &s->funcs[i];
		char cell[S_CTR0 + TMABPF_MAX_EVENTS + 1][512];
		const char *cells[S_CTR0 + TMABPF_MAX_EVENTS + 1];
		struct thread_stats ts = {};

		snprintf(cell[S_PID], sizeof(cell[S_PID]), "%u", x->pid);
		snprintf(cell[S_SAMPLES], sizeof(cell[S_SAMPLES]), "%llu", x->count);
		snprintf(cell[S_SHARE], sizeof(cell[S_SHARE]), "%.1f", share_pct(s, x->count));
		snprintf(cell[S_CI95], sizeof(cell[S_CI95]), "%.1f", ci95_pct(s, x->count));
		for (int e = 0; e < nctr; e++)
			counter_text(&r->evs->ev[e], counter_scaled(&x->c[e]), cell[S_CTR0 + e], sizeof(cell[0]));
		memcpy(ts.c, x->c, sizeof(ts.c));
		if (tma && report_tma_path(r, &ts, cell[S_CTR0 + nctr], sizeof(cell[0])))
			cell[S_CTR0 + nctr][0] = 0;
		for (int c = 0; c < t.ncols; c++)
			cells[c] = cell[c];
		cells[S_FUNC] = text_safe(x->symbol, cell[S_FUNC], sizeof(cell[S_FUNC]));	/* full names in --json */
		cells[S_MOD] = text_safe(x->module, cell[S_MOD], sizeof(cell[S_MOD]));
		if (text_table_add(&t, cells))
			break;
	}
	text_table_print(&t, f, width, hid);
	text_table_free(&t);
	if ((int)s->nprocs > top)
		fprintf(f, "  ... %zu more functions (see --json)\n", s->nprocs - top);
}
