// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The sampled-functions section of the reports (--sample): JSON rows and the text table. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "lib/cxx_name.h"
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
	json_obj_begin(j, "counters");
	for (int e = 0; e < r->evs->n; e++)
		json_u64(j, r->evs->ev[e].name, (uint64_t)(counter_scaled(&f->c[e]) + 0.5));
	json_obj_end(j);
	tma_of(r, j, f);
	json_obj_end(j);
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
	json_obj_end(j);
}

void report_samples_text(const struct report *r, FILE *f, int top)
{
	const struct sample_result *s = r->samples;
	char path[512];

	if (!s)
		return;
	fprintf(f, "sampled functions (%s at %d Hz per CPU: %llu samples of tracked threads, %.0f ns BPF per sample; "
		"statistical estimates: SHARE%% is +/-CI95 points):\n", s->event, s->hz, s->samples,
		s->bpf_run_cnt ? (double)s->bpf_run_ns / s->bpf_run_cnt : 0.0);
	fprintf(f, "%7s %-36s %-20s %8s %7s %6s", "PID", "FUNCTION (leaf)", "MODULE", "SAMPLES", "SHARE%", "CI95");
	for (int e = 0; e < r->evs->n; e++)
		fprintf(f, " %14.14s", r->evs->ev[e].name);
	if (report_has_tma(r))
		fprintf(f, "  TMA");
	fputc('\n', f);
	for (size_t i = 0; i < s->nprocs && (int)i < top; i++) {
		const struct sample_func *x = &s->funcs[i];

		char name[512];
		int cols = cxx_name_shorten(x->symbol, 36, name, sizeof(name));	/* full names in --json */

		fprintf(f, "%7u %s%*s %-20.20s %8llu %7.1f %6.1f", x->pid, name, 36 - cols, "", x->module, x->count,
			share_pct(s, x->count), ci95_pct(s, x->count));
		for (int e = 0; e < r->evs->n; e++)
			fprintf(f, " %14.0f", counter_scaled(&x->c[e]));
		if (report_has_tma(r)) {
			struct thread_stats t = {};

			memcpy(t.c, x->c, sizeof(t.c));
			if (report_tma_path(r, &t, path, sizeof(path)) == 0)
				fprintf(f, "  %s", path);
		}
		fputc('\n', f);
	}
	if ((int)s->nprocs > top)
		fprintf(f, "  ... %zu more functions (see --json)\n", s->nprocs - top);
}
