/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * roofline: the GEMM/GEMV calls of a run (--roofline) per function and shape,
 * their work from their arguments (bpf/roof_shapes.h: FLOPs exact, bytes the
 * compulsory lower bound), achieved rates from their own time, and, with the
 * host's measured roofs (pmu/roofs.h), the roof at their arithmetic intensity
 * for the cache level their working set fits in, the share of it reached and
 * a verdict.
 */
#ifndef TMABPF_MODEL_ROOFLINE_H
#define TMABPF_MODEL_ROOFLINE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/roof_ggml_types.h"
#include "bpf/uprobes.h"
#include "model/iterations.h"
#include "pmu/events.h"
#include "pmu/roofs.h"
#include "tma/tma_recipes.h"

#define ROOFLINE_BELOW_BOTH 0.10	/* share of the roof under which neither roof explains the time */
#define ROOFLINE_HIST_BUCKETS 16	/* FLOPs per call: [10^i, 10^(i+1)) */

enum roofline_verdict {
	ROOFLINE_NO_ROOFS,		/* no measured roofs: work and rates only */
	ROOFLINE_MEMORY,		/* under the bandwidth roof of its level, at a plausible share */
	ROOFLINE_COMPUTE,		/* under the peak */
	ROOFLINE_BELOW_BOTH_ROOFS,	/* well below both: overhead, latency, small shapes, spinning */
};

struct roofline_row {
	char func[64];
	uint32_t pid;
	uint32_t m, n, k;		/* GEMV: k = 0 */
	uint32_t flags;			/* ROOF_* of bpf/roof_shapes.h */
	uint32_t elem;			/* 4 (fp32) or 8 (fp64); 0: a ggml node (the weight's type in flags) */
	uint64_t calls, wall_ns, flops, bytes;
	uint64_t weight_bytes;		/* ggml: the weights' (src0's) bytes */
	/* derived */
	double intensity;		/* FLOP per compulsory byte */
	double flop_per_s, bytes_per_s;	/* achieved over the calls' own time */
	enum roof_level level;		/* where one call's compulsory bytes fit */
	double roof;			/* attainable FLOP/s at intensity for level, 0 without roofs */
	double share;			/* flop_per_s / roof */
	enum roofline_verdict verdict;
};

struct roofline_result {
	struct roofline_row *rows;	/* by wall time, descending */
	size_t nrows;
	uint64_t calls, unreadable, nested, abandoned, shapes_full;
	uint64_t ggml_workers;		/* ggml nodes' entries on threads other than the first: not counted again */
	uint64_t procs_full;		/* --per-call: calls not added to their process' totals (roof_procs full) */
	uint64_t invalid;		/* of the unreadable: arguments BLAS rejects (xerbla), computing nothing */
	uint64_t bpf_run_ns, bpf_run_cnt;	/* the program's kernel run-time stats (when on) */
	bool have_roofs;
	struct roofs roofs;		/* valid when have_roofs */
	enum roof_threads roof_threads;	/* which roofs the verdicts use */
	char roofs_path[256];
	char roofs_note[512];		/* why there are none, when have_roofs is false */
	uint64_t hist_calls[ROOFLINE_HIST_BUCKETS], hist_wall_ns[ROOFLINE_HIST_BUCKETS];
};

/* With --per-call: the GEMM/GEMV work per iteration (token), its windows' (iteration.work: the
 * marker's process' calls between its snapshots), and the tokens/s the DRAM bandwidth allows at that
 * many bytes per token. */
struct roofline_token {
	size_t tokens;			/* iterations of known work */
	size_t unknown;			/* iterations of unknown work (roof_procs full): left out */
	double flops, bytes;		/* per token: the windows' sums / tokens */
	double tokens_per_s;		/* reached: iterations per second of iteration time */
	double bound_tokens_per_s;	/* DRAM read bandwidth / bytes per token; 0 without roofs */
	double share;			/* tokens_per_s / bound_tokens_per_s */
	bool ggml;			/* ggml nodes among the rows: the weight bytes below are theirs */
	double weight_bytes;		/* per token: the ggml nodes' weight bytes (the marker's processes' rows
					 * over the tokens: the windows have no types) */
	double type_weight_bytes[ROOF_GGML_NTYPES];	/* the same by weight type (ggml_type) */
};

/* With a PMU: a probed function's FLOPs as perf's FLOPs metric counts them (tma.h tma_flops_named,
 * over its calls' wall time), beside the analytic FLOPs of its roofline rows.  Perf's formula
 * weights each FP_ARITH_INST_RETIRED.* count by its lanes: an FMA counts twice (as 2 M N K does), a
 * masked-out AVX-512 lane counts as if it computed, and integer, AMX and x87 work is not in it. */
struct roofline_measured {
	double analytic;		/* FLOPs from its arguments: its roofline rows' sum */
	double flops, gflop_per_s;	/* measured; NaN when why says */
	char why[160];
};

/* Whether this run can measure FLOPs: a PMU, a recipe with perf's FLOPs metric and its events
 * counted; false with why (no PMU, no such metric, events not counted). */
bool roofline_can_measure(bool pmu, const struct tma_cpu *c, const struct event_list *evs, char *why, size_t len);
/* The measured FLOPs of one probed function's sums s (per process) on CPU c; the analytic FLOPs
 * of rl's rows for (func, pid).  0, or -errno with m->why. */
int roofline_measure(const struct roofline_result *rl, const struct tma_cpu *c, const struct event_list *evs,
		     const char *func, uint32_t pid, const struct func_stats *s, struct roofline_measured *m);

/* 0, or -ENOENT when there are no iterations or no work. */
int roofline_per_token(const struct roofline_result *r, const struct iterations *it, struct roofline_token *t);

/* With --per-call: one iteration's (token window's) work, from the snapshots at its edges
 * (iteration.work), against the DRAM bandwidth. */
struct roofline_window {
	double flops, bytes;		/* the window's */
	double bytes_per_s;		/* achieved: bytes / the window's wall time */
	double tokens_per_s;		/* 1 / the window's wall time */
	double bound_tokens_per_s;	/* DRAM read bandwidth / bytes; 0 without roofs or bytes */
	double share;			/* tokens_per_s / bound_tokens_per_s (= bytes_per_s / DRAM bandwidth) */
};

void roofline_window(const struct roofline_result *r, const struct iteration *it, struct roofline_window *w);
/* The windows it->v[from, it->n) of known work as one: their work and wall times summed. */
void roofline_windows(const struct roofline_result *r, const struct iterations *it, size_t from,
		      struct roofline_window *w);

struct roofline_spread {
	double min, median, max;
};
/* Over the windows with known calls: the spread of their FLOPs, bytes, and share of the bound (0s
 * without roofs); *skipped: the windows left out (no known call returned in them, or their work
 * unknown).  0, -ENOENT without such windows, -ENOMEM. */
int roofline_windows_spread(const struct roofline_result *r, const struct iterations *it,
			    struct roofline_spread *flops, struct roofline_spread *bytes, struct roofline_spread *share,
			    size_t *skipped);

/* Derive every row's rates, level, roof, share and verdict (r->have_roofs says whether the roofs
 * are there), sort the rows by time and fill the histogram. */
void roofline_judge(struct roofline_result *r);
/* "memory-bound (DRAM)", "compute-bound", "below both roofs", "no roofs" */
const char *roofline_verdict_name(const struct roofline_row *row, char *buf, size_t len);
/* The element type: "f32", "f64", or a ggml node's weight type ("q8_0", "q4_K", "bf16", ...); NULL: unknown */
const char *roofline_dtype(const struct roofline_row *row);
/* "1024x1024x1024 NT" (GEMV: "4096x4096 N"; a ggml node: "4096x1x4096 q8_0") */
void roofline_shape_name(const struct roofline_row *row, char *buf, size_t len);
void roofline_result_free(struct roofline_result *r);

#endif
