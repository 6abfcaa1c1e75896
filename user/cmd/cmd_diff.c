// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * tmabpf diff BASE.json NEW.json [--fail-on BUDGETS] [--top N]
 *
 * Compares two JSON reports row by row (run, processes, threads, probed
 * functions, matched by name: diff_report.h) and checks budgets
 * (diff_rules.h).  Exit: 0 when no budget breaks, 1 when one does (with a
 * table saying which row broke which budget), 2 for bad usage or unreadable
 * reports.
 */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/cmd_diff.h"
#include "cmd/diff_report.h"
#include "cmd/diff_rules.h"
#include "lib/parse.h"
#include "lib/text_fit.h"
#include "lib/text_table.h"
#include "lib/text_safe.h"
#include "lib/warn.h"

#define MAX_METRICS 96

struct change {
	const struct drow *row;
	const char *metric;
	double base, now, rel;	/* rel: % change, NAN when base is 0 */
};

static int usage_error(const char *msg)
{
	err_print("%s", msg);
	return EXIT_USAGE;
}

static void diff_usage(FILE *f)
{
	fputs("usage: tmabpf diff BASE.json NEW.json [--fail-on BUDGETS] [--top N] [--width N]\n"
	      "Deltas of time, calls, counters and TMA nodes per process, thread and function of two\n"
	      "JSON reports (tmabpf --json); threads are matched by process comm, thread comm and rank.\n"
	      "  --fail-on BUDGETS  exit 1 when a budget breaks, e.g.\n"
	      "                     'tma_backend_bound>+5pp,wall_ns>+5%,thread[gt-*].oncpu_ns>+10%'\n"
	      "                     [run|process|thread|function[GLOB].]METRIC (>|>=|<|<=) [+-]N (%|pp|none)\n"
	      "  --top N            changes shown, largest relative first (default 30; 0: all)\n"
	      "  --width N          text columns (terminal's, else 80)\n"
	      "Reports of another schema, or with a value of the wrong type (a string or NaN where a\n"
	      "number belongs), are refused with one line.\n"
	      "Exit status: 0 within budget, 1 a budget broke, 2 bad usage or unreadable report.\n"
	      "See tmabpf-diff(1).\n",
	      f);
}

/* ---- metrics of a row ---- */

static void add_metric(const char **names, int *n, const char *m)
{
	for (int i = 0; i < *n; i++)
		if (names[i] == m)	/* interned */
			return;
	if (*n < MAX_METRICS)
		names[(*n)++] = m;
}

/* The metric names of a row's two sides (fields, counters, TMA nodes). */
static int row_metrics(const struct drow *r, const char **names)
{
	int n = 0;

	for (int s = 0; s < 2; s++)
		for (unsigned int i = 0; i < r->side[s].n; i++)
			add_metric(names, &n, r->side[s].m[i].name);
	return n;
}

static bool rule_applies(const struct diff_rule *ru, const struct drow *r)
{
	if (ru->scope >= 0 && ru->scope != (int)r->kind)
		return false;
	return !ru->glob[0] || fnmatch(ru->glob, drow_leaf(r), 0) == 0;
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

/* The tables' columns: BASE goes first when the width is short, then NEW; ROW is elided in the
 * middle down to 28 columns before they go; BUDGET is the broken table's. */
static const struct text_col change_cols[] = {
	{ .name = "KIND", .prio = 1, .left = true }, { .name = "ROW", .prio = 1, .left = true, .min = 28 },
	{ .name = "METRIC", .prio = 1, .left = true }, { .name = "BASE", .prio = 3 }, { .name = "NEW", .prio = 2 },
	{ .name = "DELTA", .prio = 1 }, { .name = "BUDGET", .prio = 1, .left = true, .gap = 2 },
};

static int print_changes(struct change *ch, size_t n, int top, int width)
{
	char b[64], v[64], d[64], name[512], metric[512];
	struct text_hidden hid = {};
	struct text_table t;
	int rc = 0;

	if (!n) {
		printf("no differences\n");
		return 0;
	}
	qsort(ch, n, sizeof(*ch), cmp_change);
	text_table_init(&t, change_cols, 6);
	for (size_t i = 0; i < n && (top <= 0 || (int)i < top) && !rc; i++) {
		const char *cells[] = { diff_kind_name(ch[i].row->kind), text_safe(ch[i].row->name, name, sizeof(name)),
					text_safe(ch[i].metric, metric, sizeof(metric)), b, v, d };

		fmt_val(b, sizeof(b), ch[i].metric, ch[i].base);
		fmt_val(v, sizeof(v), ch[i].metric, ch[i].now);
		fmt_delta(d, sizeof(d), &ch[i]);
		rc = text_table_add(&t, cells);
	}
	if (!rc) {
		text_table_print(&t, stdout, width, &hid);
		if (top > 0 && n > (size_t)top)
			text_wrapf(stdout, width, 1, "(%zu more change%s; --top 0 shows all)", n - top,
				   n - top > 1 ? "s" : "");
		text_hidden_print(&hid, stdout, width);
	} else {
		err_print("out of memory comparing the reports");
	}
	text_table_free(&t);
	return rc ? 1 : 0;
}

static void print_unmatched(const struct diff_rows *rows, int width)
{
	char name[512], line[4096];

	for (int s = 0; s < 2; s++) {
		size_t cnt = 0;
		int n;

		for (size_t i = 0; i < rows->n; i++)
			cnt += rows->v[i].side[s].present && !rows->v[i].side[!s].present;
		if (!cnt)
			continue;
		n = snprintf(line, sizeof(line), "only in %s (%zu):", s ? "NEW" : "BASE", cnt);
		for (size_t i = 0, shown = 0; i < rows->n && shown < 8 && n < (int)sizeof(line); i++)
			if (rows->v[i].side[s].present && !rows->v[i].side[!s].present) {
				n += snprintf(line + n, sizeof(line) - n, " %s %s%s", diff_kind_name(rows->v[i].kind),
					      text_safe(rows->v[i].name, name, sizeof(name)), ++shown < cnt ? "," : "");
			}
		if (cnt > 8 && n < (int)sizeof(line))
			snprintf(line + n, sizeof(line) - n, " ...");
		text_wrap(stdout, width, 2, line);
	}
}

/* ---- budgets ---- */

static int check_rules(const struct diff_rows *rows, const struct diff_rule *rules, int nr, int width)
{
	const char *metric[nr ? nr : 1];
	struct text_hidden hid = {};
	struct text_table t;
	int broken = 0, judged = 0;

	/* a metric no row has is a typo: say so rather than pass */
	for (int k = 0; k < nr; k++)
		if (!(metric[k] = diff_metric_name(rows, rules[k].metric))) {
			const char *near = diff_metric_near(rows, rules[k].metric);

			err_print("budget '%s': no row of either report has metric '%s'%s%s%s (fields: oncpu_ns, "
				  "offcpu_ns, wall_ns, calls, ...; event names; tma_* nodes)", rules[k].text,
				  rules[k].metric, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
			return EXIT_USAGE;
		}
	text_table_init(&t, change_cols, 7);
	for (int k = 0; k < nr; k++)
		for (size_t i = 0; i < rows->n; i++) {
			const struct drow *r = &rows->v[i];
			double b, n, d;
			char bs[64], ns[64], ds[64], name[512];
			const char *cells[] = { diff_kind_name(r->kind), text_safe(r->name, name, sizeof(name)),
						rules[k].metric, bs, ns, ds, rules[k].text };

			if (!rule_applies(&rules[k], r) || !drow_metric(r, 0, metric[k], &b) ||
			    !drow_metric(r, 1, metric[k], &n))
				continue;
			if (!diff_rule_delta(&rules[k], b, n, &d))
				continue;
			judged++;
			if (!diff_rule_broken(&rules[k], d))
				continue;
			broken++;
			fmt_val(bs, sizeof(bs), rules[k].metric, b);
			fmt_val(ns, sizeof(ns), rules[k].metric, n);
			snprintf(ds, sizeof(ds), rules[k].unit == UNIT_PCT ? "%+.2f%%" : rules[k].unit == UNIT_PP ?
				 "%+.2fpp" : "%+.6g", d);
			if (text_table_add(&t, cells)) {
				err_print("out of memory comparing the reports");
				text_table_free(&t);
				return 1;
			}
		}
	if (broken) {	/* the rows, then the count, then what the width hid */
		printf("\nBUDGETS BROKEN:\n");
		text_table_print(&t, stdout, width, &hid);
		printf("%d budget%s broken\n", broken, broken > 1 ? "s" : "");
		text_hidden_print(&hid, stdout, width);
		text_table_free(&t);
		return 1;
	}
	text_table_free(&t);
	printf("\nbudgets: all %d hold (%d row checks)\n", nr, judged);
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fail-on", required_argument, NULL, 'f' }, { "top", required_argument, NULL, 'n' },
		{ "width", required_argument, NULL, 'w' }, { "help", no_argument, NULL, 'h' }, {},
	};
	const char *fail_on = NULL;
	struct diff_rule *rules = NULL;
	struct diff_rows rows = {};
	struct change *ch = NULL;
	size_t nch = 0, cap = 0;
	int c, top = 30, nr = 0, rc = 0, width = 0;
	char err[1024];

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'f': fail_on = optarg; break;
		case 'n': {
			char *end;
			long v;

			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 0 || v > 1000000)
				return usage_error("bad --top: expected an integer >= 0");
			top = (int)v;
			break;
		}
		case 'w':
			if (parse_int_at("diff: ", optarg, "--width", TEXT_WIDTH_MIN, 10000, &width))
				return EXIT_USAGE;
			break;
		case 'h': diff_usage(stdout); return 0;
		default: return getopt_error(c, argv, "diff: ", "tmabpf diff --help", opts);
		}
	}
	if (argc - optind != 2)
		return usage_error("diff: expected two reports: tmabpf diff BASE.json NEW.json [--fail-on BUDGETS]");
	if (fail_on && diff_rules_parse(fail_on, &rules, &nr, err, sizeof(err)))
		return usage_error(err);
	for (int s = 0; s < 2; s++)
		if (diff_report_load(&rows, s, argv[optind + s], err, sizeof(err))) {
			rc = usage_error(err);
			goto out;
		}
	for (size_t i = 0; i < rows.n; i++) {
		const char *names[MAX_METRICS];
		int nm;

		if (!rows.v[i].side[0].present || !rows.v[i].side[1].present)
			continue;
		nm = row_metrics(&rows.v[i], names);
		for (int m = 0; m < nm; m++) {
			double b, n;

			if (!drow_metric(&rows.v[i], 0, names[m], &b) || !drow_metric(&rows.v[i], 1, names[m], &n) || b == n)
				continue;
			if (nch == cap) {
				struct change *nc = realloc(ch, (cap = cap ? cap * 2 : 128) * sizeof(*nc));

				if (!nc) {
					err_print("out of memory comparing the reports");
					rc = 1;
					goto out;
				}
				ch = nc;
			}
			ch[nch++] = (struct change){ .row = &rows.v[i], .metric = names[m], .base = b, .now = n,
						     .rel = b ? 100.0 * (n - b) / fabs(b) : NAN };
		}
	}
	width = text_width(stdout, width);
	text_wrapf(stdout, width, 2, "tmabpf diff: %s -> %s", argv[optind], argv[optind + 1]);
	rc = print_changes(ch, nch, top, width);
	print_unmatched(&rows, width);
	if (nr && !rc)
		rc = check_rules(&rows, rules, nr, width);
out:
	free(ch);
	diff_rows_free(&rows);
	free(rules);
	return rc;
}
