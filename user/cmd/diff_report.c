// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The rows of 'tmabpf diff', read from untrusted JSON reports.  See diff_report.h. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>
#include "cmd/diff_report.h"
#include "lib/grow.h"
#include "lib/suggest.h"
#include "lib/u64map.h"
#include "lib/version.h"
#include "lib/warn.h"

#define MAX_COMM 256		/* a comm has 15 bytes; a hand-edited one a little more */
#define MAX_TEXT 65536		/* module paths, demangled symbols, event names */

static const char *const row_fields[] = {
	"oncpu_ns", "offcpu_ns", "offcpu_blocked_ns", "offcpu_runqueue_ns", "switches_voluntary",
	"switches_involuntary", "migrations", "calls", "returns", "unmatched", "wall_ns", "self_oncpu_ns",
};
#define NR_FIELDS (sizeof(row_fields) / sizeof(row_fields[0]))

struct ctx {
	struct diff_rows *rows;
	int side;
	const char *what;	/* the file, for messages */
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 2, 3))) static int bad(struct ctx *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	err_set(c->err, c->errlen, "%s: %s", c->what, msg);
	return -EINVAL;
}

static const char *type_of(json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null: return "null";
	case json_type_boolean: return "a boolean";
	case json_type_double:
	case json_type_int: return "a number";
	case json_type_object: return "an object";
	case json_type_array: return "an array";
	case json_type_string: return "a string";
	}
	return "?";
}

static bool is_number(json_object *v)
{
	return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

/* o[key] of type want (json_type_double: any number); *v NULL when absent and not required. */
static int field(struct ctx *c, json_object *o, const char *where, const char *key, json_type want, bool required,
		 json_object **v)
{
	static const char *const wanted[] = {
		[json_type_null] = "null", [json_type_boolean] = "a boolean", [json_type_double] = "a number",
		[json_type_int] = "an integer", [json_type_object] = "an object", [json_type_array] = "an array",
		[json_type_string] = "a string",
	};

	*v = NULL;
	if (!json_object_object_get_ex(o, key, v) || !*v) {
		*v = NULL;
		return required ? bad(c, "%s has no \"%s\"", where, key) : 0;
	}
	if (want == json_type_double ? !is_number(*v) : !json_object_is_type(*v, want))
		return bad(c, "%s.%s is %s, expected %s", where, key, type_of(*v), wanted[want]);
	return 0;
}

/* A finite number (not negative when count); NaN and Infinity, which json-c reads, are refused. */
static int number(struct ctx *c, json_object *v, const char *where, const char *key, bool count, double *out)
{
	if (!is_number(v))
		return bad(c, "%s.%s is %s, expected a number", where, key, type_of(v));
	*out = json_object_get_double(v);
	if (!isfinite(*out))
		return bad(c, "%s.%s is %s, expected a finite number", where, key, isnan(*out) ? "NaN" : "infinite");
	if (count && *out < 0)
		return bad(c, "%s.%s is %g: a count or time cannot be negative", where, key, *out);
	return 0;
}

/* A string of at most max bytes; dflt when absent. */
static int text(struct ctx *c, json_object *o, const char *where, const char *key, size_t max, bool required,
		const char *dflt, const char **out)
{
	json_object *v;
	int r = field(c, o, where, key, json_type_string, required, &v);

	if (r)
		return r;
	if (!v) {
		*out = dflt;
		return 0;
	}
	if ((size_t)json_object_get_string_len(v) > max)
		return bad(c, "%s.%s is %d bytes long, more than %zu", where, key, json_object_get_string_len(v), max);
	*out = json_object_get_string(v);
	if (strlen(*out) != (size_t)json_object_get_string_len(v))
		return bad(c, "%s.%s holds a NUL byte", where, key);
	return 0;
}

/* A pid or tid: a non-negative integer. */
static int id(struct ctx *c, json_object *o, const char *where, const char *key, uint64_t *out)
{
	json_object *v;
	double d;
	int r = field(c, o, where, key, json_type_double, true, &v);

	if (r || (r = number(c, v, where, key, true, &d)))
		return r;
	if (d != floor(d) || d > 9007199254740992.0)
		return bad(c, "%s.%s is %g, expected an integer id", where, key, d);
	*out = (uint64_t)d;
	return 0;
}

/* ---- metrics of a row -------------------------------------------------- */

static int push(struct ctx *c, struct diff_side *s, unsigned int *cap, const char *name, double v)
{
	const char *n = strmap_intern(&c->rows->names, name, (void *)1);

	if (!n)
		return -ENOMEM;
	if (s->n == *cap) {
		unsigned int nc = *cap ? *cap * 2 : 16;
		struct diff_metric *m = realloc(s->m, nc * sizeof(*m));

		if (!m)
			return -ENOMEM;
		s->m = m;
		*cap = nc;
	}
	s->m[s->n++] = (struct diff_metric){ .name = n, .v = v };
	return 0;
}

/* Fields, counters (by event name) and TMA nodes of a process, thread or function object. */
static int row_metrics(struct ctx *c, json_object *o, const char *where, struct diff_side *s)
{
	unsigned int cap = 0;
	json_object *v, *sub;
	char w[96];
	double d;
	int r;

	memset(s, 0, sizeof(*s));
	s->present = true;
	for (size_t f = 0; f < NR_FIELDS; f++) {
		if (!json_object_object_get_ex(o, row_fields[f], &v))
			continue;
		if ((r = number(c, v, where, row_fields[f], true, &d)) || (r = push(c, s, &cap, row_fields[f], d)))
			return r;
	}
	if ((r = field(c, o, where, "counters", json_type_object, false, &sub)))
		return r;
	snprintf(w, sizeof(w), "%s.counters", where);
	if (sub) {
		json_object_object_foreach(sub, k, val) {
			if (strlen(k) > MAX_COMM)
				return bad(c, "%s has an event name of %zu bytes", w, strlen(k));
			if ((r = number(c, val, w, k, true, &d)) || (r = push(c, s, &cap, k, d)))
				return r;
		}
	}
	s->n_sums = s->n;
	if ((r = field(c, o, where, "tma", json_type_object, false, &sub)))
		return r;
	snprintf(w, sizeof(w), "%s.tma", where);
	if (sub) {
		json_object_object_foreach(sub, k, val) {
			if (!is_number(val))
				continue;	/* null: not computable; other keys: not nodes */
			if (strlen(k) > MAX_COMM)
				return bad(c, "%s has a node name of %zu bytes", w, strlen(k));
			if ((r = number(c, val, w, k, false, &d)) || (r = push(c, s, &cap, k, d)))
				return r;
		}
	}
	if (s->n && s->n < cap) {	/* 50k threads x 2 reports: keep what is used */
		struct diff_metric *m = realloc(s->m, s->n * sizeof(*m));

		if (m)
			s->m = m;
	}
	return 0;
}

/* ---- rows ------------------------------------------------------------- */

/* Put one side of the row kind/key (created when new; a later duplicate in one report replaces it). */
static int add_row(struct ctx *c, enum drow_kind kind, const char *key, const char *name, struct diff_side *s,
		   size_t *at)
{
	struct diff_rows *rows = c->rows;
	char *hkey;
	size_t i;
	int r = -ENOMEM;

	if (asprintf(&hkey, "%d\x1f%s", (int)kind, key) < 0)
		goto fail;
	i = (size_t)(uintptr_t)strmap_get(&rows->by_key, hkey);
	if (!i) {
		struct drow *v = grow(rows->v, &rows->cap, rows->n, sizeof(*v), 256);

		if (!v)
			goto fail;
		rows->v = v;
		struct drow *d = &rows->v[rows->n];

		memset(d, 0, sizeof(*d));
		d->kind = kind;
		d->key = strdup(key);
		d->name = strdup(name);
		if (!d->key || !d->name || strmap_put(&rows->by_key, hkey, (void *)(uintptr_t)(rows->n + 1), NULL)) {
			free(d->key);
			free(d->name);
			goto fail;
		}
		i = ++rows->n;
	}
	free(rows->v[i - 1].side[c->side].m);
	rows->v[i - 1].side[c->side] = *s;
	memset(s, 0, sizeof(*s));
	free(hkey);
	if (at)
		*at = i - 1;
	return 0;
fail:
	free(hkey);
	free(s->m);
	memset(s, 0, sizeof(*s));
	return r;
}

static void rank_name(char *out, size_t len, const char *prefix, const char *comm, int rank)
{
	if (rank > 1)
		snprintf(out, len, "%s%s#%d", prefix, comm, rank);
	else
		snprintf(out, len, "%s%s", prefix, comm);
}

/* One process, thread or per-process function row of a report, as read. */
struct rec {
	uint64_t pid, tid;
	char *comm;		/* function: "MODULE_BASE:SYMBOL" */
	double first_seen;	/* process: its threads' earliest */
	size_t at;		/* index in its array, for messages */
	struct diff_side s;
	size_t proc;		/* thread, function: index of its process (sorted) */
	int rank;		/* process */
	char *key, *name;	/* process */
	size_t row;		/* process: its row */
};

struct recs {
	struct rec *v;
	size_t n, cap;
};

static void recs_free(struct recs *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].comm);
		free(r->v[i].key);
		free(r->v[i].name);
		free(r->v[i].s.m);
	}
	free(r->v);
	memset(r, 0, sizeof(*r));
}

/* A new zeroed record of element at of its array; NULL when out of memory. */
static struct rec *recs_add(struct recs *r, size_t at)
{
	struct rec *v = grow(r->v, &r->cap, r->n, sizeof(*v), 64);

	if (!v)
		return NULL;
	r->v = v;
	memset(&r->v[r->n], 0, sizeof(r->v[0]));
	r->v[r->n].at = at;
	return &r->v[r->n++];
}

enum member { M_HEADER, M_DURATION, M_PROCESSES, M_THREADS, M_FUNCTIONS, M_PER_CALL, M_OTHER };

/* A report read one top-level value (and one element of the big arrays) at a time: json-c never
 * holds more than one thread's object. */
struct reader {
	struct ctx *c;
	struct json_tokener *tok;
	const char *buf, *end;
	struct recs procs, threads, funcs;
	bool seen[M_OTHER];
	double duration;
};

static int cmp_proc(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	int c = strcmp(x->comm, y->comm);

	if (c)
		return c;
	if (x->first_seen != y->first_seen)
		return x->first_seen < y->first_seen ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static const struct rec *sort_procs;	/* qsort has no context argument */

static int cmp_thread(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	int c = x->proc != y->proc ? strcmp(sort_procs[x->proc].key, sort_procs[y->proc].key) : 0;

	if (c)
		return c;
	if ((c = strcmp(x->comm, y->comm)))
		return c;
	if (x->first_seen != y->first_seen)
		return x->first_seen < y->first_seen ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* ---- one element of "processes", "threads", "functions" --------------- */

/* where: "array[at]"; 0 when o is an object, else one line in the error. */
static int element(struct ctx *c, json_object *o, const char *array, size_t at, char *where, size_t len)
{
	snprintf(where, len, "%s[%zu]", array, at);
	if (!json_object_is_type(o, json_type_object))
		return bad(c, "%s is %s, expected an object", where, type_of(o));
	return 0;
}

static int read_process(struct reader *rd, json_object *p, size_t at)
{
	struct ctx *c = rd->c;
	const char *comm;
	char where[48];
	struct rec *r;
	int e;

	if ((e = element(c, p, "processes", at, where, sizeof(where))))
		return e;
	if (!(r = recs_add(&rd->procs, at)))
		return -ENOMEM;
	r->first_seen = INFINITY;
	if ((e = id(c, p, where, "pid", &r->pid)) || (e = text(c, p, where, "comm", MAX_COMM, true, NULL, &comm)))
		return e;
	if (!(r->comm = strdup(comm)))
		return -ENOMEM;
	return row_metrics(c, p, where, &r->s);
}

static int read_thread(struct reader *rd, json_object *t, size_t at)
{
	struct ctx *c = rd->c;
	const char *comm;
	json_object *v;
	char where[48];
	struct rec *r;
	int e;

	if ((e = element(c, t, "threads", at, where, sizeof(where))))
		return e;
	if (!(r = recs_add(&rd->threads, at)))
		return -ENOMEM;
	if ((e = id(c, t, where, "pid", &r->pid)) || (e = id(c, t, where, "tid", &r->tid)) ||
	    (e = text(c, t, where, "comm", MAX_COMM, true, NULL, &comm)) ||
	    (e = field(c, t, where, "first_seen_ns", json_type_double, true, &v)) ||
	    (e = number(c, v, where, "first_seen_ns", true, &r->first_seen)))
		return e;
	if (!(r->comm = strdup(comm)))
		return -ENOMEM;
	return row_metrics(c, t, where, &r->s);
}

static int read_function(struct reader *rd, json_object *f, size_t at)
{
	struct ctx *c = rd->c;
	const char *module, *symbol, *base;
	json_object *tid;
	char where[48];
	struct rec *r;
	int e;

	if ((e = element(c, f, "functions", at, where, sizeof(where))))
		return e;
	if (!json_object_object_get_ex(f, "tid", &tid))
		return bad(c, "%s has no \"tid\"", where);
	if (tid && !is_number(tid))
		return bad(c, "%s.tid is %s, expected a number or null", where, type_of(tid));
	if (tid)
		return 0;	/* per-process rows only (tid null) */
	if (!(r = recs_add(&rd->funcs, at)))
		return -ENOMEM;
	if ((e = id(c, f, where, "pid", &r->pid)) || (e = text(c, f, where, "module", MAX_TEXT, false, "?", &module)) ||
	    (e = text(c, f, where, "symbol", MAX_TEXT, false, "?", &symbol)))
		return e;
	base = strrchr(module, '/');
	base = base ? base + 1 : module;
	if (asprintf(&r->comm, "%s:%s", base, symbol) < 0) {
		r->comm = NULL;
		return -ENOMEM;
	}
	return row_metrics(c, f, where, &r->s);
}

static int read_header(struct reader *rd, json_object *t)
{
	struct ctx *c = rd->c;
	json_object *v;
	double schema;

	if (!json_object_is_type(t, json_type_object) || !json_object_object_get_ex(t, "schema", &v) || !is_number(v))
		return bad(c, "not a tmabpf JSON report (no \"tmabpf\": {\"schema\": N}; write one with tmabpf --json FILE)");
	schema = json_object_get_double(v);
	if (schema != TMABPF_SCHEMA)
		return bad(c, "a report of schema %g; this tmabpf reads schema %d (compare reports of one tmabpf "
			   "version)", schema, TMABPF_SCHEMA);
	return 0;
}

/* "per_call" (--per-call): the iteration row, its statistics and its functions' calls per iteration. */
static int read_per_call(struct ctx *c, json_object *o)
{
	static const char *const stats[] = { "iterations", "p50_ns", "p90_ns", "p99_ns", "max_ns", "per_s" };
	struct diff_side s = { .present = true };
	unsigned int cap = 0;
	json_object *v, *calls;
	double d;
	int r;

	if (!json_object_is_type(o, json_type_object))
		return bad(c, "the report's \"per_call\" is %s, expected an object or null", type_of(o));
	for (size_t i = 0; i < sizeof(stats) / sizeof(stats[0]); i++) {
		if ((r = field(c, o, "per_call", stats[i], json_type_double, true, &v)) ||
		    (r = number(c, v, "per_call", stats[i], true, &d)) || (r = push(c, &s, &cap, stats[i], d)))
			goto out;
	}
	if ((r = field(c, o, "per_call", "calls", json_type_object, false, &calls)))
		goto out;
	if (calls) {
		json_object_object_foreach(calls, k, val) {
			char name[MAX_COMM + 16];

			if (strlen(k) > MAX_COMM) {
				r = bad(c, "per_call.calls has a function name of %zu bytes", strlen(k));
				goto out;
			}
			snprintf(name, sizeof(name), "calls[%s]", k);
			if ((r = number(c, val, "per_call.calls", k, true, &d)) || (r = push(c, &s, &cap, name, d)))
				goto out;
		}
	}
	s.n_sums = s.n;
	return add_row(c, DROW_ITERATION, "iteration", "iteration", &s, NULL);
out:
	free(s.m);
	return r;
}

/* ---- rows from the records -------------------------------------------- */

/* The run row: duration and the sums over the processes' rows (fields and counters, not TMA nodes). */
static int run_row(struct ctx *c, double duration, const struct recs *procs)
{
	struct diff_side run = { .present = true };
	unsigned int cap = 0;
	int r;

	if ((r = push(c, &run, &cap, "wall_ns", duration)))
		goto out;
	for (size_t i = 0; i < procs->n; i++) {
		const struct diff_side *s = &c->rows->v[procs->v[i].row].side[c->side];

		for (unsigned int k = 0; k < s->n_sums; k++) {
			unsigned int j;

			if (s->m[k].name == run.m[0].name)
				continue;	/* wall_ns of the run is its duration */
			for (j = 0; j < run.n && run.m[j].name != s->m[k].name; j++)
				;
			if (j == run.n && (r = push(c, &run, &cap, s->m[k].name, 0)))
				goto out;
			run.m[j].v += s->m[k].v;
		}
	}
	return add_row(c, DROW_RUN, "run", "run", &run, NULL);
out:
	free(run.m);
	return r;
}

static int build_rows(struct reader *rd)
{
	struct ctx *c = rd->c;
	struct recs *P = &rd->procs, *T = &rd->threads, *F = &rd->funcs;
	struct u64map by_pid = {};
	size_t *pos = NULL, k;
	int r = -ENOMEM;

	/* processes by pid (unique), their first sight from their threads */
	for (size_t i = 0; i < P->n; i++) {
		if (u64map_get(&by_pid, P->v[i].pid)) {
			r = bad(c, "processes[%zu]: pid %llu appears twice in \"processes\"", P->v[i].at,
				(unsigned long long)P->v[i].pid);
			goto out;
		}
		if (u64map_put(&by_pid, P->v[i].pid, (void *)(uintptr_t)(i + 1)))
			goto out;
	}
	for (size_t i = k = 0; i < T->n; i++) {
		size_t pi = (size_t)(uintptr_t)u64map_get(&by_pid, T->v[i].pid);

		if (!pi) {	/* a thread of no process row (cannot happen in a report): left out */
			free(T->v[i].comm);
			free(T->v[i].s.m);
			continue;
		}
		if (T->v[i].first_seen < P->v[pi - 1].first_seen)
			P->v[pi - 1].first_seen = T->v[i].first_seen;
		T->v[k] = T->v[i];
		T->v[k++].proc = pi - 1;
	}
	T->n = k;
	/* processes: ranked among those of their comm by first sight */
	for (size_t i = 0; i < P->n; i++)
		P->v[i].row = i;	/* the index before sorting, for a moment */
	if (P->n)
		qsort(P->v, P->n, sizeof(*P->v), cmp_proc);
	if (!(pos = malloc((P->n ? P->n : 1) * sizeof(*pos))))
		goto out;
	u64map_free(&by_pid);
	for (size_t i = 0; i < P->n; i++) {
		struct rec *p = &P->v[i];

		pos[p->row] = i;
		p->rank = i && !strcmp(P->v[i - 1].comm, p->comm) ? P->v[i - 1].rank + 1 : 1;
		if (asprintf(&p->key, "%s#%d", p->comm, p->rank) < 0) {
			p->key = NULL;	/* (asprintf leaves it undefined on failure) */
			goto out;
		}
		if (!(p->name = strdup(p->rank > 1 ? p->key : p->comm)))	/* "comm", "comm#2" */
			goto out;
		if (u64map_put(&by_pid, p->pid, (void *)(uintptr_t)(i + 1)))
			goto out;
		if ((r = add_row(c, DROW_PROCESS, p->key, p->name, &p->s, &p->row)))
			goto out;
		r = -ENOMEM;
	}
	for (size_t i = 0; i < T->n; i++)
		T->v[i].proc = pos[T->v[i].proc];
	if ((r = run_row(c, rd->duration, P)))
		goto out;
	/* threads: ranked among their process' threads of their comm by first sight */
	sort_procs = P->v;
	if (T->n)
		qsort(T->v, T->n, sizeof(*T->v), cmp_thread);
	for (size_t i = 0, rank = 1; i < T->n; i++) {
		const struct rec *t = &T->v[i], *p = &P->v[t->proc];
		char key[2 * MAX_COMM + 48], name[2 * MAX_COMM + 48], prefix[MAX_COMM + 24];

		rank = i && T->v[i - 1].proc == t->proc && !strcmp(T->v[i - 1].comm, t->comm) ? rank + 1 : 1;
		snprintf(key, sizeof(key), "%s/%s#%zu", p->key, t->comm, rank);
		snprintf(prefix, sizeof(prefix), "%s/", p->name);
		rank_name(name, sizeof(name), prefix, t->comm, (int)rank);
		if ((r = add_row(c, DROW_THREAD, key, name, &T->v[i].s, NULL)))
			goto out;
	}
	/* functions: their process' key, module file name and symbol */
	for (size_t i = 0; i < F->n; i++) {
		size_t pi = (size_t)(uintptr_t)u64map_get(&by_pid, F->v[i].pid);
		char *key, *name;

		if (!pi)
			continue;
		if (asprintf(&key, "%s/%s", P->v[pi - 1].key, F->v[i].comm) < 0) {
			r = -ENOMEM;
			goto out;
		}
		if (asprintf(&name, "%s/%s", P->v[pi - 1].name, F->v[i].comm) < 0) {
			free(key);
			r = -ENOMEM;
			goto out;
		}
		r = add_row(c, DROW_FUNCTION, key, name, &F->v[i].s, NULL);
		free(key);
		free(name);
		if (r)
			goto out;
	}
	r = 0;
out:
	free(pos);
	u64map_free(&by_pid);
	return r;
}

/* ---- the text, one value at a time ------------------------------------ */

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* Past the string starting at p ('"'), or NULL when the text ends first. */
static const char *string_end(const char *p, const char *end)
{
	for (p++; p < end; p++) {
		if (*p == '\\')
			p++;
		else if (*p == '"')
			return p + 1;
	}
	return NULL;
}

/* Past the value starting at p (json-c checks it; this only finds where it ends), or NULL when the
 * text ends first. */
static const char *value_end(const char *p, const char *end)
{
	size_t depth = 0;

	if (p < end && *p == '"')
		return string_end(p, end);
	if (p < end && *p != '{' && *p != '[') {
		while (p < end && !strchr(",}] \t\r\n", *p))
			p++;
		return p < end ? p : NULL;
	}
	for (; p < end; p++) {
		if (*p == '"') {
			if (!(p = string_end(p, end)))
				return NULL;
			p--;
		} else if (*p == '{' || *p == '[') {
			depth++;
		} else if ((*p == '}' || *p == ']') && --depth == 0) {
			return p + 1;
		}
	}
	return NULL;
}

static int truncated(struct reader *rd)
{
	return bad(rd->c, "truncated JSON: the text ends inside the report (after %zu bytes); was it written completely?",
		   (size_t)(rd->end - rd->buf));
}

/* json-c on the value [p, q); q[0], a delimiter, ends a number. */
static int parse_slice(struct reader *rd, const char *p, const char *q, json_object **out)
{
	size_t len = q - p + (q < rd->end);
	enum json_tokener_error jerr;
	const char *end;

	*out = NULL;
	if (q == p)
		return bad(rd->c, "not valid JSON (a value expected at byte %zu)", (size_t)(p - rd->buf));
	if (len > (1u << 30))
		return bad(rd->c, "a single JSON value of %zu MiB at byte %zu", len >> 20, (size_t)(p - rd->buf));
	json_tokener_reset(rd->tok);
	*out = json_tokener_parse_ex(rd->tok, p, (int)len);
	jerr = json_tokener_get_error(rd->tok);
	end = p + json_tokener_get_parse_end(rd->tok);
	if (jerr == json_tokener_success && (end == q || (end == q + 1 && strchr(" \t\r\n", *q))))
		return 0;	/* (json-c may take the white space that ended the value) */
	json_object_put(*out);
	*out = NULL;
	if (jerr == json_tokener_continue && q == rd->end)
		return truncated(rd);
	return bad(rd->c, "not valid JSON (%s, near byte %zu)",
		   jerr == json_tokener_success ? "unexpected character" : json_tokener_error_desc(jerr),
		   (size_t)(p - rd->buf) + json_tokener_get_parse_end(rd->tok));
}

static int (*const element_reader[])(struct reader *, json_object *, size_t) = {
	[M_PROCESSES] = read_process, [M_THREADS] = read_thread, [M_FUNCTIONS] = read_function,
};

static const char *const member_name[] = {
	[M_HEADER] = "tmabpf", [M_DURATION] = "duration_ns", [M_PROCESSES] = "processes", [M_THREADS] = "threads",
	[M_FUNCTIONS] = "functions", [M_PER_CALL] = "per_call",
};

/* The elements of a big array, each parsed and read on its own; *pp: past the array. */
static int read_array(struct reader *rd, enum member m, const char **pp)
{
	const char *p = *pp, *q;
	json_object *v;
	size_t i = 0;
	int r;

	if (*p != '[') {
		if (!(q = value_end(p, rd->end)))
			return truncated(rd);
		if ((r = parse_slice(rd, p, q, &v)))
			return r;
		r = bad(rd->c, "the report's \"%s\" is %s, expected an array", member_name[m], type_of(v));
		json_object_put(v);
		return r;
	}
	p = skip_ws(p + 1, rd->end);
	if (p < rd->end && *p == ']') {
		*pp = p + 1;
		return 0;
	}
	for (;; i++) {
		if (!(q = value_end(p, rd->end)))
			return truncated(rd);
		if ((r = parse_slice(rd, p, q, &v)))
			return r;
		r = element_reader[m](rd, v, i);
		json_object_put(v);
		if (r)
			return r;
		p = skip_ws(q, rd->end);
		if (p == rd->end)
			return truncated(rd);
		if (*p == ']') {
			*pp = p + 1;
			return 0;
		}
		if (*p != ',')
			return bad(rd->c, "not valid JSON (',' or ']' expected at byte %zu)", (size_t)(p - rd->buf));
		p = skip_ws(p + 1, rd->end);
	}
}

static int read_member(struct reader *rd, const char *key, const char **pp)
{
	enum member m = M_OTHER;
	const char *p = *pp, *q;
	json_object *v;
	int r;

	for (int k = 0; k < M_OTHER; k++)
		if (!strcmp(key, member_name[k]))
			m = k;
	if (m != M_OTHER) {
		if (rd->seen[m])
			return bad(rd->c, "\"%s\" appears twice in the report", key);
		rd->seen[m] = true;
	}
	if (m == M_PROCESSES || m == M_THREADS || m == M_FUNCTIONS)
		return read_array(rd, m, pp);
	if (!(q = value_end(p, rd->end)))
		return truncated(rd);
	if ((r = parse_slice(rd, p, q, &v)))	/* every value is checked to be JSON, the rest unused */
		return r;
	if (m == M_HEADER)
		r = read_header(rd, v);
	else if (m == M_DURATION)
		r = number(rd->c, v, "the report", "duration_ns", true, &rd->duration);
	else if (m == M_PER_CALL && v)
		r = read_per_call(rd->c, v);
	json_object_put(v);
	*pp = q;
	return r;
}

static int read_report(struct reader *rd)
{
	const char *p = skip_ws(rd->buf, rd->end), *q;
	int r;

	if (p == rd->end)
		return bad(rd->c, "empty file, not a tmabpf JSON report");
	if (*p != '{')
		return bad(rd->c, "not a tmabpf JSON report: the text does not start with '{' (tmabpf --json FILE)");
	p = skip_ws(p + 1, rd->end);
	if (p < rd->end && *p == '}')
		p++;
	else
		for (;;) {
			json_object *k;
			char key[32];

			if (p == rd->end)
				return truncated(rd);
			if (*p != '"')
				return bad(rd->c, "not valid JSON (a key expected at byte %zu)", (size_t)(p - rd->buf));
			if (!(q = string_end(p, rd->end)))
				return truncated(rd);
			if ((r = parse_slice(rd, p, q, &k)))
				return r;
			snprintf(key, sizeof(key), "%s", json_object_get_string(k));
			json_object_put(k);
			p = skip_ws(q, rd->end);
			if (p == rd->end)
				return truncated(rd);
			if (*p != ':')
				return bad(rd->c, "not valid JSON (':' expected at byte %zu)", (size_t)(p - rd->buf));
			p = skip_ws(p + 1, rd->end);
			if (p == rd->end)
				return truncated(rd);
			if ((r = read_member(rd, key, &p)))
				return r;
			p = skip_ws(p, rd->end);
			if (p == rd->end)
				return truncated(rd);
			if (*p == '}') {
				p++;
				break;
			}
			if (*p != ',')
				return bad(rd->c, "not valid JSON (',' or '}' expected at byte %zu)", (size_t)(p - rd->buf));
			p = skip_ws(p + 1, rd->end);
		}
	if (skip_ws(p, rd->end) != rd->end)
		return bad(rd->c, "text after the report's JSON object (at byte %zu)", (size_t)(p - rd->buf));
	if (!rd->seen[M_HEADER])
		return bad(rd->c, "not a tmabpf JSON report (no \"tmabpf\": {\"schema\": N}; write one with tmabpf --json FILE)");
	for (int m = M_DURATION; m <= M_THREADS; m++)
		if (!rd->seen[m])
			return bad(rd->c, "the report has no \"%s\"", member_name[m]);
	return build_rows(rd);
}

int diff_report_parse(struct diff_rows *rows, int side, const char *text_in, size_t len, const char *what, char *err,
		      size_t errlen)
{
	struct ctx c = { .rows = rows, .side = side, .what = what, .err = err, .errlen = errlen };
	struct reader rd = { .c = &c, .buf = text_in, .end = text_in + len };
	int r;

	if (err && errlen)
		err[0] = 0;
	if (memchr(text_in, 0, len))
		return bad(&c, "holds a NUL byte: not a JSON text");
	if (!(rd.tok = json_tokener_new()))
		return -ENOMEM;
	r = read_report(&rd);
	json_tokener_free(rd.tok);
	recs_free(&rd.procs);
	recs_free(&rd.threads);
	recs_free(&rd.funcs);
	if (r == -ENOMEM && err && errlen && !err[0])
		bad(&c, "out of memory");
	return r;
}

int diff_report_load(struct diff_rows *rows, int side, const char *path, char *err, size_t errlen)
{
	struct ctx c = { .rows = rows, .side = side, .what = path, .err = err, .errlen = errlen };
	size_t len = 0, cap = 0;
	struct stat st;
	char *buf = NULL;
	int fd, r;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);	/* a FIFO must not block the open */
	if (fd < 0)
		return bad(&c, "cannot read the report: %s", strerror(errno)), -errno;
	if (fstat(fd, &st)) {
		r = bad(&c, "cannot read the report: %s", strerror(errno));
		close(fd);
		return r;
	}
	if (!S_ISREG(st.st_mode)) {	/* checked before anything is read (/dev/urandom was read for 4 GiB) */
		close(fd);
		return bad(&c, "cannot read the report: %s", S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ?
			   "a FIFO, not a file" : S_ISCHR(st.st_mode) ? "a character device, not a file" :
			   "not a regular file");
	}
	if (st.st_size > DIFF_REPORT_MAX_BYTES) {
		close(fd);
		return bad(&c, "%lld MiB: larger than the %lld MiB a report may have", (long long)st.st_size >> 20,
			   DIFF_REPORT_MAX_BYTES >> 20);
	}
	for (;;) {
		ssize_t n;

		if (len + 1 >= cap) {
			size_t nc = cap ? cap * 2 : (S_ISREG(st.st_mode) ? (size_t)st.st_size + 2 : 1 << 16);
			char *nb = nc > (size_t)DIFF_REPORT_MAX_BYTES + 2 ? NULL : realloc(buf, nc);

			if (!nb) {
				r = nc > (size_t)DIFF_REPORT_MAX_BYTES + 2 ?
				    bad(&c, "larger than the %lld MiB a report may have", DIFF_REPORT_MAX_BYTES >> 20) :
				    bad(&c, "out of memory reading the report");
				goto out;
			}
			buf = nb;
			cap = nc;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = bad(&c, "cannot read the report: %s", strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += n;
	}
	buf[len] = 0;
	close(fd);
	fd = -1;
	r = diff_report_parse(rows, side, buf, len, path, err, errlen);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return r;
}

/* ---- rows, for the comparison ---------------------------------------- */

const char *diff_metric_name(const struct diff_rows *rows, const char *metric)
{
	struct strmap *names = (struct strmap *)&rows->names;

	return strmap_get(names, metric) ? strmap_intern(names, metric, (void *)1) : NULL;
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(const char *const *)a, y = (uintptr_t)*(const char *const *)b;

	return x < y ? -1 : x > y;
}

const char *diff_metric_near(const struct diff_rows *rows, const char *metric)
{
	const char **names = NULL, *near = NULL;
	size_t n = 0, cap = 0, u = 0;

	for (size_t i = 0; i < rows->n; i++)
		for (int s = 0; s < 2; s++)
			for (unsigned int k = 0; k < rows->v[i].side[s].n; k++) {
				if (n == cap) {
					const char **nv = realloc(names, (cap = cap ? 2 * cap : 256) * sizeof(*nv));

					if (!nv)
						goto out;
					names = nv;
				}
				names[n++] = rows->v[i].side[s].m[k].name;
			}
	if (!n)
		goto out;
	qsort(names, n, sizeof(*names), cmp_ptr);	/* interned: one pointer per name */
	for (size_t i = 0; i < n; i++)
		if (!u || names[u - 1] != names[i])
			names[u++] = names[i];
	near = suggest_nearest(metric, names, u);
out:
	free(names);
	return near;
}

bool drow_metric(const struct drow *r, int side, const char *name, double *out)
{
	const struct diff_side *s = &r->side[side];

	for (unsigned int i = 0; i < s->n; i++)
		if (s->m[i].name == name) {
			*out = s->m[i].v;
			return true;
		}
	return false;
}

const char *drow_leaf(const struct drow *r)
{
	const char *s = strrchr(r->name, '/'), *c;

	s = s ? s + 1 : r->name;
	c = strrchr(s, ':');	/* function: the symbol */
	return c ? c + 1 : s;
}

void diff_rows_free(struct diff_rows *rows)
{
	for (size_t i = 0; i < rows->n; i++) {
		free(rows->v[i].key);
		free(rows->v[i].name);
		free(rows->v[i].side[0].m);
		free(rows->v[i].side[1].m);
	}
	free(rows->v);
	strmap_free(&rows->by_key);
	strmap_free(&rows->names);
	memset(rows, 0, sizeof(*rows));
}
