// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/diff_rules.h"
#include "lib/warn.h"

static const char *const kinds[DROW_KINDS] = { "run", "process", "thread", "function", "iteration" };

const char *diff_kind_name(enum drow_kind k)
{
	return k < DROW_KINDS ? kinds[k] : "?";
}

static bool metric_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '/' || c == ':' || c == '.' || c == '=' ||
	       c == '[' || c == ']';	/* iteration.calls[LIB:FUNC] */
}

/* "[scope[glob].]metric" */
static int parse_lhs(struct diff_rule *r, const char *s, size_t len, char *err, size_t errlen)
{
	const char *end = s + len, *m = s;

	r->scope = -1;
	for (int k = 0; k < DROW_KINDS; k++) {
		size_t kl = strlen(kinds[k]);
		const char *p = s;

		if ((size_t)(end - s) <= kl || strncmp(s, kinds[k], kl))
			continue;
		p = s + kl;
		if (*p == 's')	/* plural */
			p++;
		if (*p == '[') {
			const char *rb = memchr(p, ']', end - p);

			if (!rb || rb == p + 1 || (size_t)(rb - p - 1) >= sizeof(r->glob)) {
				err_set(err, errlen, "budget '%s': expected %s[GLOB].METRIC, e.g. thread[gt-*].oncpu_ns>+5%%",
					r->text, kinds[k]);
				return -EINVAL;
			}
			memcpy(r->glob, p + 1, rb - p - 1);
			r->glob[rb - p - 1] = 0;
			p = rb + 1;
			if (*p != '.') {
				err_set(err, errlen, "budget '%s': expected '.' and a metric after %s[%s]", r->text,
					kinds[k], r->glob);
				return -EINVAL;
			}
		}
		if (*p != '.')
			continue;	/* a metric that starts like a scope */
		r->scope = k;
		m = p + 1;
		break;
	}
	if (m >= end || (size_t)(end - m) >= sizeof(r->metric)) {
		err_set(err, errlen, "budget '%s': no metric before the comparison (e.g. oncpu_ns>+5%%)", r->text);
		return -EINVAL;
	}
	for (const char *p = m; p < end; p++)
		if (!metric_char(*p)) {
			err_set(err, errlen, "budget '%s': bad character '%c' in the metric name", r->text, *p);
			return -EINVAL;
		}
	memcpy(r->metric, m, end - m);
	r->metric[end - m] = 0;
	return 0;
}

static int parse_one(struct diff_rule *r, const char *s, char *err, size_t errlen)
{
	const char *op = strpbrk(s, "<>"), *v;
	char *end;

	if (!op) {
		err_set(err, errlen, "budget '%s': no comparison: expected METRIC>VALUE or METRIC<VALUE, "
			"e.g. tma_backend_bound>+5pp or wall_ns>+5%%", r->text);
		return -EINVAL;
	}
	if (parse_lhs(r, s, op - s, err, errlen))
		return -EINVAL;
	r->op = *op;
	v = op + 1;
	if (*v == '=') {
		r->or_equal = true;
		v++;
	}
	if (*v == '<' || *v == '>') {
		err_set(err, errlen, "budget '%s': doubled comparison '%c%c'", r->text, *op, *v);
		return -EINVAL;
	}
	errno = 0;
	r->value = strtod(v, &end);
	if (end == v || errno || !isfinite(r->value) || isspace((unsigned char)*v)) {
		err_set(err, errlen, "budget '%s': expected a number after '%c', e.g. +5%%, -10%%, +3pp or 1000000",
			r->text, *op);
		return -EINVAL;
	}
	if (!strcmp(end, "%"))
		r->unit = UNIT_PCT;
	else if (!strcmp(end, "pp"))
		r->unit = UNIT_PP;
	else if (!*end)
		r->unit = UNIT_ABS;
	else {
		err_set(err, errlen, "budget '%s': unknown unit '%s' (use %% for relative, pp for TMA percentage points, "
			"or none for absolute)", r->text, end);
		return -EINVAL;
	}
	if (r->unit == UNIT_PP && strncmp(r->metric, "tma_", 4)) {
		err_set(err, errlen, "budget '%s': pp (percentage points) applies to TMA nodes (tma_*), not to %s; "
			"use %% for a relative change", r->text, r->metric);
		return -EINVAL;
	}
	return 0;
}

int diff_rules_parse(const char *spec, struct diff_rule **rules, int *n, char *err, size_t errlen)
{
	char *copy = strdup(spec), *rest = copy, *tok;
	struct diff_rule *v = NULL;
	int cnt = 0;

	*rules = NULL;
	*n = 0;
	if (!copy)
		return -ENOMEM;
	/* event names hold commas only inside pmu/.../ terms, which budgets do not name */
	while ((tok = strsep(&rest, ","))) {
		struct diff_rule *nv = realloc(v, (cnt + 1) * sizeof(*v));
		char *t = tok, *e;

		if (!nv)
			goto nomem;
		v = nv;
		while (isspace((unsigned char)*t))
			t++;
		e = t + strlen(t);
		while (e > t && isspace((unsigned char)e[-1]))
			*--e = 0;
		memset(&v[cnt], 0, sizeof(v[cnt]));
		snprintf(v[cnt].text, sizeof(v[cnt].text), "%s", t);
		if (!*t) {
			if (!cnt && !rest)
				break;	/* the whole spec is empty: said below */
			err_set(err, errlen, "--fail-on '%s': empty budget between commas", spec);
			goto bad;
		}
		if (strchr(t, ' ')) {
			err_set(err, errlen, "budget '%s': no spaces inside a budget (e.g. wall_ns>+5%%)", t);
			goto bad;
		}
		if (parse_one(&v[cnt], t, err, errlen))
			goto bad;
		cnt++;
	}
	if (!cnt) {
		err_set(err, errlen, "--fail-on '%s': no budget (e.g. 'tma_backend_bound>+5pp,wall_ns>+5%%')", spec);
		goto bad;
	}
	free(copy);
	*rules = v;
	*n = cnt;
	return 0;
nomem:
	err_set(err, errlen, "out of memory parsing --fail-on");
bad:
	free(copy);
	free(v);
	return -EINVAL;
}

bool diff_rule_delta(const struct diff_rule *r, double base, double now, double *delta)
{
	switch (r->unit) {
	case UNIT_PCT:
		if (base == 0)
			return false;
		*delta = 100.0 * (now - base) / fabs(base);
		return true;
	case UNIT_PP:
	case UNIT_ABS:
	default:
		*delta = now - base;
		return true;
	}
}

bool diff_rule_broken(const struct diff_rule *r, double d)
{
	if (r->op == '>')
		return r->or_equal ? d >= r->value : d > r->value;
	return r->or_equal ? d <= r->value : d < r->value;
}
