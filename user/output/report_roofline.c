// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The roofline section of the reports (--roofline): JSON "roofline", the text table. */
#include <math.h>
#include <string.h>
#include "bpf/roof_shapes.h"
#include "lib/text_fit.h"
#include "lib/units.h"
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

static void per_token_json(const struct report *r, struct json *j)
{
	struct roofline_token t;

	if (roofline_per_token(r->roofline, r->iters, &t)) {
		json_null(j, "per_token");
		return;
	}
	json_obj_begin(j, "per_token");
	json_u64(j, "tokens", t.tokens);
	json_double(j, "flops", t.flops);
	json_double(j, "bytes", t.bytes);
	json_double(j, "tokens_per_s", t.tokens_per_s);
	if (t.bound_tokens_per_s > 0) {
		json_double(j, "bandwidth_bound_tokens_per_s", t.bound_tokens_per_s);
		json_double(j, "share", t.share);
	} else {
		json_null(j, "bandwidth_bound_tokens_per_s");
		json_null(j, "share");
	}
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
	json_u64(j, "nested_calls", rl->nested);
	json_u64(j, "abandoned_calls", rl->abandoned);
	json_u64(j, "shapes_full_calls", rl->shapes_full);
	json_u64(j, "ggml_worker_calls", rl->ggml_workers);
	json_u64(j, "bpf_run_ns", rl->bpf_run_ns);
	json_u64(j, "bpf_run_count", rl->bpf_run_cnt);
	json_arr_begin(j, "shapes");
	for (size_t i = 0; i < rl->nrows; i++)
		row_json(&rl->rows[i], j);
	json_arr_end(j);
	per_token_json(r, j);
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
	char fl[16], by[16], bound[128];

	if (roofline_per_token(r->roofline, r->iters, &t))
		return;
	units_si(fl, sizeof(fl), t.flops, " ");
	units_si(by, sizeof(by), t.bytes, " ");
	if (t.bound_tokens_per_s > 0)
		snprintf(bound, sizeof(bound), ", %.1f %% of the %.2f tokens/s the DRAM bandwidth allows", 100 * t.share,
			 t.bound_tokens_per_s);
	else
		snprintf(bound, sizeof(bound), " (no roofs: no bandwidth bound)");
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

/* FUNCTION SHAPE CALLS WALL_MS FLOP/s B/s FLOP/B ROOF SHARE: the columns before VERDICT. */
#define ROOFLINE_FIXED (12 + 1 + 20 + 1 + 7 + 1 + 9 + 1 + 7 + 1 + 7 + 1 + 7 + 1 + 7 + 1 + 5)

void report_roofline_text(const struct report *r, FILE *f, int top, int width)
{
	const struct roofline_result *rl = r->roofline;
	char shape[48], fl[16], bw[16], roof[16], v[32], roofs[600];

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
	fprintf(f, "%-12s %-20s %7s %9s %7s %7s %7s %7s %5s%s\n", "FUNCTION", "SHAPE", "CALLS", "WALL_MS",
		"FLOP/s", "B/s", "FLOP/B", "ROOF", "SHARE", ROOFLINE_FIXED + 9 <= width ? "  VERDICT" : "");
	for (size_t i = 0; i < rl->nrows && (int)i < top; i++) {
		const struct roofline_row *w = &rl->rows[i];

		roofline_shape_name(w, shape, sizeof(shape));
		units_si(fl, sizeof(fl), w->flop_per_s, "");
		units_si(bw, sizeof(bw), w->bytes_per_s, "");
		if (w->roof > 0)
			units_si(roof, sizeof(roof), w->roof, "");
		else
			snprintf(roof, sizeof(roof), "-");
		fprintf(f, "%-12.12s %-20.20s %7llu %9.2f %7s %7s %7.2f %7s %4.0f%%", w->func, shape,
			(unsigned long long)w->calls, (double)w->wall_ns / 1e6, fl, bw, w->intensity, roof,
			w->roof > 0 ? 100 * w->share : 0);
		roofline_verdict_name(w, v, sizeof(v));	/* after the numbers, or under them when they fill the line */
		if (ROOFLINE_FIXED + 2 + (int)strlen(v) <= width)
			fprintf(f, "  %s\n", v);
		else
			fprintf(f, "\n%*s%s\n", width - (int)strlen(v) > 4 ? 4 : 0, "", v);
	}
}
