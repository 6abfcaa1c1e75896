// SPDX-License-Identifier: MIT
/* perf metric-expression evaluator; see tma_expr.h for the exact semantics. */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tma_expr.h"

enum tok { T_END, T_NUM, T_ID, T_LIT, T_IF, T_ELSE, T_MIN, T_MAX, T_DRATIO, T_SRCCOUNT,
	   T_CPUID, T_HASEV, T_OP, T_ERR };

struct parser {
	struct tma_expr_ctx *ctx;
	const char *s, *p;	/* input, cursor */
	enum tok t;		/* current token */
	const char *tstart;	/* where it starts */
	char op;
	double num;
	char id[TMA_EXPR_ID_LEN * 2];
	bool abort;		/* perf would YYABORT (division by zero) */
	bool bad;		/* syntax error */
	char *err;
	size_t errlen;
};

static bool is_sym(int c)
{
	return isalnum(c) || c == '_' || c == '.' || c == ':' || c == '@' || c == '?';
}

static void syntax(struct parser *ps, const char *what)
{
	if (ps->bad)
		return;
	ps->bad = true;
	if (ps->err)
		snprintf(ps->err, ps->errlen, "metric expression: %s at position %d near '%.20s'",
			 what, (int)(ps->tstart - ps->s) + 1, ps->tstart);
}

/* length of perf's {number} match at p: ([0-9]+\.?[0-9]*|[0-9]*\.?[0-9]+)(e-?[0-9]+)? */
static size_t num_len(const char *p)
{
	const char *q = p;
	size_t d1 = 0, d2 = 0;

	while (isdigit((unsigned char)*q)) q++, d1++;
	if (*q == '.') {
		const char *r = q + 1;
		while (isdigit((unsigned char)*r)) r++, d2++;
		if (d1 || d2)
			q = r;
	}
	if (!d1 && !d2)
		return 0;
	if (*q == 'e') {
		const char *r = q + 1;
		if (*r == '-')
			r++;
		if (isdigit((unsigned char)*r)) {
			while (isdigit((unsigned char)*r)) r++;
			q = r;
		}
	}
	return (size_t)(q - p);
}

/* length of perf's {symbol} match: ({spec}|{sym})+ with spec = \\[-,=] */
static size_t sym_len(const char *p)
{
	const char *q = p;

	for (;;) {
		if (*q == '\\' && (q[1] == '-' || q[1] == ',' || q[1] == '='))
			q += 2;
		else if (is_sym((unsigned char)*q))
			q++;
		else
			break;
	}
	return (size_t)(q - p);
}

static void next(struct parser *ps)
{
	while (isspace((unsigned char)*ps->p))
		ps->p++;
	ps->tstart = ps->p;
	if (!*ps->p) {
		ps->t = T_END;
		return;
	}
	char c = *ps->p;
	if (c == '#') {
		const char *q = ps->p + 1;
		while (isalnum((unsigned char)*q) || *q == '_' || *q == '.' || *q == '-')
			q++;
		size_t n = (size_t)(q - ps->p - 1);
		if (!n || n >= sizeof(ps->id)) {
			ps->t = T_ERR;
			return;
		}
		memcpy(ps->id, ps->p + 1, n);
		ps->id[n] = 0;
		ps->p = q;
		ps->t = T_LIT;
		return;
	}
	size_t nl = num_len(ps->p), sl = sym_len(ps->p);
	if (nl && nl >= sl) {
		char buf[64];
		snprintf(buf, sizeof(buf), "%.*s", (int)(nl < 63 ? nl : 63), ps->p);
		ps->num = strtod(buf, NULL);
		ps->p += nl;
		ps->t = T_NUM;
		return;
	}
	if (sl) {
		size_t n = 0;
		for (const char *q = ps->p; q < ps->p + sl; q++) {
			if (*q == '\\')
				continue;
			if (n + 1 >= sizeof(ps->id)) {
				ps->t = T_ERR;
				return;
			}
			ps->id[n++] = *q == '@' ? '/' : *q;
		}
		ps->id[n] = 0;
		ps->p += sl;
		static const struct { const char *kw; enum tok t; } kws[] = {
			{ "if", T_IF }, { "else", T_ELSE }, { "min", T_MIN }, { "max", T_MAX },
			{ "d_ratio", T_DRATIO }, { "source_count", T_SRCCOUNT },
			{ "strcmp_cpuid_str", T_CPUID }, { "has_event", T_HASEV },
		};
		ps->t = T_ID;
		for (size_t i = 0; i < sizeof(kws) / sizeof(kws[0]); i++)
			if (!strcmp(ps->id, kws[i].kw))
				ps->t = kws[i].t;
		return;
	}
	if (strchr("|^&<>+-*/%(),!", c)) {
		ps->op = c;
		ps->t = T_OP;
		ps->p++;
		return;
	}
	ps->t = T_ERR;
}

static bool accept_op(struct parser *ps, char op)
{
	if (ps->t == T_OP && ps->op == op) {
		next(ps);
		return true;
	}
	return false;
}

static void expect_op(struct parser *ps, char op)
{
	if (!accept_op(ps, op)) {
		char what[32];
		snprintf(what, sizeof(what), "expected '%c'", op);
		syntax(ps, what);
	}
}

static struct tma_expr_val mk(double v, bool cnst, uint64_t ids)
{
	struct tma_expr_val r = { v, cnst, ids };
	return r;
}

static struct tma_expr_val nanval(void)
{
	return mk(NAN, false, 0);
}

static struct tma_expr_val parse_if(struct parser *ps);
static struct tma_expr_val parse_bin(struct parser *ps, int minprec);

static struct tma_expr_val resolve(struct parser *ps, enum tma_expr_kind kind, const char *id)
{
	struct tma_expr_val v = nanval();

	if (ps->bad)
		return v;
	if (ps->ctx->resolve(ps->ctx, kind, id, &v) != 0) {
		if (kind == TMA_EXPR_LITERAL)
			ps->abort = true; /* perf: unknown literal -> EXPR_ERROR */
		return nanval();
	}
	return v;
}

static struct tma_expr_val parse_call2(struct parser *ps, struct tma_expr_val *b)
{
	struct tma_expr_val a;

	expect_op(ps, '(');
	a = parse_bin(ps, 0);
	expect_op(ps, ',');
	*b = parse_bin(ps, 0);
	expect_op(ps, ')');
	return a;
}

static struct tma_expr_val parse_primary(struct parser *ps)
{
	struct tma_expr_val a, b;
	bool plan = ps->ctx->planning;

	if (ps->bad)
		return nanval();
	switch (ps->t) {
	case T_NUM:
		a = mk(ps->num, true, 0);
		next(ps);
		return a;
	case T_ID: {
		char id[sizeof(ps->id)];
		snprintf(id, sizeof(id), "%s", ps->id);
		next(ps);
		return resolve(ps, TMA_EXPR_ID, id);
	}
	case T_LIT: {
		char id[sizeof(ps->id)];
		snprintf(id, sizeof(id), "%s", ps->id);
		next(ps);
		a = resolve(ps, TMA_EXPR_LITERAL, id);
		a.cnst = true;
		return a;
	}
	case T_SRCCOUNT:
	case T_CPUID:
	case T_HASEV: {
		enum tma_expr_kind k = ps->t == T_SRCCOUNT ? TMA_EXPR_SOURCE_COUNT :
				       ps->t == T_CPUID ? TMA_EXPR_CPUID : TMA_EXPR_HAS_EVENT;
		char id[sizeof(ps->id)];
		next(ps);
		expect_op(ps, '(');
		if (ps->t != T_ID && !ps->bad)
			syntax(ps, "expected an identifier");
		snprintf(id, sizeof(id), "%s", ps->id);
		next(ps);
		expect_op(ps, ')');
		a = resolve(ps, k, id);
		if (k != TMA_EXPR_SOURCE_COUNT)
			a.cnst = true;
		return a;
	}
	case T_MIN:
	case T_MAX: {
		bool ismin = ps->t == T_MIN;
		next(ps);
		a = parse_call2(ps, &b);
		if (plan)
			return mk(NAN, false, a.ids | b.ids);
		if (ismin)
			return mk(a.v < b.v ? a.v : b.v, a.cnst && b.cnst, a.ids | b.ids);
		return mk(a.v > b.v ? a.v : b.v, a.cnst && b.cnst, a.ids | b.ids);
	}
	case T_DRATIO:
		next(ps);
		a = parse_call2(ps, &b);
		if (fpclassify(b.v) == FP_ZERO)
			return mk(0.0, plan ? true : a.cnst && b.cnst, plan ? 0 : a.ids | b.ids);
		if (!plan || (a.cnst && b.cnst))
			return mk(a.v / b.v, a.cnst && b.cnst, a.ids | b.ids);
		return mk(NAN, false, a.ids | b.ids);
	case T_OP:
		if (ps->op == '(') {
			next(ps);
			a = parse_if(ps);
			expect_op(ps, ')');
			return a;
		}
		if (ps->op == '-') {
			next(ps);
			a = parse_bin(ps, 7); /* NEG binds tighter than any binary operator */
			a.v = -a.v;
			return a;
		}
		/* fallthrough */
	default:
		syntax(ps, ps->t == T_END ? "unexpected end" : "unexpected token");
		return nanval();
	}
}

static int prec(const struct parser *ps)
{
	if (ps->t != T_OP)
		return -1;
	switch (ps->op) {
	case '|': return 1;
	case '^': return 2;
	case '&': return 3;
	case '<': case '>': return 4;
	case '+': case '-': return 5;
	case '*': case '/': case '%': return 6;
	default: return -1;
	}
}

/* (long)v without undefined behaviour for values outside long's range */
static long to_long(double v)
{
	if (v >= 9.2e18)
		return LONG_MAX;
	if (v <= -9.2e18)
		return LONG_MIN;
	return (long)v;
}

static double lmod(double a, double b)
{
	long x = to_long(a), y = to_long(b);
	return y == -1 ? 0 : (double)(x % y);
}

static struct tma_expr_val binop(struct parser *ps, char op, struct tma_expr_val a, struct tma_expr_val b)
{
	bool plan = ps->ctx->planning;
	bool cnst = a.cnst && b.cnst;
	uint64_t ids = a.ids | b.ids;

	if (op == '/' || op == '%') {
		if (fpclassify(b.v) == FP_ZERO || (op == '%' && !isnan(b.v) && to_long(b.v) == 0)) {
			ps->abort = true;
			return mk(NAN, false, ids);
		}
		if (plan && !cnst)
			return mk(NAN, false, ids);
		if (op == '%' && (isnan(a.v) || isnan(b.v)))
			return mk(NAN, cnst, ids);
		return mk(op == '/' ? a.v / b.v : lmod(a.v, b.v), cnst, ids);
	}
	if (plan && !cnst)
		return mk(NAN, false, ids);
	if (isnan(a.v) || isnan(b.v))
		return mk(NAN, cnst, ids);
	switch (op) {
	case '|': return mk((double)(to_long(a.v) | to_long(b.v)), cnst, ids);
	case '&': return mk((double)(to_long(a.v) & to_long(b.v)), cnst, ids);
	case '^': return mk((double)(to_long(a.v) ^ to_long(b.v)), cnst, ids);
	case '<': return mk(a.v < b.v, cnst, ids);
	case '>': return mk(a.v > b.v, cnst, ids);
	case '+': return mk(a.v + b.v, cnst, ids);
	case '-': return mk(a.v - b.v, cnst, ids);
	case '*': return mk(a.v * b.v, cnst, ids);
	}
	return nanval();
}

static struct tma_expr_val parse_bin(struct parser *ps, int minprec)
{
	struct tma_expr_val a = parse_primary(ps);

	for (;;) {
		int p = prec(ps);
		if (p < 0 || p < minprec || ps->bad)
			return a;
		char op = ps->op;
		next(ps);
		struct tma_expr_val b = parse_bin(ps, p + 1);
		a = binop(ps, op, a, b);
	}
}

static struct tma_expr_val parse_if(struct parser *ps)
{
	struct tma_expr_val a = parse_bin(ps, 0), c, b;

	if (ps->t != T_IF)
		return a;
	next(ps);
	c = parse_bin(ps, 0);
	if (ps->t != T_ELSE) {
		syntax(ps, "expected 'else'");
		return nanval();
	}
	next(ps);
	b = parse_if(ps);
	if (fpclassify(c.v) == FP_ZERO)
		return ps->ctx->planning ? b : mk(b.v, b.cnst && c.cnst, b.ids | c.ids);
	if (!ps->ctx->planning)
		return mk(a.v, a.cnst && c.cnst, a.ids | c.ids);
	if (c.cnst)
		return a;
	if (a.cnst && b.cnst && a.v == b.v)
		return mk(a.v, true, 0);
	return mk(NAN, false, a.ids | b.ids | c.ids);
}

int tma_expr_id_index(struct tma_expr_ctx *ctx, const char *key)
{
	for (int i = 0; i < ctx->nid; i++)
		if (!strcmp(ctx->id[i], key))
			return i;
	if (ctx->nid >= TMA_EXPR_MAX_IDS) {
		ctx->id_overflow = true;
		return -1;
	}
	snprintf(ctx->id[ctx->nid], TMA_EXPR_ID_LEN, "%s", key);
	return ctx->nid++;
}

int tma_expr_eval(struct tma_expr_ctx *ctx, const char *expr, struct tma_expr_val *out,
		  char *err, size_t errlen)
{
	struct parser ps = { .ctx = ctx, .s = expr, .p = expr, .err = err, .errlen = errlen };

	if (err && errlen)
		err[0] = 0;
	if (ctx->depth > 32) {
		if (err)
			snprintf(err, errlen, "metric expression: references nested too deeply");
		*out = nanval();
		return -1;
	}
	next(&ps);
	*out = parse_if(&ps);
	if (!ps.bad && ps.t != T_END)
		syntax(&ps, ps.t == T_ERR ? "bad character" : "unexpected token");
	if (ps.bad) {
		*out = nanval();
		return -1;
	}
	if (ps.abort) {
		out->v = NAN;
		out->cnst = false;
		return 1;
	}
	return 0;
}
