/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Evaluator for perf's metric-expression language (tools/perf/util/expr.y),
 * following perf's arithmetic exactly:
 *   - a '/' or '%' by zero aborts the whole expression (perf prints nothing: NaN here);
 *   - an aborted referenced metric evaluates to NaN inside its parent;
 *   - d_ratio(a, b) is 0 when b == 0;
 *   - min(a,b) = a < b ? a : b, max(a,b) = a > b ? a : b (NaN handling as in C);
 *   - "a if c else b": c counts as true unless it is exactly zero (NaN is true);
 *   - '|' '&' '^' operate on (long) values; NaN operands give NaN;
 *   - identifiers follow perf's lexer: [0-9a-zA-Z_.:@?] and backslash-escaped
 *     '-', ',', '='; '@' reads as '/', so cpu@EV\,cmask\=1@ is cpu/EV,cmask=1/.
 * In planning mode event values are "bottom" (not constant) and, like perf's
 * compute_ids pass, only the events of branches that can be taken are recorded.
 */
#ifndef TMABPF_TMA_EXPR_H
#define TMABPF_TMA_EXPR_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TMA_EXPR_MAX_IDS 64
#define TMA_EXPR_ID_LEN 96

struct tma_expr_val {
	double v;
	bool cnst;	/* value known without reading any counter */
	uint64_t ids;	/* bit i: ctx->id[i] contributed */
};

enum tma_expr_kind {
	TMA_EXPR_ID,		/* event or metric reference */
	TMA_EXPR_LITERAL,	/* #SMT_on, #core_wide, #slots, ... (name without '#') */
	TMA_EXPR_SOURCE_COUNT,	/* source_count(ID) */
	TMA_EXPR_CPUID,		/* strcmp_cpuid_str(ARG) */
	TMA_EXPR_HAS_EVENT,	/* has_event(ID) */
};

/* A reference in a compiled expression, in source order. */
struct tma_expr_ref {
	enum tma_expr_kind kind;
	int bind;		/* the caller's binding (e.g. a metric or event index); -1 as compiled */
	char *id;		/* identifier as the resolver sees it ('@' read as '/', escapes removed) */
};

struct tma_expr_ctx;
/* Return 0 with *out set, or -1 when the identifier cannot be resolved (value becomes NaN). */
typedef int (*tma_expr_resolve_fn)(struct tma_expr_ctx *ctx, enum tma_expr_kind kind,
				   const char *id, struct tma_expr_val *out);

/* Same for a compiled reference (faster: ref->bind can hold a pre-resolved index). */
typedef int (*tma_expr_resolve_ref_fn)(struct tma_expr_ctx *ctx, const struct tma_expr_ref *ref,
				       struct tma_expr_val *out);

struct tma_expr_ctx {
	tma_expr_resolve_fn resolve;
	tma_expr_resolve_ref_fn resolve_ref;	/* used instead of resolve when set */
	void *user;
	bool planning;
	int depth;			/* nesting of metric references */
	int nid;
	char id[TMA_EXPR_MAX_IDS][TMA_EXPR_ID_LEN];	/* events seen (resolver's keys) */
	bool id_overflow;
};

/* Evaluate expr (compiles it, runs it once). Returns 0 on success, 1 when perf would abort (division by
 * zero: out->v = NaN), -1 on a syntax error (err says where). */
int tma_expr_eval(struct tma_expr_ctx *ctx, const char *expr, struct tma_expr_val *out,
		  char *err, size_t errlen);
/* Compiled form: parse once, run many times with the same results (and the
 * same resolver calls, in the same order) as tma_expr_eval.  A syntax error is
 * kept in the program: running it resolves the references before the error,
 * as the parser did, and returns -1.  NULL only when out of memory. */
struct tma_expr_prog;
struct tma_expr_prog *tma_expr_compile(const char *expr);
void tma_expr_free(struct tma_expr_prog *p);
int tma_expr_run(struct tma_expr_ctx *ctx, const struct tma_expr_prog *p, struct tma_expr_val *out,
		 char *err, size_t errlen);
int tma_expr_nrefs(const struct tma_expr_prog *p);
struct tma_expr_ref *tma_expr_ref_at(struct tma_expr_prog *p, int i);

/* Index of key in ctx->id[], adding it; -1 when the table is full. */
int tma_expr_id_index(struct tma_expr_ctx *ctx, const char *key);

#endif
