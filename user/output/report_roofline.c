// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The roofline section of the reports (--roofline): JSON "roofline", the text table. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bpf/roof_shapes.h"
#include "lib/text_fit.h"
#include "lib/text_safe.h"
#include "lib/units.h"
#include "model/func_sums.h"
#include "output/report_sections.h"

static void roofs_json(const struct roofline_result *rl, struct json *j)
{
	const struct roofs *r = &rl->roofs;

	if (!rl->have_roofs) {
		json_null(j, "roofs");
		json_str(j, "roofs_missing", rl->roofs_note);
		return;
	}
	json_obj_begin(j, "roofs");
	json_str(j, "file", rl->roofs_path);
	json_str(j, "cpu", r->host.cpu);
	json_i64(j, "measured_at", r->measured_at);
	json_i64(j, "threads", r->threads[rl->roof_threads]);
	json_double(j, "peak_fp32_flop_per_s", r->flops[ROOF_SP][rl->roof_threads].median);
	json_double(j, "peak_fp64_flop_per_s", r->flops[ROOF_DP][rl->roof_threads].median);
	json_obj_begin(j, "read_bytes_per_s");
	for (int l = 0; l < ROOF__LEVELS; l++)
		if (r->bw[ROOF_READ][l][rl->roof_threads].valid)
			json_double(j, roof_level_name(l), r->bw[ROOF_READ][l][rl->roof_threads].median);
	json_obj_end(j);
	json_obj_end(j);
}

static void row_json(const struct roofline_row *w, struct json *j)
{
	char buf[64];

	json_obj_begin(j, NULL);
	json_str(j, "function", w->func);
	json_u64(j, "pid", w->pid);
	json_str(j, "dtype", roofline_dtype(w));
	json_u64(j, "m", w->m);
	json_u64(j, "n", w->n);
	json_u64(j, "k", w->k);
	json_bool(j, "trans_a", w->flags & ROOF_TRANS_A);
	json_bool(j, "trans_b", w->flags & ROOF_TRANS_B);
	json_bool(j, "row_major", w->flags & ROOF_ROW_MAJOR);
	if (w->flags & ROOF_BETA_KNOWN)
		json_bool(j, "beta_nonzero", w->flags & ROOF_BETA_NONZERO);
	else
		json_null(j, "beta_nonzero");
	json_u64(j, "calls", w->calls);
	json_u64(j, "wall_ns", w->wall_ns);
	json_u64(j, "flops", w->flops);
	json_u64(j, "bytes", w->bytes);
	if (w->flags & ROOF_GGML)
		json_u64(j, "weight_bytes", w->weight_bytes);
	else
		json_null(j, "weight_bytes");
	json_double(j, "intensity", w->intensity);
	json_double(j, "flop_per_s", w->flop_per_s);
	json_double(j, "bytes_per_s", w->bytes_per_s);
	if (w->verdict == ROOFLINE_NO_ROOFS) {
		json_null(j, "level");
		json_null(j, "roof_flop_per_s");
		json_null(j, "share");
	} else {
		json_str(j, "level", roof_level_name(w->level));
		json_double(j, "roof_flop_per_s", w->roof);
		json_double(j, "share", w->share);
	}
	json_str(j, "verdict", roofline_verdict_name(w, buf, sizeof(buf)));
	json_obj_end(j);
}

/* The tokens/s the DRAM bandwidth allows and the share reached; null without roofs. */
static void bound_json(struct json *j, double bound, double share)
{
	if (bound > 0) {
		json_double(j, "bandwidth_bound_tokens_per_s", bound);
		json_double(j, "share", share);
	} else {
		json_null(j, "bandwidth_bound_tokens_per_s");
		json_null(j, "share");
	}
}

static void per_token_json(const struct report *r, struct json *j)
{
	struct roofline_token t;

	if (roofline_per_token(r->roofline, r->iters, &t)) {
		json_null(j, "per_token");
		return;
	}
	json_obj_begin(j, "per_token");
	json_u64(j, "tokens", t.tokens);
	json_u64(j, "unknown_tokens", t.unknown);
	json_double(j, "flops", t.flops);
	json_double(j, "bytes", t.bytes);
	json_double(j, "tokens_per_s", t.tokens_per_s);
	bound_json(j, t.bound_tokens_per_s, t.share);
	if (t.ggml) {
		struct roofline_row named = { .flags = ROOF_GGML };

		json_double(j, "weight_bytes", t.weight_bytes);
		json_obj_begin(j, "weight_bytes_by_type");
		for (unsigned int ty = 0; ty < ROOF_GGML_NTYPES; ty++) {
			named.flags = ROOF_GGML | ty << ROOF_GGML_TYPE_SHIFT;
			if (t.type_weight_bytes[ty] > 0 && roofline_dtype(&named))
				json_double(j, roofline_dtype(&named), t.type_weight_bytes[ty]);
		}
		json_obj_end(j);
	} else {
		json_null(j, "weight_bytes");
		json_null(j, "weight_bytes_by_type");
	}
	json_obj_end(j);
}

void report_roofline_window_json(const struct report *r, const struct iteration *it, struct json *j)
{
	struct roofline_window w;

	if (!r->roofline || it->work.unknown) {	/* unknown: the warning says why */
		json_null(j, "roofline");
		return;
	}
	roofline_window(r->roofline, it, &w);
	json_obj_begin(j, "roofline");
	json_u64(j, "calls", it->work.calls);
	json_u64(j, "calls_wall_ns", it->work.wall_ns);
	json_u64(j, "flops", it->work.flops);
	json_u64(j, "bytes", it->work.bytes);
	json_double(j, "bytes_per_s", w.bytes_per_s);
	json_double(j, "tokens_per_s", w.tokens_per_s);
	bound_json(j, w.bound_tokens_per_s, w.share);
	json_obj_end(j);
}

/* With a PMU: each --uprobe'd known entry's FLOPs as perf's FLOPs metric counts them, beside the
 * analytic ones; calls back fn(row, measured, arg) per (function, pid) with roofline rows.  false
 * with why when the run cannot measure, or measured nothing (no --uprobe'd known entry). */
static bool measured_each(const struct report *r, char *why, size_t len,
			  void (*fn)(const char *func, const struct func_sum *f, const struct roofline_measured *m,
				     void *arg), void *arg)
{
	const struct tma_cpu *c = r->recipe ? tma_cpu_by_name(r->recipe) : NULL;
	struct func_sum *agg = NULL;
	size_t na;

	if (!roofline_can_measure(r->host && r->host->pmu, c, r->evs, why, len))
		return false;
	na = r->uset && r->frows ? func_sums(r->frows, r->nfrows, r->evs->n, false, &agg) : 0;
	size_t shown = 0;
	for (size_t i = 0; i < na; i++) {
		const char *func = r->uset->funcs[agg[i].fn].symbol;
		struct roofline_measured m;

		roofline_measure(r->roofline, c, r->evs, func, agg[i].pid, &agg[i].s, &m);
		if (m.analytic > 0 && ++shown)
			fn(func, &agg[i], &m, arg);
	}
	free(agg);
	if (!shown)
		snprintf(why, len, "no --uprobe'd known entry was called: measured FLOPs need the function's own "
			 "counters (--uprobe LIB:FUNC, e.g. libopenblas.so.0:cblas_sgemm)");
	return shown > 0;
}

static void measured_row_json(const char *func, const struct func_sum *f, const struct roofline_measured *m, void *arg)
{
	struct json *j = arg;

	json_obj_begin(j, NULL);
	json_str(j, "function", func);
	json_u64(j, "pid", f->pid);
	json_u64(j, "calls", f->s.calls);
	json_u64(j, "wall_ns", f->s.wall_ns);
	json_double(j, "analytic_flops", m->analytic);
	json_double(j, "flops", m->flops);
	json_double(j, "gflop_per_s", m->gflop_per_s);
	if (m->why[0])
		json_str(j, "why_null", m->why);
	json_obj_end(j);
}

static void measured_json(const struct report *r, struct json *j)
{
	char why[200];

	json_arr_begin(j, "measured_flops");
	if (!measured_each(r, why, sizeof(why), measured_row_json, j)) {
		json_arr_end(j);
		json_str(j, "measured_flops_missing", why);
		return;
	}
	json_arr_end(j);
	json_str(j, "measured_flops_formula", "perf's tma_info_system_gflops x 1e9 x the calls' wall time: "
		 "FP_ARITH_INST_RETIRED.* weighted by their lanes; an FMA counts twice, a masked-out lane counts "
		 "as computed, integer, AMX and x87 work is not counted");
}

void report_roofline_json(const struct report *r, struct json *j)
{
	const struct roofline_result *rl = r->roofline;

	if (!rl) {
		json_null(j, "roofline");
		return;
	}
	json_obj_begin(j, "roofline");
	json_str(j, "bytes", "compulsory: each operand once and the output written (read too when a readable "
			      "beta is non-zero); a lower bound that ignores re-reads and cache blocking");
	roofs_json(rl, j);
	json_u64(j, "calls", rl->calls);
	json_u64(j, "unreadable_calls", rl->unreadable);
	json_u64(j, "invalid_calls", rl->invalid);
	json_u64(j, "nested_calls", rl->nested);
	json_u64(j, "abandoned_calls", rl->abandoned);
	json_u64(j, "shapes_full_calls", rl->shapes_full);
	json_u64(j, "ggml_worker_calls", rl->ggml_workers);
	json_u64(j, "procs_full_calls", rl->procs_full);
	json_u64(j, "bpf_run_ns", rl->bpf_run_ns);
	json_u64(j, "bpf_run_count", rl->bpf_run_cnt);
	json_arr_begin(j, "shapes");
	for (size_t i = 0; i < rl->nrows; i++)
		row_json(&rl->rows[i], j);
	json_arr_end(j);
	per_token_json(r, j);
	measured_json(r, j);
	json_arr_begin(j, "histogram");
	for (int b = 0; b < ROOFLINE_HIST_BUCKETS; b++) {
		if (!rl->hist_calls[b])
			continue;
		json_obj_begin(j, NULL);
		json_double(j, "flops_per_call_from", pow(10, b));
		json_u64(j, "calls", rl->hist_calls[b]);
		json_u64(j, "wall_ns", rl->hist_wall_ns[b]);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

static void per_token_text(const struct report *r, FILE *f, int width)
{
	struct roofline_token t;
	char fl[16], by[16], bound[200];
	size_t at;

	if (roofline_per_token(r->roofline, r->iters, &t))
		return;
	units_si(fl, sizeof(fl), t.flops, " ");
	units_si(by, sizeof(by), t.bytes, " ");
	if (t.bound_tokens_per_s > 0)
		snprintf(bound, sizeof(bound), ", %.1f %% of the %.2f tokens/s the DRAM bandwidth allows", 100 * t.share,
			 t.bound_tokens_per_s);
	else
		snprintf(bound, sizeof(bound), " (no roofs: no bandwidth bound)");
	at = strlen(bound);
	if (t.unknown)
		snprintf(bound + at, sizeof(bound) - at, "; %zu of unknown work left out", t.unknown);
	if (t.ggml) {
		char wb[16];

		units_si(wb, sizeof(wb), t.weight_bytes, " ");
		text_wrapf(f, width, 2, "per token (%zu, --per-call): %sFLOP, %sB (ggml weights %sB); %.2f tokens/s%s",
			   t.tokens, fl, by, wb, t.tokens_per_s, bound);
		return;
	}
	text_wrapf(f, width, 2, "per token (%zu, --per-call): %sFLOP, %sB; %.2f tokens/s%s", t.tokens, fl, by,
		   t.tokens_per_s, bound);
}

struct measured_text { FILE *f; int width; };

static void measured_row_text(const char *func, const struct func_sum *fs, const struct roofline_measured *m, void *arg)
{
	struct measured_text *t = arg;
	char an[16], me[16];

	units_si(an, sizeof(an), m->analytic, " ");
	if (isnan(m->flops)) {
		text_wrapf(t->f, t->width, 2, "measured FLOPs of %s (pid %u): none (%s); %sFLOP from its arguments", func,
			   fs->pid, m->why, an);
		return;
	}
	units_si(me, sizeof(me), m->flops, " ");
	text_wrapf(t->f, t->width, 2, "measured FLOPs of %s (pid %u): %sFLOP counted, %sFLOP from its arguments "
		   "(%.2f x)", func, fs->pid, me, an, m->analytic > 0 ? m->flops / m->analytic : NAN);
}

/* the measured FLOPs' lines: nothing without a PMU (the host's line says so), one line where the
 * PMU cannot measure them */
static void measured_text(const struct report *r, FILE *f, int width)
{
	struct measured_text t = { f, width };
	char why[200];

	if (!(r->host && r->host->pmu))
		return;
	if (!measured_each(r, why, sizeof(why), measured_row_text, &t))
		text_wrapf(f, width, 2, "measured FLOPs: %s", why);
	else
		text_wrapf(f, width, 2, "(measured: perf's tma_info_system_gflops formula; an FMA counts twice, a "
			   "masked-out lane counts as computed)");
}

/* The windows' spread: each token's work differs (a prefill pass, a growing context). */
static void windows_text(const struct report *r, FILE *f, int width)
{
	struct roofline_spread fl, by, sh;
	char f0[16], f1[16], f2[16], b0[16], b1[16], b2[16], share[96] = "", left[96] = "";
	size_t skipped;

	if (roofline_windows_spread(r->roofline, r->iters, &fl, &by, &sh, &skipped))
		return;
	units_si(f0, sizeof(f0), fl.min, "");
	units_si(f1, sizeof(f1), fl.median, "");
	units_si(f2, sizeof(f2), fl.max, "");
	units_si(b0, sizeof(b0), by.min, "");
	units_si(b1, sizeof(b1), by.median, "");
	units_si(b2, sizeof(b2), by.max, "");
	if (sh.max > 0)
		snprintf(share, sizeof(share), "; share of its bandwidth bound %.1f / %.1f / %.1f %%", 100 * sh.min,
			 100 * sh.median, 100 * sh.max);
	if (skipped)
		snprintf(left, sizeof(left), " (%zu without known calls left out)", skipped);
	text_wrapf(f, width, 2, "per token window (min / median / max): FLOP %s / %s / %s; B %s / %s / %s%s%s", f0, f1,
		   f2, b0, b1, b2, share, left);
}

int report_roofline_live(const struct report *r, int last, char *line, size_t len)
{
	const struct iterations *s = r->iters;
	struct roofline_window w;
	char fl[16], by[16], bw[16], bound[64];

	if (!r->roofline || !s || !s->n)
		return 0;
	roofline_windows(r->roofline, s, s->n > (size_t)last ? s->n - (size_t)last : 0, &w);
	units_si(fl, sizeof(fl), w.flops, " ");
	units_si(by, sizeof(by), w.bytes, " ");
	units_si(bw, sizeof(bw), w.bytes_per_s, " ");
	if (w.bound_tokens_per_s > 0)
		snprintf(bound, sizeof(bound), " of %.1f bound (%.1f%%)", w.bound_tokens_per_s, 100 * w.share);
	else	/* no roofs, or no work to bound */
		snprintf(bound, sizeof(bound), "%s", r->roofline->have_roofs ? "" : "; no roofs: tmabpf roofs");
	snprintf(line, len, "  per token: %sFLOP %sB %sB/s, %.1f tok/s%s", fl, by, bw, w.tokens_per_s, bound);
	return 1;
}

/* The table's columns: at a short width ROOF goes first, then the rates, CALLS, WALL_MS, SHARE and FLOP/B;
 * FUNCTION stays, elided in the middle down to 12 columns; SHAPE and VERDICT stay whole. */
static const struct text_col roofline_cols[] = {
	{ .name = "FUNCTION", .prio = 1, .left = true, .min = 12 }, { .name = "SHAPE", .prio = 1, .left = true },
	{ .name = "CALLS", .prio = 4 }, { .name = "WALL_MS", .prio = 3 }, { .name = "FLOP/s", .prio = 5 },
	{ .name = "B/s", .prio = 5 }, { .name = "FLOP/B", .prio = 2 }, { .name = "ROOF", .prio = 6 },
	{ .name = "SHARE", .prio = 2 }, { .name = "VERDICT", .prio = 1, .left = true, .gap = 2 },
};

void report_roofline_text(const struct report *r, FILE *f, int top, int width, struct text_hidden *hid)
{
	const struct roofline_result *rl = r->roofline;
	char shape[48], fl[16], bw[16], roof[16], v[32], roofs[600], calls[24], ms[24], fb[24], share[16], func[64];
	struct text_table t;

	if (!rl)
		return;
	if (rl->have_roofs)
		snprintf(roofs, sizeof(roofs), "roofs of %d thread%s from %s", rl->roofs.threads[rl->roof_threads],
			 rl->roofs.threads[rl->roof_threads] > 1 ? "s" : "", rl->roofs_path);
	else
		snprintf(roofs, sizeof(roofs), "no roofs: 'sudo tmabpf roofs'");
	text_wrapf(f, width, 2, "roofline (--roofline: %llu GEMM/GEMV calls; bytes are compulsory, a lower bound; %s):",
		   (unsigned long long)rl->calls, roofs);
	per_token_text(r, f, width);
	windows_text(r, f, width);
	measured_text(r, f, width);
	text_table_init(&t, roofline_cols, (int)(sizeof(roofline_cols) / sizeof(roofline_cols[0])));
	for (size_t i = 0; i < rl->nrows && (int)i < top; i++) {
		const struct roofline_row *w = &rl->rows[i];
		const char *cells[] = { text_safe(w->func, func, sizeof(func)), shape, calls, ms, fl, bw, fb, roof, share, v };

		roofline_shape_name(w, shape, sizeof(shape));
		snprintf(calls, sizeof(calls), "%llu", (unsigned long long)w->calls);
		snprintf(ms, sizeof(ms), "%.2f", (double)w->wall_ns / 1e6);
		units_si(fl, sizeof(fl), w->flop_per_s, "");
		units_si(bw, sizeof(bw), w->bytes_per_s, "");
		snprintf(fb, sizeof(fb), "%.2f", w->intensity);
		if (w->roof > 0)
			units_si(roof, sizeof(roof), w->roof, "");
		else
			snprintf(roof, sizeof(roof), "-");
		snprintf(share, sizeof(share), "%.0f%%", w->roof > 0 ? 100 * w->share : 0);
		roofline_verdict_name(w, v, sizeof(v));
		if (text_table_add(&t, cells))
			break;
	}
	text_table_print(&t, f, width, hid);
	text_table_free(&t);
}
