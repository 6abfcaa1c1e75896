/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Evaluator for perf's metric-expression language, following perf 6.12's
 * tools/perf/util/expr.y and expr.l exactly (the version `make deps` installs):
 *   - a '/' by zero gives NaN and the expression goes on (perf >= 6.5; older
 *     perf aborted the whole metric); a '%' by zero still aborts it;
 *   - d_ratio(a, b) is 0 when b is zero;
 *   - '<' '>' '+' '-' '*' with a NaN operand give NaN (BINARY_OP);
 *   - min(a,b) = a < b ? a : b, max(a,b) = a > b ? a : b, as C does it: so
 *     max(NaN, 0) = 0 and max(0, NaN) = NaN;
 *   - '|' '&' '^' are logical on "is zero", with perf's constant folding:
 *     a finite zero/non-zero operand decides, two non-finite operands give NaN;
 *   - "a if c else b": b when c is zero, else a (NaN counts as true);
 *   - an identifier that cannot be resolved is NaN (no abort); an aborted
 *     referenced metric is NaN inside its parent; an unknown #literal is a
 *     syntax error (the metric aborts); "NaN" is the number NaN;
 *   - identifiers follow perf's lexer: [0-9a-zA-Z_.:@?] and backslash-escaped
 *     '-', ',', '='; '@' reads as '/', so cpu@EV\,cmask\=1@ is cpu/EV,cmask=1/.
 * In planning mode event values are "bottom" (NaN: not constant), constants
 * are the finite values (perf's is_const), and, as perf's compute_ids pass,
 * only the events of branches that can be taken are recorded.
 */
#ifndef TMABPF_TMA_EXPR_H
#define TMABPF_TMA_EXPR_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TMA_EXPR_MAX_IDS 256	/* distinct events one evaluation context can track */
#define TMA_EXPR_ID_LEN 96

/* A set of event slots (bit i: the resolver's slot i). */
struct tma_ids {
	uint64_t w[TMA_EXPR_MAX_IDS / 64];
};

static inline void tma_ids_add(struct tma_ids *s, int i)
{
	s->w[i >> 6] |= 1ULL << (i & 63);
}

static inline bool tma_ids_has(const struct tma_ids *s, int i)
{
	return s->w[i >> 6] >> (i & 63) & 1;
}

static inline void tma_ids_or(struct tma_ids *d, const struct tma_ids *s)
{
	for (int i = 0; i < TMA_EXPR_MAX_IDS / 64; i++)
		d->w[i] |= s->w[i];
}

/* the first member of s at or after i, -1 when none */
static inline int tma_ids_next(const struct tma_ids *s, int i)
{
	for (int w = i >> 6; w < TMA_EXPR_MAX_IDS / 64; w++) {
		uint64_t m = s->w[w] & (w == i >> 6 ? ~0ULL << (i & 63) : ~0ULL);
		if (m)
			return w * 64 + __builtin_ctzll(m);
	}
	return -1;
}

#define tma_ids_for_each(k, s) for (int k = tma_ids_next((s), 0); k >= 0; k = tma_ids_next((s), k + 1))

struct tma_expr_val {
	double v;
	bool div0;		/* a division by zero made a NaN on the way (kept even if max() hid it) */
	struct tma_ids ids;	/* events that contributed (planning: that perf would count) */
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
/* Return 0 with *out set, or -1 when the identifier cannot be resolved (the
 * value becomes NaN; for a #literal the metric aborts, as perf's lexer does). */
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
};

/* Evaluate expr (compiles it, runs it once). Returns 0 on success (out->v may
 * be NaN), 1 when perf would abort the metric ('%' by zero, unknown literal:
 * out->v = NaN), -1 on a syntax error (err says where). */
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

#endif
