// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * tmabpf diff BASE.json NEW.json [--fail-on BUDGETS] [--top N]
 *
 * Compares two JSON reports (schema 1) row by row: the run, each process,
 * each thread and each probed function.  Pids and tids differ between runs,
 * so rows are matched by name:
 *   process   its comm, and its rank among processes of that comm ordered by
 *             first sight (the earliest first_seen_ns of its threads, then pid):
 *             "decoder", "worker#2"
 *   thread    its process's key, its own comm, and its rank among that
 *             process's threads of that comm by first_seen_ns:
 *             "decoder/worker#3"
 *   function  its process's key, the module's file name and the symbol (the
 *             per-process rows of the report, tid null): "decoder/libopenblas.so.0:cblas_sgemm"
 * Metrics: the numeric fields of the row (oncpu_ns, offcpu_*_ns, switches,
 * migrations, calls, returns, unmatched, wall_ns, self_oncpu_ns), its
 * counters by event name, and its TMA nodes (percent); the run row has
 * wall_ns (duration_ns) and the sums over its processes.
 * Exit: 0 when no budget breaks, 1 when one does (with a table saying which
 * row broke which budget), 2 for bad usage or unreadable reports.
 */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "cli.h"
#include "cmd_diff.h"
#include "diff_rules.h"
#include "warn.h"

#define MAX_METRICS 96

static const char *const row_fields[] = {
	"oncpu_ns", "offcpu_ns", "offcpu_blocked_ns", "offcpu_runqueue_ns", "switches_voluntary",
	"switches_involuntary", "migrations", "calls", "returns", "unmatched", "wall_ns", "self_oncpu_ns",
};

struct drow {
	enum drow_kind kind;
	char key[384];		/* what matches rows of the two reports */
	char name[384];		/* shown */
	const char *leaf;	/* last component of name, for GLOBs */
	json_object *side[2];	/* base, new (NULL: not in that report) */
};

struct rows {
	struct drow *v;
	size_t n, cap;
};

struct change {
	const struct drow *row;
	const char *metric;
	double base, now, rel;	/* rel: % change, NAN when base is 0 */
};

static int usage_error(const char *msg)
{
	die_msg("%s", msg);
	return EXIT_USAGE;
}

static void diff_usage(FILE *f)
{
	fputs("usage: tmabpf diff BASE.json NEW.json [--fail-on BUDGETS] [--top N]\n"
	      "Deltas of time, calls, counters and TMA nodes per process, thread and function of two\n"
	      "JSON reports (tmabpf --json); threads are matched by process comm, thread comm and rank.\n"
	      "  --fail-on BUDGETS  exit 1 when a budget breaks, e.g.\n"
	      "                     'tma_backend_bound>+5pp,wall_ns>+5%,thread[gt-*].oncpu_ns>+10%'\n"
	      "                     [run|process|thread|function[GLOB].]METRIC (>|>=|<|<=) [+-]N (%|pp|none)\n"
	      "  --top N            changes shown, largest relative first (default 30; 0: all)\n"
	      "Exit status: 0 within budget, 1 a budget broke, 2 bad usage or unreadable report.\n"
	      "See tmabpf-diff(1).\n",
	      f);
}

static double num(json_object *o, const char *key, bool *found)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return *found = false, 0;
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return *found = false, 0;
	*found = true;
	return json_object_get_double(v);
}

/* Value of metric in a row: a field, a counter, or a TMA node. */
static bool metric_value(json_object *row, const char *metric, double *out)
{
	static const char *const nests[] = { "counters", "tma" };
	bool found;
	json_object *sub;

	*out = num(row, metric, &found);
	if (found)
		return true;
	for (size_t i = 0; i < 2; i++)
		if (row && json_object_object_get_ex(row, nests[i], &sub)) {
			*out = num(sub, metric, &found);
			if (found)
				return true;
		}
	return false;
}

static const char *str(json_object *o, const char *key, const char *dflt)
{
	json_object *v;

	if (o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return dflt;
}

static json_object *arr(json_object *o, const char *key)
{
	json_object *v;

	return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_array) ? v : NULL;
}

static int load(const char *path, json_object **out)
{
	json_object *root = json_object_from_file(path), *t;
	bool found;

	*out = NULL;
	if (!root) {
		die_msg("cannot read report '%s': %s", path, json_util_get_last_err() ? json_util_get_last_err() : "?");
		return EXIT_USAGE;
	}
	if (!json_object_object_get_ex(root, "tmabpf", &t) || num(t, "schema", &found) != 1 || !found ||
	    !arr(root, "threads") || !arr(root, "processes")) {
		die_msg("'%s' is not a tmabpf JSON report of schema 1 (tmabpf --json FILE)", path);
		json_object_put(root);
		return EXIT_USAGE;
	}
	*out = root;
	return 0;
}

static struct drow *rows_add(struct rows *r, enum drow_kind kind, const char *key, const char *name, int side,
			     json_object *obj)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].kind == kind && !strcmp(r->v[i].key, key)) {
			r->v[i].side[side] = obj;
			return &r->v[i];
		}
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct drow *nv = realloc(r->v, cap * sizeof(*nv));

		if (!nv)
			return NULL;
		r->v = nv;
		r->cap = cap;
	}
	struct drow *d = &r->v[r->n++];

	memset(d, 0, sizeof(*d));
	d->kind = kind;
	snprintf(d->key, sizeof(d->key), "%s", key);
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->side[side] = obj;
	return d;
}

/* ---- one report's rows ---- */

struct proc_ref {
	unsigned long long pid;
	double first_seen;
	const char *comm;
	char key[160];
	int rank;
};

static int cmp_proc(const void *a, const void *b)
{
	const struct proc_ref *x = a, *y = b;
	int c = strcmp(x->comm, y->comm);

	if (c)
		return c;
	if (x->first_seen != y->first_seen)
		return x->first_seen < y->first_seen ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

struct thread_ref {
	json_object *o;
	const struct proc_ref *proc;
	const char *comm;
	double first_seen, tid;
};

static int cmp_thread(const void *a, const void *b)
{
	const struct thread_ref *x = a, *y = b;
	int c = x->proc != y->proc ? strcmp(x->proc->key, y->proc->key) : 0;

	if (c)
		return c;
	if ((c = strcmp(x->comm, y->comm)))
		return c;
	if (x->first_seen != y->first_seen)
		return x->first_seen < y->first_seen ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static const struct proc_ref *proc_of(const struct proc_ref *procs, size_t n, unsigned long long pid)
{
	for (size_t i = 0; i < n; i++)
		if (procs[i].pid == pid)
			return &procs[i];
	return NULL;
}

static void rank_name(char *out, size_t len, const char *prefix, const char *comm, int rank)
{
	if (rank > 1)
		snprintf(out, len, "%s%s#%d", prefix, comm, rank);
	else
		snprintf(out, len, "%s%s", prefix, comm);
}

/* The run row: duration and the sums over processes. */
static json_object *run_row(json_object *root)
{
	json_object *run = json_object_new_object(), *procs = arr(root, "processes");
	json_object *counters = json_object_new_object();
	bool found;
	double d = num(root, "duration_ns", &found);

	json_object_object_add(run, "wall_ns", json_object_new_double(d));
	for (size_t f = 0; f < sizeof(row_fields) / sizeof(row_fields[0]); f++) {
		double sum = 0;
		bool any = false;

		if (!strcmp(row_fields[f], "wall_ns"))
			continue;
		for (size_t i = 0; i < json_object_array_length(procs); i++) {
			sum += num(json_object_array_get_idx(procs, i), row_fields[f], &found);
			any |= found;
		}
		if (any)
			json_object_object_add(run, row_fields[f], json_object_new_double(sum));
	}
	for (size_t i = 0; i < json_object_array_length(procs); i++) {
		json_object *c;

		if (!json_object_object_get_ex(json_object_array_get_idx(procs, i), "counters", &c))
			continue;
		json_object_object_foreach(c, k, v) {
			json_object *prev;
			double sum = json_object_get_double(v);

			if (json_object_object_get_ex(counters, k, &prev))
				sum += json_object_get_double(prev);
			json_object_object_add(counters, k, json_object_new_double(sum));
		}
	}
	json_object_object_add(run, "counters", counters);
	return run;
}

static int collect(json_object *root, int side, struct rows *rows, json_object **run_out)
{
	json_object *procs = arr(root, "processes"), *threads = arr(root, "threads"), *funcs = arr(root, "functions");
	size_t np = json_object_array_length(procs), nt = json_object_array_length(threads);
	struct proc_ref *pr = calloc(np ? np : 1, sizeof(*pr));
	struct thread_ref *tr = calloc(nt ? nt : 1, sizeof(*tr));
	bool found;
	int rc = -ENOMEM;

	if (!pr || !tr)
		goto out;
	*run_out = run_row(root);
	rows_add(rows, DROW_RUN, "run", "run", side, *run_out);
	for (size_t i = 0; i < np; i++) {
		json_object *p = json_object_array_get_idx(procs, i);

		pr[i].pid = (unsigned long long)num(p, "pid", &found);
		pr[i].comm = str(p, "comm", "?");
		pr[i].first_seen = INFINITY;
	}
	for (size_t i = 0; i < nt; i++) {
		json_object *t = json_object_array_get_idx(threads, i);
		unsigned long long pid = (unsigned long long)num(t, "pid", &found);
		double fs = num(t, "first_seen_ns", &found);

		for (size_t k = 0; k < np; k++)
			if (pr[k].pid == pid && fs < pr[k].first_seen)
				pr[k].first_seen = fs;
	}
	qsort(pr, np, sizeof(*pr), cmp_proc);
	for (size_t i = 0; i < np; i++) {
		pr[i].rank = i && !strcmp(pr[i - 1].comm, pr[i].comm) ? pr[i - 1].rank + 1 : 1;
		snprintf(pr[i].key, sizeof(pr[i].key), "%s#%d", pr[i].comm, pr[i].rank);
	}
	for (size_t i = 0; i < np; i++) {
		char name[384];

		rank_name(name, sizeof(name), "", pr[i].comm, pr[i].rank);
		for (size_t k = 0; k < np; k++) {
			json_object *p = json_object_array_get_idx(procs, k);

			if ((unsigned long long)num(p, "pid", &found) == pr[i].pid)
				rows_add(rows, DROW_PROCESS, pr[i].key, name, side, p);
		}
	}
	for (size_t i = 0; i < nt; i++) {
		json_object *t = json_object_array_get_idx(threads, i);

		tr[i].o = t;
		tr[i].proc = proc_of(pr, np, (unsigned long long)num(t, "pid", &found));
		tr[i].comm = str(t, "comm", "?");
		tr[i].first_seen = num(t, "first_seen_ns", &found);
		tr[i].tid = num(t, "tid", &found);
	}
	/* threads of no process row (cannot happen in a report) are left out */
	size_t k = 0;
	for (size_t i = 0; i < nt; i++)
		if (tr[i].proc)
			tr[k++] = tr[i];
	nt = k;
	qsort(tr, nt, sizeof(*tr), cmp_thread);
	for (size_t i = 0, rank = 1; i < nt; i++) {
		char key[384], prefix[200], name[384];

		rank = i && tr[i - 1].proc == tr[i].proc && !strcmp(tr[i - 1].comm, tr[i].comm) ? rank + 1 : 1;
		snprintf(key, sizeof(key), "%s/%s#%zu", tr[i].proc->key, tr[i].comm, rank);
		rank_name(prefix, sizeof(prefix), "", tr[i].proc->comm, tr[i].proc->rank);
		strcat(prefix, "/");
		rank_name(name, sizeof(name), prefix, tr[i].comm, (int)rank);
		rows_add(rows, DROW_THREAD, key, name, side, tr[i].o);
	}
	for (size_t i = 0; funcs && i < json_object_array_length(funcs); i++) {
		json_object *f = json_object_array_get_idx(funcs, i), *tid;
		const struct proc_ref *p;
		const char *module = str(f, "module", "?"), *base = strrchr(module, '/');
		char key[384], name[384], prefix[200];

		if (!json_object_object_get_ex(f, "tid", &tid) || tid)
			continue;	/* per-process rows only */
		if (!(p = proc_of(pr, np, (unsigned long long)num(f, "pid", &found))))
			continue;
		base = base ? base + 1 : module;
		snprintf(key, sizeof(key), "%s/%s:%s", p->key, base, str(f, "symbol", "?"));
		rank_name(prefix, sizeof(prefix), "", p->comm, p->rank);
		snprintf(name, sizeof(name), "%s/%s:%s", prefix, base, str(f, "symbol", "?"));
		rows_add(rows, DROW_FUNCTION, key, name, side, f);
	}
	rc = 0;
out:
	free(pr);
	free(tr);
	return rc;
}

/* ---- metrics of a row ---- */

static void add_metric(const char **names, int *n, const char *m)
{
	for (int i = 0; i < *n; i++)
		if (!strcmp(names[i], m))
			return;
	if (*n < MAX_METRICS)
		names[(*n)++] = m;
}

static int row_metrics(const struct drow *r, const char **names)
{
	int n = 0;

	for (int s = 0; s < 2; s++) {
		json_object *o = r->side[s], *sub;

		if (!o)
			continue;
		for (size_t f = 0; f < sizeof(row_fields) / sizeof(row_fields[0]); f++)
			if (json_object_object_get_ex(o, row_fields[f], &sub))
				add_metric(names, &n, row_fields[f]);
		if (json_object_object_get_ex(o, "counters", &sub)) {
			json_object_object_foreach(sub, k, v) {
				(void)v;
				add_metric(names, &n, k);
			}
		}
		if (json_object_object_get_ex(o, "tma", &sub)) {
			json_object_object_foreach(sub, k, v) {
				if (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int))
					add_metric(names, &n, k);
			}
		}
	}
	return n;
}

static const char *leaf(const char *name)
{
	const char *s = strrchr(name, '/'), *c;

	s = s ? s + 1 : name;
	c = strrchr(s, ':');	/* function: the symbol */
	return c ? c + 1 : s;
}

static bool rule_applies(const struct diff_rule *ru, const struct drow *r)
{
	if (ru->scope >= 0 && ru->scope != (int)r->kind)
		return false;
	return !ru->glob[0] || fnmatch(ru->glob, leaf(r->name), 0) == 0;
}

/* ---- output ---- */

static void fmt_val(char *buf, size_t len, const char *metric, double v)
{
	if (!strncmp(metric, "tma_", 4))
		snprintf(buf, len, "%.2f%%", v);
	else if (fabs(v) >= 1e15 || (v != floor(v)))
		snprintf(buf, len, "%.6g", v);
	else
		snprintf(buf, len, "%.0f", v);
}

static void fmt_delta(char *buf, size_t len, const struct change *c)
{
	if (!strncmp(c->metric, "tma_", 4))
		snprintf(buf, len, "%+.2fpp", c->now - c->base);
	else if (isnan(c->rel))
		snprintf(buf, len, "new %+.6g", c->now - c->base);
	else
		snprintf(buf, len, "%+.2f%%", c->rel);
}

static double weight(const struct change *c)
{
	if (!strncmp(c->metric, "tma_", 4))
		return fabs(c->now - c->base);
	return isnan(c->rel) ? -1 : fabs(c->rel);	/* from 0: listed after the relative changes */
}

static int cmp_change(const void *a, const void *b)
{
	double x = weight(a), y = weight(b);

	return x > y ? -1 : x < y;
}

static void print_changes(struct change *ch, size_t n, int top)
{
	char b[64], v[64], d[64];

	if (!n) {
		printf("no differences\n");
		return;
	}
	qsort(ch, n, sizeof(*ch), cmp_change);
	printf("%-9s %-44s %-22s %16s %16s %12s\n", "KIND", "ROW", "METRIC", "BASE", "NEW", "DELTA");
	for (size_t i = 0; i < n && (top <= 0 || (int)i < top); i++) {
		fmt_val(b, sizeof(b), ch[i].metric, ch[i].base);
		fmt_val(v, sizeof(v), ch[i].metric, ch[i].now);
		fmt_delta(d, sizeof(d), &ch[i]);
		printf("%-9s %-44.44s %-22.22s %16s %16s %12s\n", diff_kind_name(ch[i].row->kind), ch[i].row->name,
		       ch[i].metric, b, v, d);
	}
	if (top > 0 && n > (size_t)top)
		printf("(%zu more changes; --top 0 shows all)\n", n - top);
}

static void print_unmatched(const struct rows *rows)
{
	for (int s = 0; s < 2; s++) {
		size_t cnt = 0;

		for (size_t i = 0; i < rows->n; i++)
			cnt += rows->v[i].side[s] && !rows->v[i].side[!s];
		if (!cnt)
			continue;
		printf("only in %s (%zu):", s ? "NEW" : "BASE", cnt);
		for (size_t i = 0, shown = 0; i < rows->n && shown < 8; i++)
			if (rows->v[i].side[s] && !rows->v[i].side[!s]) {
				printf(" %s %s%s", diff_kind_name(rows->v[i].kind), rows->v[i].name, ++shown < cnt ? "," : "");
			}
		printf("%s\n", cnt > 8 ? " ..." : "");
	}
}

/* ---- budgets ---- */

static int check_rules(const struct rows *rows, const struct diff_rule *rules, int nr)
{
	int broken = 0, judged = 0;

	/* a metric no row has is a typo: say so rather than pass */
	for (int k = 0; k < nr; k++) {
		bool known = false;

		for (size_t i = 0; i < rows->n && !known; i++) {
			double v;

			for (int s = 0; s < 2 && !known; s++)
				known = rows->v[i].side[s] && metric_value(rows->v[i].side[s], rules[k].metric, &v);
		}
		if (!known) {
			die_msg("budget '%s': no row of either report has metric '%s' (fields: oncpu_ns, offcpu_ns, "
				"wall_ns, calls, ...; event names; tma_* nodes)", rules[k].text, rules[k].metric);
			return EXIT_USAGE;
		}
	}
	for (int k = 0; k < nr; k++)
		for (size_t i = 0; i < rows->n; i++) {
			const struct drow *r = &rows->v[i];
			double b, n, d;
			char bs[64], ns[64], ds[64];

			if (!r->side[0] || !r->side[1] || !rule_applies(&rules[k], r) ||
			    !metric_value(r->side[0], rules[k].metric, &b) || !metric_value(r->side[1], rules[k].metric, &n))
				continue;
			if (!diff_rule_delta(&rules[k], b, n, &d))
				continue;
			judged++;
			if (!diff_rule_broken(&rules[k], d))
				continue;
			if (!broken++)
				printf("\nBUDGETS BROKEN:\n%-9s %-44s %-22s %16s %16s %12s  %s\n", "KIND", "ROW", "METRIC",
				       "BASE", "NEW", "DELTA", "BUDGET");
			fmt_val(bs, sizeof(bs), rules[k].metric, b);
			fmt_val(ns, sizeof(ns), rules[k].metric, n);
			snprintf(ds, sizeof(ds), rules[k].unit == UNIT_PCT ? "%+.2f%%" : rules[k].unit == UNIT_PP ?
				 "%+.2fpp" : "%+.6g", d);
			printf("%-9s %-44.44s %-22.22s %16s %16s %12s  %s\n", diff_kind_name(r->kind), r->name,
			       rules[k].metric, bs, ns, ds, rules[k].text);
		}
	if (broken) {
		printf("%d budget%s broken\n", broken, broken > 1 ? "s" : "");
		return 1;
	}
	printf("\nbudgets: all %d hold (%d row checks)\n", nr, judged);
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fail-on", required_argument, NULL, 'f' }, { "top", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' }, {},
	};
	const char *fail_on = NULL;
	struct diff_rule *rules = NULL;
	json_object *rep[2] = {}, *run[2] = {};
	struct rows rows = {};
	struct change *ch = NULL;
	size_t nch = 0, cap = 0;
	int c, top = 30, nr = 0, rc = 0;
	char err[512];

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f': fail_on = optarg; break;
		case 'n': {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end || end == optarg || v < 0 || v > 1000000)
				return usage_error("bad --top: expected an integer >= 0");
			top = (int)v;
			break;
		}
		case 'h': diff_usage(stdout); return 0;
		default: return usage_error("diff: unknown option or missing value (see 'tmabpf diff --help')");
		}
	}
	if (argc - optind != 2)
		return usage_error("diff: expected two reports: tmabpf diff BASE.json NEW.json [--fail-on BUDGETS]");
	if (fail_on && diff_rules_parse(fail_on, &rules, &nr, err, sizeof(err)))
		return usage_error(err);
	for (int s = 0; s < 2; s++)
		if ((rc = load(argv[optind + s], &rep[s])))
			goto out;
	for (int s = 0; s < 2; s++)
		if (collect(rep[s], s, &rows, &run[s])) {
			die_msg("out of memory reading the reports");
			rc = 1;
			goto out;
		}
	for (size_t i = 0; i < rows.n; i++) {
		const char *names[MAX_METRICS];
		int nm;

		if (!rows.v[i].side[0] || !rows.v[i].side[1])
			continue;
		nm = row_metrics(&rows.v[i], names);
		for (int m = 0; m < nm; m++) {
			double b, n;

			if (!metric_value(rows.v[i].side[0], names[m], &b) || !metric_value(rows.v[i].side[1], names[m], &n) ||
			    b == n)
				continue;
			if (nch == cap) {
				struct change *nc = realloc(ch, (cap = cap ? cap * 2 : 128) * sizeof(*nc));

				if (!nc) {
					rc = 1;
					goto out;
				}
				ch = nc;
			}
			ch[nch++] = (struct change){ .row = &rows.v[i], .metric = names[m], .base = b, .now = n,
						     .rel = b ? 100.0 * (n - b) / fabs(b) : NAN };
		}
	}
	printf("tmabpf diff: %s -> %s\n", argv[optind], argv[optind + 1]);
	print_changes(ch, nch, top);
	print_unmatched(&rows);
	if (nr)
		rc = check_rules(&rows, rules, nr);
out:
	free(ch);
	free(rows.v);
	free(rules);
	for (int s = 0; s < 2; s++) {
		json_object_put(run[s]);
		json_object_put(rep[s]);
	}
	return rc;
}
