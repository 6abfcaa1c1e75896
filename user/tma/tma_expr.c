// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* perf 6.12 metric-expression evaluator; see tma_expr.h for the exact semantics. */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/grow.h"
#include "lib/warn.h"
#include "tma/tma_expr.h"

/* instructions of the compiled (postfix) form */
enum op { I_NUM, I_REF, I_NEG, I_BIN, I_MIN, I_MAX, I_DRATIO, I_IF };

struct insn {
	uint8_t op;
	char bop;	/* I_BIN: the operator */
	int ref;	/* I_REF: index in refs[] */
	double num;	/* I_NUM */
};

struct tma_expr_prog {
	int n, maxdepth;
	size_t cap;
	struct insn *code;
	int nref;
	size_t refcap;
	struct tma_expr_ref *refs;
	bool bad;		/* syntax error: only the references before it are resolved */
	char err[160];
};

enum tok { T_END, T_NUM, T_ID, T_LIT, T_IF, T_ELSE, T_MIN, T_MAX, T_DRATIO, T_SRCCOUNT,
	   T_CPUID, T_HASEV, T_OP, T_ERR };

struct parser {
	const char *s, *p;	/* input, cursor */
	enum tok t;		/* current token */
	const char *tstart;	/* where it starts */
	char op;
	double num;
	char id[TMA_EXPR_ID_LEN * 2];
	bool bad;		/* syntax error */
	bool oom;
	struct tma_expr_prog *prog;	/* what is emitted */
	int depth;		/* stack depth while emitting */
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
		if (!strcmp(ps->id, "NaN")) {	/* expr.l: NaN is a number */
			ps->num = NAN;
			ps->t = T_NUM;
		}
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

/* ---------------- compiler: perf's grammar, emitting postfix code ---------------- */

static void emit(struct parser *ps, struct insn in, int push)
{
	struct tma_expr_prog *p = ps->prog;

	if (ps->bad && in.op != I_REF)
		return;
	struct insn *c = grow(p->code, &p->cap, p->n, sizeof(*c), 32);

	if (!c) {
		ps->oom = true;
		return;
	}
	p->code = c;
	p->code[p->n++] = in;
	ps->depth += push;
	if (ps->depth > p->maxdepth)
		p->maxdepth = ps->depth;
}

static void emit_op(struct parser *ps, enum op op, char bop, int pop)
{
	struct insn in = { .op = op, .bop = bop };
	emit(ps, in, 1 - pop);
}

/* a reference resolved at run time, in source order (as perf's parser resolves them) */
static void emit_ref(struct parser *ps, enum tma_expr_kind kind, const char *id)
{
	struct tma_expr_prog *p = ps->prog;

	if (ps->bad)
		return;
	struct tma_expr_ref *refs = grow(p->refs, &p->refcap, p->nref, sizeof(*refs), 8), *r;

	if (!refs) {
		ps->oom = true;
		return;
	}
	p->refs = refs;
	r = &p->refs[p->nref];
	r->kind = kind;
	r->bind = -1;
	r->id = strdup(id);
	if (!r->id) {
		ps->oom = true;
		return;
	}
	struct insn in = { .op = I_REF, .ref = p->nref++ };
	emit(ps, in, 1);
}

static void parse_if(struct parser *ps);
static void parse_bin(struct parser *ps, int minprec);

static void parse_call2(struct parser *ps)
{
	expect_op(ps, '(');
	parse_bin(ps, 0);
	expect_op(ps, ',');
	parse_bin(ps, 0);
	expect_op(ps, ')');
}

static void parse_primary(struct parser *ps)
{
	if (ps->bad)
		return;
	switch (ps->t) {
	case T_NUM: {
		struct insn in = { .op = I_NUM, .num = ps->num };
		next(ps);
		emit(ps, in, 1);
		return;
	}
	case T_ID:
	case T_LIT: {
		char id[sizeof(ps->id)];
		enum tma_expr_kind k = ps->t == T_ID ? TMA_EXPR_ID : TMA_EXPR_LITERAL;
		snprintf(id, sizeof(id), "%s", ps->id);
		next(ps);
		emit_ref(ps, k, id);
		return;
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
		emit_ref(ps, k, id);
		return;
	}
	case T_MIN:
	case T_MAX:
	case T_DRATIO: {
		enum op op = ps->t == T_MIN ? I_MIN : ps->t == T_MAX ? I_MAX : I_DRATIO;
		next(ps);
		parse_call2(ps);
		emit_op(ps, op, 0, 2);
		return;
	}
	case T_OP:
		if (ps->op == '(') {
			next(ps);
			parse_if(ps);
			expect_op(ps, ')');
			return;
		}
		if (ps->op == '-') {
			next(ps);
			parse_bin(ps, 7); /* NEG binds tighter than any binary operator */
			emit_op(ps, I_NEG, 0, 1);
			return;
		}
		/* fallthrough */
	default:
		syntax(ps, ps->t == T_END ? "unexpected end" : "unexpected token");
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

static void parse_bin(struct parser *ps, int minprec)
{
	parse_primary(ps);
	for (;;) {
		int p = prec(ps);
		if (p < 0 || p < minprec || ps->bad)
			return;
		char op = ps->op;
		next(ps);
		parse_bin(ps, p + 1);
		emit_op(ps, I_BIN, op, 2);
	}
}

static void parse_if(struct parser *ps)
{
	parse_bin(ps, 0);
	if (ps->t != T_IF)
		return;
	next(ps);
	parse_bin(ps, 0);
	if (ps->t != T_ELSE) {
		syntax(ps, "expected 'else'");
		return;
	}
	next(ps);
	parse_if(ps);
	emit_op(ps, I_IF, 0, 3);	/* operands in source order: a, c, b */
}

void tma_expr_free(struct tma_expr_prog *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->nref; i++)
		free(p->refs[i].id);
	free(p->refs);
	free(p->code);
	free(p);
}

struct tma_expr_prog *tma_expr_compile(const char *expr)
{
	struct tma_expr_prog *p = calloc(1, sizeof(*p));
	struct parser ps = { .s = expr, .p = expr, .prog = p };

	if (!p)
		return NULL;
	ps.err = p->err;
	ps.errlen = sizeof(p->err);
	next(&ps);
	parse_if(&ps);
	if (!ps.bad && ps.t != T_END)
		syntax(&ps, ps.t == T_ERR ? "bad character" : "unexpected token");
	if (ps.oom) {
		tma_expr_free(p);
		return NULL;
	}
	p->bad = ps.bad;
	return p;
}

int tma_expr_nrefs(const struct tma_expr_prog *p)
{
	return p->nref;
}

struct tma_expr_ref *tma_expr_ref_at(struct tma_expr_prog *p, int i)
{
	return &p->refs[i];
}

/* ---------------- evaluation: perf 6.12's arithmetic ---------------- */

static struct tma_expr_val mk(double v, const struct tma_expr_val *a, const struct tma_expr_val *b)
{
	struct tma_expr_val r = { .v = v };

	if (a) {
		r.ids = a->ids;
		r.div0 = a->div0;
	}
	if (b) {
		tma_ids_or(&r.ids, &b->ids);
		r.div0 |= b->div0;
	}
	return r;
}

static struct tma_expr_val nanval(void)
{
	return mk(NAN, NULL, NULL);
}

/* perf's is_const(): during compute_ids NaN is "bottom"; inf is not constant either */
static bool is_const(double v)
{
	return isfinite(v);
}

static bool is_zero(double v)
{
	return fpclassify(v) == FP_ZERO;
}

static struct tma_expr_val resolve(struct tma_expr_ctx *ctx, const struct tma_expr_ref *ref, bool *abort)
{
	struct tma_expr_val v = nanval();
	int r = ctx->resolve_ref ? ctx->resolve_ref(ctx, ref, &v) : ctx->resolve(ctx, ref->kind, ref->id, &v);

	if (r != 0) {
		if (ref->kind == TMA_EXPR_LITERAL)
			*abort = true; /* perf's lexer: an unknown literal is EXPR_ERROR */
		v.v = NAN;	/* ids kept: the resolver may say which event was asked for */
	}
	return v;
}

/* (long)v without undefined behaviour for values outside long's range */
static long to_long(double v)
{
	if (isnan(v))
		return LONG_MIN;	/* what x86's cvttsd2si gives perf */
	if (v >= 9.2e18)
		return LONG_MAX;
	if (v <= -9.2e18)
		return LONG_MIN;
	return (long)v;
}

static double lmod(double a, double b)
{
	long x = to_long(a), y = to_long(b);
	return y == -1 || y == 0 ? 0 : (double)(x % y);
}

/* '|' '&' '^': logical on "is zero"; perf folds a constant (finite) operand in both passes */
static struct tma_expr_val logic(char op, struct tma_expr_val a, struct tma_expr_val b)
{
	bool ca = is_const(a.v), cb = is_const(b.v);

	if (op == '^') {
		if (ca && cb)
			return mk(is_zero(a.v) != is_zero(b.v), NULL, NULL);
		return mk(NAN, &a, &b);
	}
	/* '|': a non-zero constant decides 1; '&': a zero constant decides 0 */
	bool decider = op == '|';
	if (ca && cb)
		return mk(op == '|' ? !(is_zero(a.v) && is_zero(b.v)) : (!is_zero(a.v) && !is_zero(b.v)), NULL, NULL);
	if (ca)
		return !is_zero(a.v) == decider ? mk(decider, NULL, NULL) : b;
	if (cb)
		return !is_zero(b.v) == decider ? mk(decider, NULL, NULL) : a;
	return mk(NAN, &a, &b);
}

static struct tma_expr_val binop(bool plan, bool *abort, char op, struct tma_expr_val a, struct tma_expr_val b)
{
	bool consts = is_const(a.v) && is_const(b.v);

	switch (op) {
	case '|':
	case '&':
	case '^':
		return logic(op, a, b);
	case '/':
		if (is_zero(b.v)) {
			/* perf 6.12: NaN; while planning the numerator's events are not needed */
			struct tma_expr_val r = plan ? mk(NAN, &b, NULL) : mk(NAN, &a, &b);
			r.div0 = true;
			return r;
		}
		if (!plan || consts)
			return mk(a.v / b.v, &a, &b);
		return mk(NAN, &a, &b);
	case '%':
		if (is_zero(b.v)) {
			*abort = true;
			return mk(NAN, &a, &b);
		}
		if (!plan || consts)
			return mk(lmod(a.v, b.v), &a, &b);
		return mk(NAN, &a, &b);
	}
	/* BINARY_OP: '<' '>' '+' '-' '*' */
	if (plan && !consts)
		return mk(NAN, &a, &b);
	if (isnan(a.v) || isnan(b.v))
		return mk(NAN, &a, &b);
	switch (op) {
	case '<': return mk(a.v < b.v, &a, &b);
	case '>': return mk(a.v > b.v, &a, &b);
	case '+': return mk(a.v + b.v, &a, &b);
	case '-': return mk(a.v - b.v, &a, &b);
	case '*': return mk(a.v * b.v, &a, &b);
	}
	return nanval();
}

static struct tma_expr_val minmax(bool plan, bool ismin, struct tma_expr_val a, struct tma_expr_val b)
{
	if (plan)
		return mk(NAN, &a, &b);
	if (ismin)
		return mk(a.v < b.v ? a.v : b.v, &a, &b);
	return mk(a.v > b.v ? a.v : b.v, &a, &b);
}

static struct tma_expr_val dratio(bool plan, struct tma_expr_val a, struct tma_expr_val b)
{
	if (is_zero(b.v))
		return mk(0.0, &b, NULL);	/* the numerator is not needed */
	if (!plan || (is_const(a.v) && is_const(b.v)))
		return mk(a.v / b.v, &a, &b);
	return mk(NAN, &a, &b);
}

/* "a if c else b" */
static struct tma_expr_val ifelse(bool plan, struct tma_expr_val a, struct tma_expr_val c, struct tma_expr_val b)
{
	if (is_zero(c.v))
		return plan ? b : mk(b.v, &b, &c);
	if (!plan)
		return mk(a.v, &a, &c);
	if (is_const(c.v))
		return a;
	if (a.v == b.v)	/* the same constant either way: no event needed */
		return mk(a.v, NULL, NULL);
	struct tma_expr_val r = mk(NAN, &a, &b);
	tma_ids_or(&r.ids, &c.ids);
	r.div0 |= c.div0;
	return r;
}

int tma_expr_run(struct tma_expr_ctx *ctx, const struct tma_expr_prog *p, struct tma_expr_val *out,
		 char *err, size_t errlen)
{
	struct tma_expr_val st[p->maxdepth + 1];
	bool plan = ctx->planning, abort = false;
	int sp = 0;

	if (err && errlen)
		err[0] = 0;
	if (ctx->depth > 32) {
		if (err)
			err_set(err, errlen, "metric expression: references nested too deeply");
		*out = nanval();
		return -1;
	}
	if (p->bad) {
		/* perf's parser resolved what came before the error */
		for (int i = 0; i < p->n; i++)
			if (p->code[i].op == I_REF)
				resolve(ctx, &p->refs[p->code[i].ref], &abort);
		if (err)
			err_set(err, errlen, "%s", p->err);
		*out = nanval();
		return -1;
	}
	for (int i = 0; i < p->n; i++) {
		const struct insn *in = &p->code[i];
		switch (in->op) {
		case I_NUM:
			st[sp++] = mk(in->num, NULL, NULL);
			break;
		case I_REF:
			st[sp++] = resolve(ctx, &p->refs[in->ref], &abort);
			break;
		case I_NEG:
			st[sp - 1].v = -st[sp - 1].v;
			break;
		case I_BIN:
			sp--;
			st[sp - 1] = binop(plan, &abort, in->bop, st[sp - 1], st[sp]);
			break;
		case I_MIN:
		case I_MAX:
			sp--;
			st[sp - 1] = minmax(plan, in->op == I_MIN, st[sp - 1], st[sp]);
			break;
		case I_DRATIO:
			sp--;
			st[sp - 1] = dratio(plan, st[sp - 1], st[sp]);
			break;
		case I_IF:
			sp -= 2;
			st[sp - 1] = ifelse(plan, st[sp - 1], st[sp], st[sp + 1]);
			break;
		}
	}
	*out = sp == 1 ? st[0] : nanval();
	if (abort) {
		out->v = NAN;
		return 1;
	}
	return 0;
}

int tma_expr_eval(struct tma_expr_ctx *ctx, const char *expr, struct tma_expr_val *out,
		  char *err, size_t errlen)
{
	struct tma_expr_prog *p = tma_expr_compile(expr);

	if (!p) {
		if (err && errlen)
			err_set(err, errlen, "metric expression: out of memory compiling it");
		*out = nanval();
		return -1;
	}
	int r = tma_expr_run(ctx, p, out, err, errlen);
	tma_expr_free(p);
	return r;
}
