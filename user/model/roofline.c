// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The roofline of a run's GEMM/GEMV calls (roofline.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bpf/roof_ggml_types.h"
#include "bpf/roof_shapes.h"
#include "lib/sorted.h"
#include "model/counters.h"
#include "model/roofline.h"
#include "tma/tma.h"

/* The innermost level whose caches hold bytes (one instance of L1d/L2, the L3 as measured). */
static enum roof_level fit_level(const struct roofs *r, double bytes)
{
	for (int l = ROOF_L1; l < ROOF_DRAM; l++)
		if (r->cache_bytes[l] && bytes <= (double)r->cache_bytes[l])
			return (enum roof_level)l;
	return ROOF_DRAM;
}

static void judge_row(struct roofline_row *w, const struct roofline_result *r)
{
	enum roof_prec p = w->elem == 8 ? ROOF_DP : ROOF_SP;
	const struct roof_figure *peak, *bw;
	double secs = (double)w->wall_ns / 1e9;

	w->intensity = w->bytes ? (double)w->flops / (double)w->bytes : 0;
	w->flop_per_s = secs > 0 ? (double)w->flops / secs : 0;
	w->bytes_per_s = secs > 0 ? (double)w->bytes / secs : 0;
	w->verdict = ROOFLINE_NO_ROOFS;
	if (!r->have_roofs || !w->calls)
		return;
	w->level = fit_level(&r->roofs, (double)w->bytes / (double)w->calls);
	peak = &r->roofs.flops[p][r->roof_threads];
	bw = &r->roofs.bw[ROOF_READ][w->level][r->roof_threads];
	/* an L3 the threads could not be told from L2 (roofs_likwid.c): the next level out */
	while (!bw->valid && w->level < ROOF_DRAM)
		bw = &r->roofs.bw[ROOF_READ][++w->level][r->roof_threads];
	w->roof = roof_at(&r->roofs, p, w->level, r->roof_threads, w->intensity);
	if (!(w->roof > 0))
		return;
	w->share = w->flop_per_s / w->roof;
	if (w->share < ROOFLINE_BELOW_BOTH)
		w->verdict = ROOFLINE_BELOW_BOTH_ROOFS;
	else if (w->intensity * bw->median < peak->median)
		w->verdict = ROOFLINE_MEMORY;
	else
		w->verdict = ROOFLINE_COMPUTE;
}

static int by_wall(const void *a, const void *b)
{
	const struct roofline_row *x = a, *y = b;

	if (x->wall_ns != y->wall_ns)
		return x->wall_ns < y->wall_ns ? 1 : -1;
	return strcmp(x->func, y->func);
}

void roofline_judge(struct roofline_result *r)
{
	r->roof_threads = r->have_roofs && r->roofs.flops[ROOF_SP][ROOF_ALL].valid ? ROOF_ALL : ROOF_ONE;
	memset(r->hist_calls, 0, sizeof(r->hist_calls));
	memset(r->hist_wall_ns, 0, sizeof(r->hist_wall_ns));
	for (size_t i = 0; i < r->nrows; i++) {
		struct roofline_row *w = &r->rows[i];
		double per = w->calls ? (double)w->flops / (double)w->calls : 0;
		int b = per >= 1 ? (int)floor(log10(per)) : 0;

		judge_row(w, r);
		b = b < 0 ? 0 : b >= ROOFLINE_HIST_BUCKETS ? ROOFLINE_HIST_BUCKETS - 1 : b;
		r->hist_calls[b] += w->calls;
		r->hist_wall_ns[b] += w->wall_ns;
	}
	if (r->nrows)
		qsort(r->rows, r->nrows, sizeof(r->rows[0]), by_wall);
}

const char *roofline_verdict_name(const struct roofline_row *row, char *buf, size_t len)
{
	switch (row->verdict) {
	case ROOFLINE_MEMORY:
		snprintf(buf, len, "memory-bound (%s)", roof_level_name(row->level));
		break;
	case ROOFLINE_COMPUTE:
		snprintf(buf, len, "compute-bound");
		break;
	case ROOFLINE_BELOW_BOTH_ROOFS:
		snprintf(buf, len, "below both roofs");
		break;
	default:
		snprintf(buf, len, "no roofs");
	}
	return buf;
}

#define ROOF_GGML_NAME(id, name, blck, size) [id] = #name,
static const char *const ggml_type_names[ROOF_GGML_NTYPES] = { ROOF_GGML_TYPE_LIST(ROOF_GGML_NAME) };

const char *roofline_dtype(const struct roofline_row *row)
{
	if (row->flags & ROOF_GGML)
		return ROOF_GGML_TYPE(row->flags) < ROOF_GGML_NTYPES ? ggml_type_names[ROOF_GGML_TYPE(row->flags)] : NULL;
	return row->elem == 8 ? "f64" : row->elem == 4 ? "f32" : NULL;
}

void roofline_shape_name(const struct roofline_row *row, char *buf, size_t len)
{
	char ta = row->flags & ROOF_TRANS_A ? 'T' : 'N', tb = row->flags & ROOF_TRANS_B ? 'T' : 'N';
	const char *dt = roofline_dtype(row);

	if (row->flags & ROOF_GGML)
		snprintf(buf, len, "%ux%ux%u %s", row->m, row->n, row->k, dt ? dt : "?");
	else if (row->k)
		snprintf(buf, len, "%ux%ux%u %c%c", row->m, row->n, row->k, ta, tb);
	else
		snprintf(buf, len, "%ux%u %c", row->m, row->n, ta);
}

/* The DRAM read roof of the threads the verdicts use; 0 without one. */
static double dram_read(const struct roofline_result *r)
{
	const struct roof_figure *dram = &r->roofs.bw[ROOF_READ][ROOF_DRAM][r->roof_threads];

	return r->have_roofs && dram->valid ? dram->median : 0;
}

/* Is pid a marker's process (one of it's windows')? */
static bool window_pid(const struct iterations *it, uint32_t pid)
{
	for (size_t k = 0; k < it->n; k++)
		if (it->v[k].pid == pid)
			return true;
	return false;
}

int roofline_per_token(const struct roofline_result *r, const struct iterations *it, struct roofline_token *t)
{
	double dram, flops = 0, bytes = 0, wall = 0;

	memset(t, 0, sizeof(*t));
	if (!r || !it || !it->n)
		return -ENOENT;
	/* the windows' own work: the marker's processes' calls between its snapshots */
	for (size_t k = 0; k < it->n; k++) {
		const struct iteration *w = &it->v[k];

		if (w->work.unknown) {
			t->unknown++;
			continue;
		}
		t->tokens++;
		flops += (double)w->work.flops;
		bytes += (double)w->work.bytes;
		wall += (double)w->wall_ns;
	}
	if (!t->tokens || !(bytes > 0))
		return -ENOENT;
	t->flops = flops / (double)t->tokens;
	t->bytes = bytes / (double)t->tokens;
	t->tokens_per_s = wall > 0 ? (double)t->tokens * 1e9 / wall : 0;
	/* the weights by type: the marker's processes' rows (the windows carry no types) */
	for (size_t i = 0; i < r->nrows; i++) {
		const struct roofline_row *w = &r->rows[i];

		if (!(w->flags & ROOF_GGML) || ROOF_GGML_TYPE(w->flags) >= ROOF_GGML_NTYPES || !window_pid(it, w->pid))
			continue;
		t->ggml = true;
		t->weight_bytes += (double)w->weight_bytes / (double)t->tokens;
		t->type_weight_bytes[ROOF_GGML_TYPE(w->flags)] += (double)w->weight_bytes / (double)t->tokens;
	}
	dram = dram_read(r);
	if (dram > 0) {
		t->bound_tokens_per_s = dram / t->bytes;
		t->share = t->tokens_per_s / t->bound_tokens_per_s;
	}
	return 0;
}

/* n windows of flops, bytes and wall_ns in all */
static void window_of(const struct roofline_result *r, double n, double flops, double bytes, double wall_ns,
		      struct roofline_window *w)
{
	double dram = dram_read(r), secs = wall_ns / 1e9;

	memset(w, 0, sizeof(*w));
	if (!(n > 0))
		return;
	w->flops = flops / n;
	w->bytes = bytes / n;
	w->bytes_per_s = secs > 0 ? bytes / secs : 0;
	w->tokens_per_s = secs > 0 ? n / secs : 0;
	if (dram > 0 && w->bytes > 0) {
		w->bound_tokens_per_s = dram / w->bytes;
		w->share = w->tokens_per_s / w->bound_tokens_per_s;
	}
}

void roofline_window(const struct roofline_result *r, const struct iteration *it, struct roofline_window *w)
{
	window_of(r, 1, (double)it->work.flops, (double)it->work.bytes, (double)it->wall_ns, w);
}

void roofline_windows(const struct roofline_result *r, const struct iterations *it, size_t from,
		      struct roofline_window *w)
{
	double flops = 0, bytes = 0, wall = 0;

	size_t n = 0;

	for (size_t k = from; k < it->n; k++) {
		if (it->v[k].work.unknown)
			continue;
		flops += (double)it->v[k].work.flops;
		bytes += (double)it->v[k].work.bytes;
		wall += (double)it->v[k].wall_ns;
		n++;
	}
	window_of(r, (double)n, flops, bytes, wall, w);
}

static void spread_of(double *v, size_t n, struct roofline_spread *s)
{
	qsort(v, n, sizeof(*v), sorted_cmp_double);
	s->min = v[0];
	s->max = v[n - 1];
	s->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int roofline_windows_spread(const struct roofline_result *r, const struct iterations *it,
			    struct roofline_spread *flops, struct roofline_spread *bytes, struct roofline_spread *share,
			    size_t *skipped)
{
	double *v;
	size_t all = it ? it->n : 0, n = 0;

	*skipped = 0;
	if (!all)
		return -ENOENT;
	if (!(v = malloc(3 * all * sizeof(*v))))
		return -ENOMEM;
	for (size_t k = 0; k < all; k++) {
		struct roofline_window w;

		if (!it->v[k].work.calls) {	/* no known call returned in it, or its work unknown */
			(*skipped)++;
			continue;
		}
		roofline_window(r, &it->v[k], &w);
		v[n] = w.flops;
		v[all + n] = w.bytes;
		v[2 * all + n] = w.share;
		n++;
	}
	if (!n) {
		free(v);
		return -ENOENT;
	}
	spread_of(v, n, flops);
	spread_of(v + all, n, bytes);
	spread_of(v + 2 * all, n, share);
	free(v);
	return 0;
}

void roofline_result_free(struct roofline_result *r)
{
	free(r->rows);
	r->rows = NULL;
	r->nrows = 0;
}

bool roofline_can_measure(bool pmu, const struct tma_cpu *c, const struct event_list *evs, char *why, size_t len)
{
	char keys[32][TMA_KEY_LEN];
	int nk = c ? tma_flops_events(c, keys, 32) : 0;

	if (!pmu) {
		snprintf(why, len, "no hardware PMU on this host: the FLOPs are the analytic ones");
		return false;
	}
	if (nk <= 0) {
		snprintf(why, len, "no FLOPs metric of perf 6.12 for %s: the FLOPs are the analytic ones",
			 c ? tma_cpu_name(c) : "this CPU (no TMA recipe)");
		return false;
	}
	for (int k = 0; k < nk; k++) {
		bool have = false;
		for (int e = 0; e < evs->n && !have; e++) {
			char key[TMA_KEY_LEN];
			have = !tma_event_key(evs->ev[e].name, key, sizeof(key)) && !strcmp(key, keys[k]);
		}
		if (!have) {
			snprintf(why, len, "%s was not counted: the FLOPs are the analytic ones", keys[k]);
			return false;
		}
	}
	why[0] = 0;
	return true;
}

int roofline_measure(const struct roofline_result *rl, const struct tma_cpu *c, const struct event_list *evs,
		     const char *func, uint32_t pid, const struct func_stats *s, struct roofline_measured *m)
{
	const char *names[TMABPF_MAX_EVENTS];
	double vals[TMABPF_MAX_EVENTS], pct[TMABPF_MAX_EVENTS];

	m->analytic = 0;
	for (size_t i = 0; i < rl->nrows; i++)
		if (rl->rows[i].pid == pid && !strcmp(rl->rows[i].func, func))
			m->analytic += (double)rl->rows[i].flops;
	counters_scaled(s->c, evs->n, vals, pct);
	for (int e = 0; e < evs->n; e++)
		names[e] = evs->ev[e].name;
	return tma_flops_named(c, evs->n, names, vals, (double)s->wall_ns / 1e9, &m->flops, &m->gflop_per_s, m->why,
			       sizeof(m->why));
}
