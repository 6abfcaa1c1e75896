// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * `perf stat -x,` CSV: per line
 *   [prefix,...] VALUE,UNIT,EVENT,RUN_TIME,PCT_RUNNING[,METRIC_VALUE,METRIC_UNIT]
 * VALUE may be "<not counted>" or "<not supported>"; EVENT may hold unquoted
 * commas inside pmu/.../ (cpu/event=0x3c,umask=0x0/); prefixes come from -I
 * (timestamp), -A (CPU), --per-thread (comm-pid), --per-core/socket (id, count).
 * Extra metrics of one event follow on lines with the first five fields empty:
 *   ,,,,,METRIC_VALUE,METRIC_UNIT
 * Lines starting with '#' and blank lines are ignored.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "perf_csv.h"

#define MAXF 64

struct field {
	const char *s;
	size_t len;
	int col;	/* 1-based column */
};

static bool is_num(const struct field *f)
{
	char buf[64], *end;

	if (!f->len || f->len >= sizeof(buf))
		return false;
	memcpy(buf, f->s, f->len);
	buf[f->len] = 0;
	strtod(buf, &end);
	return *end == 0 && (isdigit((unsigned char)buf[0]) || buf[0] == '-' || buf[0] == '.' || buf[0] == '+');
}

static double num(const struct field *f)
{
	char buf[64];
	size_t n = f->len < sizeof(buf) - 1 ? f->len : sizeof(buf) - 1;
	memcpy(buf, f->s, n);
	buf[n] = 0;
	return strtod(buf, NULL);
}

static bool is_eq(const struct field *f, const char *s)
{
	return f->len == strlen(s) && !memcmp(f->s, s, f->len);
}

static bool value_like(const struct field *f)
{
	return is_num(f) || is_eq(f, "<not counted>") || is_eq(f, "<not supported>");
}

static bool num_or_empty(const struct field *f)
{
	return !f->len || is_num(f);
}

static int count_slash(const struct field *f)
{
	int n = 0;
	for (size_t i = 0; i < f->len; i++)
		n += f->s[i] == '/';
	return n;
}

int perf_csv_find(const struct perf_csv *c, const char *name)
{
	for (int i = 0; i < c->n; i++)
		if (!strcmp(c->ev[i].name, name))
			return i;
	return -1;
}

static void add_metric(struct perf_csv *out, const struct field *v, const struct field *u)
{
	if (!v->len || !u->len || out->nmetric >= PERF_CSV_MAX_METRICS || !is_num(v))
		return;
	/* unit "%  tma_backend_bound" or "insn per cycle": keep the last word when it looks like a metric name */
	const char *e = u->s + u->len, *b = e;
	while (b > u->s && !isspace((unsigned char)b[-1]))
		b--;
	size_t n = (size_t)(e - b);
	if (!n || n >= sizeof(out->metric[0].name) || !memchr(b, '_', n))
		return;
	struct perf_csv_metric *m = &out->metric[out->nmetric++];
	memcpy(m->name, b, n);
	m->name[n] = 0;
	m->value = num(v);
}

static int parse_line(const char *line, size_t len, int lineno, struct perf_csv *out, char *err, size_t errlen)
{
	struct field f[MAXF];
	int nf = 0;
	size_t start = 0;

	for (size_t i = 0; i <= len; i++) {
		if (i == len || line[i] == ',') {
			if (nf == MAXF) {
				snprintf(err, errlen, "line %d, column %zu: too many fields", lineno, i + 1);
				return -EINVAL;
			}
			f[nf].s = line + start;
			f[nf].len = i - start;
			f[nf].col = (int)start + 1;
			nf++;
			start = i + 1;
		}
	}
	/* metric-only continuation line: five empty fields, then value, unit */
	if (nf >= 7 && !f[0].len && !f[1].len && !f[2].len && !f[3].len && !f[4].len) {
		add_metric(out, &f[5], &f[6]);
		return 0;
	}
	for (int o = 0; o <= 3 && o + 2 < nf; o++) {
		if (!value_like(&f[o]))
			continue;
		/* event name: join fields while the pmu/.../ slashes are unbalanced */
		int e = o + 2, last = e, slashes = count_slash(&f[e]);
		while (slashes % 2 && last + 1 < nf)
			slashes += count_slash(&f[++last]);
		if (!f[e].len || slashes % 2 || is_num(&f[e]))
			continue;
		int r = last + 1, p = last + 2;
		if ((r < nf && !num_or_empty(&f[r])) || (p < nf && !num_or_empty(&f[p])))
			continue;
		/* found */
		size_t nlen = (size_t)(f[last].s + f[last].len - f[e].s);
		if (nlen >= sizeof(out->ev[0].name)) {
			snprintf(err, errlen, "line %d, column %d: event name too long", lineno, f[e].col);
			return -EINVAL;
		}
		char name[sizeof(out->ev[0].name)];
		memcpy(name, f[e].s, nlen);
		name[nlen] = 0;
		int idx = perf_csv_find(out, name);
		if (idx < 0) {
			if (out->n >= PERF_CSV_MAX_EVENTS) {
				snprintf(err, errlen, "line %d, column %d: more than %d distinct events", lineno, f[e].col,
					 PERF_CSV_MAX_EVENTS);
				return -E2BIG;
			}
			idx = out->n++;
			struct perf_csv_event *ev = &out->ev[idx];
			memset(ev, 0, sizeof(*ev));
			snprintf(ev->name, sizeof(ev->name), "%s", name);
			ev->pct = 100;
			ev->line = lineno;
		}
		struct perf_csv_event *ev = &out->ev[idx];
		ev->lines++;
		if (is_eq(&f[o], "<not counted>"))
			ev->not_counted = true;
		else if (is_eq(&f[o], "<not supported>"))
			ev->not_supported = true;
		else
			ev->value += num(&f[o]);
		if (r < nf && f[r].len)
			ev->run_ns += num(&f[r]);
		if (p < nf && f[p].len && num(&f[p]) < ev->pct)
			ev->pct = num(&f[p]);
		if (p + 2 < nf)
			add_metric(out, &f[p + 1], &f[p + 2]);
		return 0;
	}
	/* say where it went wrong: the first field that should be a count */
	int col = 1;
	for (int i = 0; i < nf && i <= 3; i++)
		if (!value_like(&f[i]) && f[i].len) {
			col = f[i].col;
			break;
		}
	snprintf(err, errlen, "line %d, column %d: not a perf stat -x, line "
		 "(expected COUNT,UNIT,EVENT,RUN_TIME,PERCENT_RUNNING[,METRIC,UNIT]): '%.60s'",
		 lineno, col, line[0] ? line : "");
	return -EINVAL;
}

int perf_csv_parse(const char *text, size_t len, struct perf_csv *out, char *err, size_t errlen)
{
	size_t i = 0;
	int lineno = 0;

	memset(out, 0, sizeof(*out));
	while (i < len) {
		size_t e = i;
		while (e < len && text[e] != '\n')
			e++;
		lineno++;
		size_t l = e - i;
		if (l && text[i + l - 1] == '\r')
			l--;
		char buf[4096];
		if (l >= sizeof(buf)) {
			snprintf(err, errlen, "line %d, column 1: line too long (%zu bytes)", lineno, l);
			return -EINVAL;
		}
		memcpy(buf, text + i, l);
		buf[l] = 0;
		if (memchr(buf, 0, l)) {
			snprintf(err, errlen, "line %d, column %d: NUL byte", lineno, (int)strlen(buf) + 1);
			return -EINVAL;
		}
		size_t k = 0;
		while (k < l && isspace((unsigned char)buf[k]))
			k++;
		if (k < l && buf[k] != '#') {
			int r = parse_line(buf, l, lineno, out, err, errlen);
			if (r)
				return r;
		}
		i = e + 1;
	}
	out->lines = lineno;
	return 0;
}

int perf_csv_load(const char *path, struct perf_csv *out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char e2[320];

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (n == cap) {
			if (cap >= (64u << 20)) {
				free(buf);
				fclose(f);
				snprintf(err, errlen, "%s: larger than 64 MiB", path);
				return -EFBIG;
			}
			buf = realloc(buf, cap *= 2);
		}
		size_t r = fread(buf + n, 1, cap - n, f);
		if (!r)
			break;
		n += r;
	}
	fclose(f);
	int r = perf_csv_parse(buf, n, out, e2, sizeof(e2));
	free(buf);
	if (r)
		snprintf(err, errlen, "%s: %s", path, e2);
	return r;
}
