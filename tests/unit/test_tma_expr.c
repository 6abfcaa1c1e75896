// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The metric-expression evaluator against perf 6.12's grammar rules
 * (tools/perf/util/expr.y and expr.l of the perf `make deps` installs), case by
 * case: precedence, if/else, d_ratio, min/max with NaN as C computes them,
 * division by zero giving NaN (and '%' by zero aborting), the logical
 * '|' '&' '^' with constant folding, unknown identifiers and literals, the
 * NaN keyword, escapes; and the planning pass (perf's compute_ids): which
 * events a metric needs with the literals known.
 */
#include <math.h>
#include <string.h>
#include <strings.h>
#include "check.h"
#include "tma/tma_expr.h"

/* events: A=10 B=4 Z=0 N=NaN(<not supported>); literals #SMT_on=1 #zero=0 */
static const char *const evname[] = { "A", "B", "Z", "N", "cpu/EV.X,cmask=1,edge/", "topdown-be-bound",
				      "EXE_ACTIVITY.1_PORTS_UTIL", NULL };
static const double evval[] = { 10, 4, 0, NAN, 7, 3, 5 };

static int resolve(struct tma_expr_ctx *x, enum tma_expr_kind k, const char *id, struct tma_expr_val *out)
{
	memset(out, 0, sizeof(*out));
	if (k == TMA_EXPR_LITERAL) {
		if (!strcasecmp(id, "SMT_on")) { out->v = 1; return 0; }
		if (!strcasecmp(id, "zero")) { out->v = 0; return 0; }
		return -1;
	}
	for (int i = 0; evname[i]; i++)
		if (!strcmp(id, evname[i])) {
			tma_ids_add(&out->ids, i);
			out->v = x->planning ? NAN : evval[i];
			return 0;
		}
	return -1;
}

static double ev(const char *s, int *rc)
{
	struct tma_expr_ctx c = { .resolve = resolve };
	struct tma_expr_val v;
	char err[200];

	*rc = tma_expr_eval(&c, s, &v, err, sizeof(err));
	return v.v;
}

/* the events the planning pass keeps, as a string "A,B" */
static const char *needs(const char *s)
{
	static char buf[128];
	struct tma_expr_ctx c = { .resolve = resolve, .planning = true };
	struct tma_expr_val v;

	tma_expr_eval(&c, s, &v, NULL, 0);
	buf[0] = 0;
	for (int i = 0; evname[i]; i++)
		if (tma_ids_has(&v.ids, i))
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", buf[0] ? "," : "", evname[i]);
	return buf;
}

static bool is(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

int main(void)
{
	int rc;

	/* grammar */
	check(ev("A + B * 2", &rc) == 18 && rc == 0, "precedence: * over +");
	check(ev("A - B - 2", &rc) == 4, "'-' is left associative");
	check(ev("-A * 2", &rc) == -20, "unary minus binds tightest");
	check(ev("A / B", &rc) == 2.5, "division");
	check(ev("A if Z else B", &rc) == 4, "if: a zero condition takes else");
	check(ev("A if B > 3 else B", &rc) == 10, "if with a comparison");
	check(ev("1 if #SMT_on else 2", &rc) == 1, "#SMT_on literal");
	check(ev("A if Z else B if 1 else 3", &rc) == 4, "else-if chains to the right");
	check(ev("min(A, B)", &rc) == 4 && ev("max(A, B)", &rc) == 10, "min/max");
	check(ev("cpu@EV.X\\,cmask\\=1\\,edge@ * 2", &rc) == 14, "escaped pmu@terms@ identifier, '@' read as '/'");
	check(ev("topdown\\-be\\-bound + 1", &rc) == 4, "escaped '-' in an identifier");
	check(ev("EXE_ACTIVITY.1_PORTS_UTIL + 1e2", &rc) == 105, "identifier with digits; 1e2 is a number");
	check(ev("0.5 * 4", &rc) == 2 && ev(".5 * 4", &rc) == 2, "decimal numbers");
	ev("A + * B", &rc);
	check(rc == -1, "syntax error reported");
	{
		struct tma_expr_ctx c = { .resolve = resolve };
		struct tma_expr_val v;
		char err[200];
		tma_expr_eval(&c, "A + (B * ", &v, err, sizeof(err));
		check(strstr(err, "position") != NULL, "a syntax error names a position: %s", err);
	}

	/* perf 6.12 arithmetic */
	check(isnan(ev("A / Z", &rc)) && rc == 0, "x/0 is NaN and the metric goes on (expr.y since 6.5: no YYABORT)");
	check(ev("max(A / Z, 0)", &rc) == 0 && rc == 0, "max(NaN, 0) = 0: C's a > b ? a : b");
	check(isnan(ev("max(0, A / Z)", &rc)), "max(0, NaN) = NaN");
	check(ev("min(A / Z, B)", &rc) == 4 && isnan(ev("min(B, A / Z)", &rc)), "min(NaN, b) = b, min(b, NaN) = NaN");
	{
		struct tma_expr_ctx c = { .resolve = resolve };
		struct tma_expr_val v;
		tma_expr_eval(&c, "max(A / Z, 0)", &v, NULL, 0);
		check(v.div0 && v.v == 0, "a division by zero is remembered even when max() hides it");
	}
	check(isnan(ev("A % Z", &rc)) && rc == 1, "'%%' by zero still aborts the metric (YYABORT)");
	check(ev("A % 3", &rc) == 1, "'%%' on (long)");
	check(ev("d_ratio(A, Z)", &rc) == 0 && rc == 0 && ev("d_ratio(A, B)", &rc) == 2.5, "d_ratio(x, 0) = 0");
	check(isnan(ev("N < 3", &rc)) && isnan(ev("N + 1", &rc)) && isnan(ev("N * 0", &rc)),
	      "'<' '+' '*' with a NaN operand are NaN (BINARY_OP)");
	check(ev("A if N else B", &rc) == 10, "a NaN condition counts as true");
	check(isnan(ev("NOPE + 1", &rc)) && rc == 0, "an unknown identifier is NaN, the metric does not abort");
	check(isnan(ev("#bogus_literal + 1", &rc)) && rc == 1, "an unknown literal aborts (expr.l: EXPR_ERROR)");
	check(isnan(ev("NaN", &rc)) && rc == 0 && ev("max(NaN, 2)", &rc) == 2, "NaN is a number (expr.l)");
	/* '|' '&' '^' are logical on zero / non-zero, folding a finite operand */
	check(ev("A | Z", &rc) == 1 && ev("Z | Z", &rc) == 0 && ev("A & B", &rc) == 1 && ev("A & Z", &rc) == 0,
	      "'|' and '&' are logical");
	check(ev("A ^ B", &rc) == 0 && ev("A ^ Z", &rc) == 1, "'^' is logical xor");
	check(ev("N | 1", &rc) == 1 && isnan(ev("N | 0", &rc)) && ev("N & 0", &rc) == 0 && isnan(ev("N & 1", &rc)),
	      "a finite operand decides '|'/'&', else the other operand's value");
	check(isnan(ev("N ^ 1", &rc)) && isnan(ev("N | N", &rc)), "two non-finite operands (or '^' with one) give NaN");
	check(ev("2 > 1 | 0", &rc) == 1 && ev("1 | 0 & 0", &rc) == 1, "precedence: '|' < '^' < '&' < '<' '>'");

	/* planning: the events perf's compute_ids pass keeps */
	check(!strcmp(needs("A + B"), "A,B"), "planning: both operands' events");
	check(!strcmp(needs("A if #SMT_on else B"), "A") && !strcmp(needs("A if #zero else B"), "B"),
	      "planning: a constant condition keeps only the taken branch");
	check(!strcmp(needs("A if B > 1 else N"), "A,B,N"), "planning: an event condition keeps both branches");
	check(!strcmp(needs("2 if B > 1 else 2"), ""), "planning: equal constant branches need no event");
	check(!strcmp(needs("A / #zero"), "") && !strcmp(needs("d_ratio(A, #zero)"), ""),
	      "planning: division by a constant zero drops the numerator's events");
	check(!strcmp(needs("0 * A"), "A"), "planning: 0 * x still counts x (BINARY_OP folds constants only)");
	check(!strcmp(needs("A | 1"), "") && !strcmp(needs("A & #zero"), "") && !strcmp(needs("A & 1"), "A"),
	      "planning: '|' with a non-zero constant, '&' with a zero one need nothing");
	check(!strcmp(needs("max(A, B)"), "A,B") && !strcmp(needs("min(A, 1)"), "A"), "planning: min/max keep both");

	/* compiled = evaluated, including the references before a syntax error */
	static const char *const exprs[] = { "A + B * 2", "max(A / Z, 0)", "A if N else B", "N | 0", "d_ratio(A, Z)",
					     "A % Z", "#bogus + 1", "A + (B *", NULL };
	bool same = true;
	for (int i = 0; exprs[i]; i++) {
		struct tma_expr_ctx c1 = { .resolve = resolve }, c2 = { .resolve = resolve };
		struct tma_expr_val v1, v2;
		struct tma_expr_prog *p = tma_expr_compile(exprs[i]);
		int r1 = tma_expr_eval(&c1, exprs[i], &v1, NULL, 0);
		int r2 = p ? tma_expr_run(&c2, p, &v2, NULL, 0) : -9;
		same &= r1 == r2 && is(v1.v, v2.v) && !memcmp(&v1.ids, &v2.ids, sizeof(v1.ids));
		tma_expr_free(p);
	}
	check(same, "a compiled expression gives what evaluating the string gives");
	return check_exit();
}
