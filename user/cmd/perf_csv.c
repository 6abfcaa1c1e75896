// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * `perf stat -x,` CSV (perf 6.12 util/stat-display.c), per line:
 *   [TIME,][ROWKEY[,N],]VALUE,UNIT,EVENT[,CGROUP][,NOISE%],RUN_TIME,PCT_RUNNING[,METRIC_VALUE,METRIC_UNIT]
 * TIME comes from -I; ROWKEY from -A (CPU3), --per-thread (comm-1234),
 * --per-core (S0-D0-C1 and the number of CPUs), --per-die, --per-socket,
 * --per-node, --per-cache, --per-cluster.  VALUE may be "<not counted>" or
 * "<not supported>"; EVENT may hold unquoted separators inside pmu/.../
 * (cpu/event=0x3c,umask=0x0/); older perf leaves out RUN_TIME and PCT.
 * Extra metrics of one event follow on lines with the count fields empty:
 *   [TIME,][ROWKEY[,N],],,,,METRIC_VALUE,METRIC_UNIT
 * Lines starting with '#' and blank lines are ignored.  The separator is the
 * one -x gave (',' ';' or TAB), found on the first counter line.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cmd/perf_csv.h"
#include "lib/warn.h"

#define MAXF 64
#define RECORD_HINT "record with: perf stat -x, -o FILE -e EVENTS -- COMMAND"

struct field {
	const char *s;
	size_t len;
	int col;	/* 1-based column */
};

/* the parse in progress: hash tables over event names and row keys */
#define EV_HASH 1024
#define ROW_HASH 8192
struct state {
	struct perf_csv *out;
	int lineno;
	int first_line;		/* of the first counter line */
	char first_key[80];
	short ev_slot[EV_HASH];		/* index + 1, 0 empty */
	short row_slot[ROW_HASH];	/* index + 1, 0 empty */
	int rowcap;
	double last_ts;
	int nf, prev_nf;	/* fields of this line, of the last counter line */
	char *err;
	size_t errlen;
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

/* -r N: the noise column "1.23%" */
static bool is_noise(const struct field *f)
{
	struct field g = { f->s, f->len ? f->len - 1 : 0, f->col };
	return f->len > 1 && f->s[f->len - 1] == '%' && is_num(&g);
}

static int count_slash(const struct field *f)
{
	int n = 0;
	for (size_t i = 0; i < f->len; i++)
		n += f->s[i] == '/';
	return n;
}

static unsigned hash(const char *s)
{
	unsigned h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

int perf_csv_find(const struct perf_csv *c, const char *name)
{
	for (int i = 0; i < c->n; i++)
		if (!strcmp(c->ev[i].name, name))
			return i;
	return -1;
}

const char *perf_csv_aggr_name(enum perf_csv_aggr a)
{
	static const char *const names[] = { "", "thread", "CPU", "core", "die", "socket", "node", "cache", "cluster" };
	return (unsigned)a < sizeof(names) / sizeof(names[0]) ? names[a] : "";
}

void perf_csv_free(struct perf_csv *c)
{
	free(c->row);
	c->row = NULL;
	c->nrow = 0;
}

/* ---------------- the first columns: interval, row key ---------------- */

/* ^[0-9]+\.[0-9]+$: perf's -I timestamp */
static bool is_interval(const struct field *f)
{
	size_t i = 0, d1 = 0, d2 = 0;
	while (i < f->len && isdigit((unsigned char)f->s[i]))
		i++, d1++;
	if (i >= f->len || f->s[i] != '.')
		return false;
	for (i++; i < f->len && isdigit((unsigned char)f->s[i]); i++)
		d2++;
	return d1 && d2 && i == f->len;
}

/* does s match pat, where '#' stands for one or more digits? */
static bool shape(const char *s, const char *pat)
{
	while (*pat) {
		if (*pat == '#') {
			if (!isdigit((unsigned char)*s))
				return false;
			while (isdigit((unsigned char)*s))
				s++;
			pat++;
		} else if (*s++ != *pat++) {
			return false;
		}
	}
	return !*s;
}

static enum perf_csv_aggr key_kind(const char *k, bool counted)
{
	if (counted) {	/* the --per-* modes print the number of CPUs after the id */
		if (shape(k, "S#-D#-C#")) return PERF_CSV_CORE;
		if (shape(k, "S#-D#-L#-ID#")) return PERF_CSV_CACHE;
		if (shape(k, "S#-D#-CLS#")) return PERF_CSV_CLUSTER;
		if (shape(k, "S#-D#")) return PERF_CSV_DIE;
		if (shape(k, "S#")) return PERF_CSV_SOCKET;
		if (shape(k, "N#")) return PERF_CSV_NODE;
		return PERF_CSV_GLOBAL;
	}
	if (shape(k, "CPU#"))
		return PERF_CSV_CPU;
	if (shape(k, "S#-D#-C#"))	/* -A with a percore event */
		return PERF_CSV_CORE;
	const char *dash = strrchr(k, '-');
	if (dash && dash > k && shape(dash + 1, "#"))
		return PERF_CSV_THREAD;
	return PERF_CSV_GLOBAL;
}

/* prefix fields f[0..np) -> interval, kind, key; false when they are not perf's */
static bool read_prefix(const struct field *f, int np, bool *has_ts, double *ts,
			enum perf_csv_aggr *kind, char *key, size_t klen)
{
	int p = 0;

	*has_ts = false;
	*kind = PERF_CSV_GLOBAL;
	key[0] = 0;
	if (np > 0 && is_interval(&f[0])) {
		*has_ts = true;
		*ts = num(&f[0]);
		p = 1;
	}
	if (p == np)
		return true;
	/* the key, joined back where a comm held the separator */
	size_t kl = (size_t)(f[np - 1].s + f[np - 1].len - f[p].s);
	if (kl >= klen)
		return false;
	memcpy(key, f[p].s, kl);
	key[kl] = 0;
	*kind = key_kind(key, false);
	if (np - p >= 2 && is_num(&f[np - 1])) {
		size_t l = (size_t)(f[np - 2].s + f[np - 2].len - f[p].s);
		char k2[80];
		snprintf(k2, sizeof(k2), "%.*s", (int)l, f[p].s);
		enum perf_csv_aggr k = key_kind(k2, true);
		if (k != PERF_CSV_GLOBAL) {
			snprintf(key, klen, "%s", k2);
			*kind = k;
		}
	}
	return *kind != PERF_CSV_GLOBAL;
}

/* ---------------- events and rows ---------------- */

static int event_index(struct state *st, const char *name, int col)
{
	struct perf_csv *out = st->out;
	unsigned h = hash(name) % EV_HASH;

	for (; st->ev_slot[h]; h = (h + 1) % EV_HASH)
		if (!strcmp(out->ev[st->ev_slot[h] - 1].name, name))
			return st->ev_slot[h] - 1;
	if (out->n >= PERF_CSV_MAX_EVENTS) {
		snprintf(st->err, st->errlen, "line %d, column %d: more than %d distinct events; split the recording",
			 st->lineno, col, PERF_CSV_MAX_EVENTS);
		return -1;
	}
	struct perf_csv_event *ev = &out->ev[out->n];
	memset(ev, 0, sizeof(*ev));
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	ev->pct = 100;
	ev->line = st->lineno;
	st->ev_slot[h] = (short)(out->n + 1);
	return out->n++;
}

static int row_index(struct state *st, const char *key)
{
	struct perf_csv *out = st->out;
	unsigned h = hash(key) % ROW_HASH;

	for (; st->row_slot[h]; h = (h + 1) % ROW_HASH)
		if (!strcmp(out->row[st->row_slot[h] - 1].key, key))
			return st->row_slot[h] - 1;
	if (out->nrow >= PERF_CSV_MAX_ROWS) {
		snprintf(st->err, st->errlen, "line %d, column 1: more than %d %ss; record fewer (perf stat -t TID, -C CPUS)",
			 st->lineno, PERF_CSV_MAX_ROWS, perf_csv_aggr_name(out->aggr));
		return -1;
	}
	if (out->nrow == st->rowcap) {
		int cap = st->rowcap ? 2 * st->rowcap : 8;
		struct perf_csv_row *r = realloc(out->row, (size_t)cap * sizeof(*r));
		if (!r) {
			snprintf(st->err, st->errlen, "line %d: out of memory", st->lineno);
			return -1;
		}
		out->row = r;
		st->rowcap = cap;
	}
	struct perf_csv_row *r = &out->row[out->nrow];
	snprintf(r->key, sizeof(r->key), "%s", key);
	for (int i = 0; i < PERF_CSV_MAX_EVENTS; i++) {
		r->value[i] = 0;
		r->pct[i] = 100;
		r->flags[i] = 0;
	}
	st->row_slot[h] = (short)(out->nrow + 1);
	return out->nrow++;
}

/* one aggregation mode per file */
static int check_mode(struct state *st, enum perf_csv_aggr kind, const char *key)
{
	struct perf_csv *out = st->out;

	if (!st->first_line) {
		st->first_line = st->lineno;
		snprintf(st->first_key, sizeof(st->first_key), "%s", key);
		out->aggr = kind;
		return 0;
	}
	if (kind == out->aggr)
		return 0;
	snprintf(st->err, st->errlen, "line %d, column 1: %s line '%.40s' among %s lines (line %d: '%.40s'); perf stat "
		 "writes one mode per file: record the aggregated and the per-%s counts to separate files",
		 st->lineno, kind == PERF_CSV_GLOBAL ? "an aggregated" : perf_csv_aggr_name(kind), key,
		 out->aggr == PERF_CSV_GLOBAL ? "aggregated" : perf_csv_aggr_name(out->aggr), st->first_line,
		 st->first_key[0] ? st->first_key : "no prefix",
		 perf_csv_aggr_name(kind == PERF_CSV_GLOBAL ? out->aggr : kind));
	return -EINVAL;
}

static void add_metric(struct perf_csv *out, const struct field *v, const struct field *u, int row)
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
	m->row = row;
}

static int split(const char *line, size_t len, char sep, struct field *f, int *nf)
{
	size_t start = 0;

	*nf = 0;
	for (size_t i = 0; i <= len; i++)
		if (i == len || line[i] == sep) {
			if (*nf == MAXF)
				return -1;
			f[*nf].s = line + start;
			f[*nf].len = i - start;
			f[*nf].col = (int)start + 1;
			(*nf)++;
			start = i + 1;
		}
	return 0;
}

/* a metric-only continuation: [prefix], at least four empty fields, then value and unit
 * (or nothing, where perf could not compute the metric); 1 when the line is not one */
static int continuation(struct state *st, const struct field *f, int nf)
{
	int last = nf - 1, v = -1, u = -1;

	if (last >= 1 && f[last].len && !is_num(&f[last]) && num_or_empty(&f[last - 1])) {
		u = last;
		v = last - 1;
		last -= 2;
	}
	int e = last + 1;
	while (e > 0 && !f[e - 1].len)
		e--;
	if (last + 1 - e < (u >= 0 ? 4 : 2))
		return 1;
	bool ts = false;
	double t;
	enum perf_csv_aggr kind = PERF_CSV_GLOBAL;
	char key[80] = "";
	if (e && !read_prefix(f, e, &ts, &t, &kind, key, sizeof(key)) && !(ts && e == 1))
		return 1;
	int row = -1;
	if (kind != PERF_CSV_GLOBAL) {
		if (check_mode(st, kind, key))
			return -EINVAL;
		if ((row = row_index(st, key)) < 0)
			return -E2BIG;
	}
	if (u >= 0)
		add_metric(st->out, &f[v], &f[u], row);
	return 0;
}

static int parse_line(struct state *st, const char *line, size_t len, char sep)
{
	struct perf_csv *out = st->out;
	struct field f[MAXF];
	int nf, r;

	if (split(line, len, sep, f, &nf)) {
		snprintf(st->err, st->errlen, "line %d: more than %d fields: not a perf stat -x line", st->lineno, MAXF);
		return -EINVAL;
	}
	st->nf = nf;
	if ((r = continuation(st, f, nf)) <= 0)
		return r;
	for (int o = 0; o <= 5 && o + 2 < nf; o++) {
		if (!value_like(&f[o]))
			continue;
		/* event name: join fields while the pmu/.../ slashes are unbalanced */
		int e = o + 2, last = e, slashes = count_slash(&f[e]);
		while (slashes % 2 && last + 1 < nf)
			slashes += count_slash(&f[++last]);
		if (!f[e].len || slashes % 2 || is_num(&f[e]))
			continue;
		int idx = last + 1;
		const struct field *cgroup = NULL;
		if (idx < nf && f[idx].len && !is_num(&f[idx]) && !is_noise(&f[idx]))
			cgroup = &f[idx++];	/* -G */
		if (idx < nf && is_noise(&f[idx]))
			idx++;		/* -r: stddev in percent */
		int run = idx, pct = idx + 1;
		if ((run < nf && !num_or_empty(&f[run])) || (pct < nf && !num_or_empty(&f[pct])))
			continue;
		bool ts;
		double t = 0;
		enum perf_csv_aggr kind;
		char key[80];
		if (o && !read_prefix(f, o, &ts, &t, &kind, key, sizeof(key)) && !(ts && o == 1))
			continue;
		if (!o)
			ts = false, kind = PERF_CSV_GLOBAL, key[0] = 0;
		else if (ts && o == 1)
			kind = PERF_CSV_GLOBAL, key[0] = 0;
		if (cgroup) {	/* per-cgroup counts: the cgroup is (part of) the row key */
			size_t kl = strlen(key);
			snprintf(key + kl, sizeof(key) - kl, "%s%.*s", kl ? " " : "", (int)cgroup->len, cgroup->s);
			if (kind == PERF_CSV_GLOBAL)
				kind = PERF_CSV_THREAD;
		}
		/* found: check it */
		st->nf = nf - (last - e);	/* separators inside the event name do not count */
		size_t nlen = (size_t)(f[last].s + f[last].len - f[e].s);
		if (nlen >= sizeof(out->ev[0].name)) {
			snprintf(st->err, st->errlen, "line %d, column %d: event name longer than %zu bytes", st->lineno,
				 f[e].col, sizeof(out->ev[0].name) - 1);
			return -EINVAL;
		}
		bool nc = is_eq(&f[o], "<not counted>"), ns = is_eq(&f[o], "<not supported>");
		double v = nc || ns ? 0 : num(&f[o]);
		if (!nc && !ns && (!isfinite(v) || v < 0)) {
			snprintf(st->err, st->errlen, "line %d, column %d: count '%.*s' is %s: perf stat never prints one "
				 "(the file was edited or damaged); re-record it", st->lineno, f[o].col, (int)f[o].len,
				 f[o].s, isfinite(v) ? "negative" : "not a finite number");
			return -EINVAL;
		}
		if ((r = check_mode(st, kind, key)))
			return r;
		if (ts && (!out->intervals || t != st->last_ts)) {
			out->intervals++;
			st->last_ts = t;
		}
		char name[sizeof(out->ev[0].name)];
		memcpy(name, f[e].s, nlen);
		name[nlen] = 0;
		int i = event_index(st, name, f[e].col);
		if (i < 0)
			return -E2BIG;
		struct perf_csv_event *ev = &out->ev[i];
		double p = pct < nf && f[pct].len ? num(&f[pct]) : 100;
		ev->lines++;
		ev->not_counted |= nc;
		ev->not_supported |= ns;
		ev->value += v;
		if (run < nf && f[run].len)
			ev->run_ns += num(&f[run]);
		if (p < ev->pct)
			ev->pct = p;
		int row = -1;
		if (kind != PERF_CSV_GLOBAL) {
			if ((row = row_index(st, key)) < 0)
				return -E2BIG;
			struct perf_csv_row *rw = &out->row[row];
			rw->value[i] += v;
			rw->flags[i] |= PERF_CSV_SEEN | (nc ? PERF_CSV_NOT_COUNTED : 0) | (ns ? PERF_CSV_NOT_SUPPORTED : 0);
			if (p < rw->pct[i])
				rw->pct[i] = p;
		}
		if (pct + 2 < nf)
			add_metric(out, &f[pct + 1], &f[pct + 2], row);
		return 0;
	}
	/* --metric-only prints "UNIT  metric_name" headers (or "insn per cycle"), then bare values */
	bool units = nf > 0, named = false;
	for (int i = 0; i < nf; i++) {
		if (!f[i].len)
			continue;
		const char *sp = memchr(f[i].s, ' ', f[i].len);
		if (!sp) {
			units = false;
			continue;
		}
		const char *w = f[i].s + f[i].len;
		while (w > f[i].s && w[-1] != ' ')
			w--;
		named |= memchr(w, '_', (size_t)(f[i].s + f[i].len - w)) != NULL || memmem(f[i].s, f[i].len, " per ", 5);
	}
	units &= named;
	if (units) {
		snprintf(st->err, st->errlen, "line %d: perf stat --metric-only output has no counts to compute from; "
			 "record without --metric-only (perf stat -x, -M GROUP or -e EVENTS)", st->lineno);
		return -EINVAL;
	}
	/* say where it went wrong: the first field that should be a count */
	int col = 1;
	for (int i = 0; i < nf && i <= 3; i++)
		if (!value_like(&f[i]) && f[i].len) {
			col = f[i].col;
			break;
		}
	snprintf(st->err, st->errlen, "line %d, column %d: not a perf stat -x, line "
		 "(expected COUNT,UNIT,EVENT,RUN_TIME,PERCENT_RUNNING[,METRIC,UNIT]): '%.60s'; give the file perf stat -x, -o wrote",
		 st->lineno, col, line[0] ? line : "");
	return -EINVAL;
}

/* the separator -x gave: the first of ',' ';' TAB that makes the line a counter line */
static char find_sep(const char *line, size_t len, int lineno)
{
	static const char seps[] = { ',', ';', '\t' };
	struct perf_csv *probe = calloc(1, sizeof(*probe));
	struct state *s2 = calloc(1, sizeof(*s2));
	char e[8], sep = ',';

	for (size_t i = 0; probe && s2 && i < sizeof(seps); i++) {
		if (!memchr(line, seps[i], len))
			continue;
		perf_csv_free(probe);
		memset(probe, 0, sizeof(*probe));
		memset(s2, 0, sizeof(*s2));
		*s2 = (struct state){ .out = probe, .err = e, .errlen = sizeof(e), .lineno = lineno };
		if (!parse_line(s2, line, len, seps[i])) {
			sep = seps[i];
			break;
		}
	}
	if (probe)
		perf_csv_free(probe);
	free(probe);
	free(s2);
	return sep;
}

int perf_csv_parse(const char *text, size_t len, struct perf_csv *out, char *err, size_t errlen)
{
	struct state *st = calloc(1, sizeof(*st));
	size_t i = 0;
	int r = 0, data = 0;

	perf_csv_free(out);
	memset(out, 0, sizeof(*out));
	if (!st) {
		err_set(err, errlen, "out of memory");
		return -ENOMEM;
	}
	st->out = out;
	st->err = err;
	st->errlen = errlen;
	while (i < len) {
		size_t e = i;
		while (e < len && text[e] != '\n')
			e++;
		st->lineno++;
		size_t l = e - i;
		if (l && text[i + l - 1] == '\r')
			l--;
		char buf[4096];
		if (l >= sizeof(buf)) {
			err_set(err, errlen, "line %d, column 1: line too long (%zu bytes): not a perf stat -x, file", st->lineno, l);
			r = -EINVAL;
			break;
		}
		memcpy(buf, text + i, l);
		buf[l] = 0;
		for (size_t k = 0; k < l; k++)
			if ((unsigned char)buf[k] < 0x20 && buf[k] != '\t') {
				err_set(err, errlen, "line %d, column %zu: binary data (byte 0x%02x): give the text file "
					 "perf stat -x, -o wrote", st->lineno, k + 1, (unsigned char)buf[k]);
				r = -EINVAL;
				goto done;
			}
		size_t k = 0;
		while (k < l && isspace((unsigned char)buf[k]))
			k++;
		if (k < l && buf[k] != '#') {
			if (!data)
				out->sep = find_sep(buf, l, st->lineno);
			data++;
			r = parse_line(st, buf, l, out->sep);
			/* perf ends every line: a last line without its newline and with fewer
			 * fields than the line before was cut short */
			if (e == len && st->prev_nf && st->nf < st->prev_nf) {
				err_set(err, errlen, "line %d: the file ends in the middle of this line (%d fields, the "
					 "counter line before has %d): it was cut short; copy the whole file again",
					 st->lineno, st->nf, st->prev_nf);
				r = -EINVAL;
			}
			if (r)
				break;
			st->prev_nf = st->nf;
		}
		i = e + 1;
	}
	if (!r && !data) {
		err_set(err, errlen, "line %d: %s: no counter lines; %s", st->lineno ? st->lineno : 1,
			 len ? "only comments and blank lines" : "empty file", RECORD_HINT);
		r = -EINVAL;
	}
done:
	out->lines = st->lineno;
	free(st);
	if (r)
		perf_csv_free(out);
	return r;
}

int perf_csv_load(const char *path, struct perf_csv *out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char e2[400];
	struct stat sb;

	if (!f) {
		int e = errno;
		err_set(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
		fclose(f);
		err_set(err, errlen, "%s: is a directory; give the CSV file perf stat -x, -o wrote", path);
		return -EISDIR;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (!buf) {
			fclose(f);
			err_set(err, errlen, "%s: out of memory", path);
			return -ENOMEM;
		}
		if (n == cap) {
			if (cap >= (64u << 20)) {
				free(buf);
				fclose(f);
				err_set(err, errlen, "%s: larger than 64 MiB: not a perf stat -x, file", path);
				return -EFBIG;
			}
			char *nb = realloc(buf, cap *= 2);
			if (!nb)
				free(buf);
			buf = nb;
			continue;
		}
		size_t r = fread(buf + n, 1, cap - n, f);
		if (!r)
			break;
		n += r;
	}
	if (ferror(f)) {
		int e = errno;
		free(buf);
		fclose(f);
		err_set(err, errlen, "%s: %s", path, strerror(e));
		return -EIO;
	}
	fclose(f);
	int r = perf_csv_parse(buf, n, out, e2, sizeof(e2));
	free(buf);
	if (r)
		err_set(err, errlen, "%s: %s", path, e2);
	return r;
}
