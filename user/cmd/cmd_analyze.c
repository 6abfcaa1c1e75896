// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * tmabpf analyze: TMA from a `perf stat -x,` CSV recorded on any machine.
 * Every node of perf's tree that the CSV's events make computable, at every
 * level (or up to --tma=N); one tree per row of a --per-thread, -A,
 * --per-core, --per-socket ... CSV plus the total.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/cmd_analyze.h"
#include "cmd/perf_csv.h"
#include "lib/json.h"
#include "lib/parse.h"
#include "output/tma_output.h"
#include "pmu/cpu_detect.h"
#include "tma/tma_recipes.h"
#include "tma/tma.h"

/* One line on stderr; the exit code for bad input. */
__attribute__((format(printf, 1, 2))) static int fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "tmabpf analyze: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	return 2;
}

static bool csv_has(const struct perf_csv *csv, const char *key)
{
	char k[TMA_KEY_LEN];
	for (int i = 0; i < csv->n; i++)
		if (!tma_event_key(csv->ev[i].name, k, sizeof(k)) && !strcmp(k, key))
			return true;
	return false;
}

/* the tree of one row (row < 0: the whole file) */
static int compute_row(const struct tma_plan *p, const struct perf_csv *csv, int row, struct tma_result *res)
{
	const char *names[PERF_CSV_MAX_EVENTS];
	double vals[PERF_CSV_MAX_EVENTS], pct[PERF_CSV_MAX_EVENTS];
	int n = 0;

	for (int i = 0; i < csv->n; i++) {
		const struct perf_csv_event *ev = &csv->ev[i];
		if (row >= 0) {
			const struct perf_csv_row *r = &csv->row[row];
			if (!(r->flags[i] & PERF_CSV_SEEN))
				continue;
			names[n] = ev->name;
			/* <not counted> is 0, as in perf; <not supported> is NaN */
			vals[n] = r->flags[i] & PERF_CSV_NOT_SUPPORTED ? NAN : r->value[i];
			pct[n++] = r->pct[i];
		} else {
			names[n] = ev->name;
			vals[n] = ev->not_supported ? NAN : ev->value;
			pct[n++] = ev->pct;
		}
	}
	return tma_compute_named(p, n, names, vals, pct, res);
}

static bool any_computable(const struct tma_result *r)
{
	for (int i = 0; i < r->n; i++)
		if (r->node[i].computable && r->node[i].nevents)
			return true;
	return false;
}

/* No TMA event in the file: what was read, and the perf stat command that collects them. */
static int no_tma_events(const char *file, const struct tma_cpu *c, const struct perf_csv *csv,
			 const struct tma_env *env)
{
	fprintf(stderr, "tmabpf analyze: %s has none of the events TMA needs on %s\n", file, c->name);
	fprintf(stderr, "  read: %d line%s, %d event%s%s", csv->lines, csv->lines == 1 ? "" : "s", csv->n,
		csv->n == 1 ? "" : "s", csv->n ? ":" : "");
	for (int i = 0; i < csv->n && i < 8; i++)
		fprintf(stderr, " %s %s%.0f", csv->ev[i].name, csv->ev[i].not_supported ? "<not supported> " : "",
			csv->ev[i].value);
	fprintf(stderr, "%s\n", csv->n > 8 ? " ..." : "");
	struct tma_plan *p = malloc(sizeof(*p));
	struct tma_needs *nd = malloc(sizeof(*nd));
	char err[256], name[TMA_KEY_LEN + 16];
	int lvl = c->run_max_level < 2 ? c->run_max_level : 2;
	if (p && nd && !tma_plan_init(p, c, lvl, true, env, err, sizeof(err)) &&
	    tma_needed_events(p, tma_run_formulation(c), nd) > 0) {
		fprintf(stderr, "  collect levels 1-%d on %s with: perf stat -x, -o %s -a -e ", lvl, c->name, file);
		for (int k = 0; k < nd->nkey; k++)
			if (!tma_event_perf_name(nd->key[k], name, sizeof(name)))
				fprintf(stderr, "%s%s", k ? "," : "", name);
		fprintf(stderr, " -- COMMAND\n");
	}
	free(p);
	free(nd);
	fprintf(stderr, "  or with perf's metric groups: perf stat -x, -o %s -a -M %s -- COMMAND\n", file,
		c->vendor == TMA_AMD ? "PipelineL1,PipelineL2" : c->vendor == TMA_ARM ? "TopdownL1" :
		"TopdownL1,TopdownL2,TopdownL3");
	return 2;
}

/* perf's own metric values in the file vs ours */
static void check_printed(const struct perf_csv *csv, int row, const struct tma_result *res, int *agree, int *differ,
			  const char *rowname)
{
	for (int i = 0; i < csv->nmetric; i++) {
		if (csv->metric[i].row != row)
			continue;
		double mine = tma_result_get(res, csv->metric[i].name);
		if (isnan(mine))
			continue;
		if (fabs(mine - csv->metric[i].value) <= 0.051 + 1e-3 * fabs(mine)) {
			(*agree)++;
		} else {
			(*differ)++;
			printf("  note: %s%sperf printed %s %.1f, tmabpf computes %.1f\n", rowname, rowname[0] ? ": " : "",
			       csv->metric[i].name, csv->metric[i].value, mine);
		}
	}
}

static void print_counter_notes(const struct perf_csv *csv)
{
	int nmux = 0;
	double low = 100;

	for (int i = 0; i < csv->n; i++) {
		if (csv->ev[i].not_supported)
			printf("  counter %s: <not supported> (perf cannot use it: its metrics are null)\n", csv->ev[i].name);
		else if (csv->ev[i].not_counted)
			printf("  counter %s: <not counted> (perf uses 0)\n", csv->ev[i].name);
		else if (csv->ev[i].pct < 100) {
			nmux++;
			low = csv->ev[i].pct < low ? csv->ev[i].pct : low;
		}
	}
	if (nmux)
		printf("  %d counters were multiplexed (lowest percent running %.2f%%); perf scaled them by enabled/running\n",
		       nmux, low);
}

static void json_tree(struct json *j, const struct tma_result *r)
{
	tma_result_json(r, j, "tma");
	tma_result_json_why(r, j, "why_null");
}

/* one row per key: key, level-1 values, bottleneck path */
static void print_rows(const struct tma_plan *p, const struct perf_csv *csv, const struct tma_result *total)
{
	struct tma_result *r = malloc(sizeof(*r));
	int l1[8], nl1 = 0, w = 8;
	char path[512];

	if (!r)
		return;
	for (int i = 0; i < total->n && nl1 < 8; i++)
		if (total->node[i].parent < 0)
			l1[nl1++] = i;
	for (int i = 0; i < csv->nrow; i++)
		if ((int)strlen(csv->row[i].key) > w)
			w = (int)strlen(csv->row[i].key);
	printf("%-*s", w, perf_csv_aggr_name(csv->aggr));
	for (int k = 0; k < nl1; k++)
		printf(" %*s", (int)strlen(total->node[l1[k]].label) > 7 ? (int)strlen(total->node[l1[k]].label) : 7,
		       total->node[l1[k]].label);
	printf("  bottleneck\n");
	for (int i = 0; i <= csv->nrow; i++) {
		const struct tma_result *t = i < csv->nrow ? r : total;
		if (i < csv->nrow && compute_row(p, csv, i, r))
			continue;
		printf("%-*s", w, i < csv->nrow ? csv->row[i].key : "total");
		for (int k = 0; k < nl1; k++) {
			int cw = (int)strlen(total->node[l1[k]].label) > 7 ? (int)strlen(total->node[l1[k]].label) : 7;
			double v = tma_result_get(t, total->node[l1[k]].name);
			if (isnan(v))
				printf(" %*s", cw, "n/a");
			else
				printf(" %*.1f%%", cw - 1, v);
		}
		if (tma_bottleneck_path(t, path, sizeof(path)) < 0)
			snprintf(path, sizeof(path), "-");
		printf("  %s\n", path);
	}
	free(r);
}

/* everything one analysis holds (large: on the heap) */
struct analysis {
	struct perf_csv csv;
	struct tma_plan plan;
	struct tma_result total, row;
};

/* one file: parse, plan, the trees, the output; 0 or the exit status */
static int analyze_file(struct analysis *an, const char *file, const struct tma_cpu *c, struct tma_env *env,
			bool core_wide_set, int level, bool json)
{
	struct perf_csv *csv = &an->csv;
	char err[512];

	if (perf_csv_load(file, csv, err, sizeof(err)))
		return fail("%s", err);
	if (!core_wide_set && csv->aggr == PERF_CSV_THREAD)
		env->core_wide = 0;	/* --per-thread counts a thread, not its core */
	if (csv_has(csv, "MEM_LOAD_RETIRED.LOCAL_PMM"))
		env->has_pmem = 1;
	if (level > c->max_level)
		return fail("--tma=%d: %s's tree has levels 1..%d", level, c->name, c->max_level);
	struct tma_plan *plan = &an->plan;
	if (tma_plan_init(plan, c, level ? level : c->max_level, false, env, err, sizeof(err)))
		return fail("%s", err);
	struct tma_result *res = &an->total, *rr = &an->row;
	int r = compute_row(plan, csv, -1, res);
	if (r)
		return fail("computing the tree: %s", strerror(-r));
	if (!any_computable(res))
		return no_tma_events(file, c, csv, env);
	bool rows = csv->aggr != PERF_CSV_GLOBAL && csv->nrow > 0;
	if (json) {
		struct json j;
		json_init(&j, stdout, true);
		if (rows) {
			json_arr_begin(&j, NULL);
			for (int i = 0; i <= csv->nrow; i++) {
				if (i < csv->nrow && compute_row(plan, csv, i, rr))
					continue;
				json_obj_begin(&j, NULL);
				json_str(&j, "key", i < csv->nrow ? csv->row[i].key : "total");
				json_str(&j, "kind", i < csv->nrow ? perf_csv_aggr_name(csv->aggr) : "total");
				json_tree(&j, i < csv->nrow ? rr : res);
				json_obj_end(&j);
			}
			json_arr_end(&j);
		} else {
			json_obj_begin(&j, NULL);
			for (int i = 0; i < res->n; i++)
				json_double(&j, res->node[i].name, res->node[i].value);
			tma_result_json_why(res, &j, "why_null");
			json_obj_end(&j);
		}
		json_end(&j);
		return 0;
	}
	int nshown = 0, maxlvl = 0;
	for (int i = 0; i < res->n; i++) {
		nshown += res->node[i].computable;
		if (res->node[i].computable && res->node[i].level > maxlvl)
			maxlvl = res->node[i].level;
	}
	printf("CPU %s (%s); formulas: perf's %s metrics (%s); levels 1..%d: %d nodes computable from %s; "
	       "#SMT_on=%d #core_wide=%d%s\n", c->name, c->desc, c->vendor == TMA_INTEL ? "TMA" : "topdown",
	       res->formulation, plan->level, nshown, file, env->smt_on, env->core_wide, env->has_pmem ? " #has_pmem=1" : "");
	if (rows) {
		printf("%d %ss%s; level 1 and the bottleneck path of each:\n", csv->nrow, perf_csv_aggr_name(csv->aggr),
		       csv->intervals > 1 ? " (intervals summed)" : "");
		print_rows(plan, csv, res);
		printf("total, every computable node (deepest level %d):\n", maxlvl);
	}
	tma_result_print(res, stdout, 2);
	char path[512];
	if (tma_bottleneck_path(res, path, sizeof(path)) < 0)
		snprintf(path, sizeof(path), "(none: no node could be computed)");
	printf("Bottleneck: %s\n", path);
	int agree = 0, differ = 0;
	check_printed(csv, -1, res, &agree, &differ, "");
	for (int i = 0; rows && i < csv->nrow; i++)
		if (!compute_row(plan, csv, i, rr))
			check_printed(csv, i, rr, &agree, &differ, csv->row[i].key);
	if (agree + differ)
		printf("Checked against the metrics perf printed: %d agree, %d differ\n", agree, differ);
	print_counter_notes(csv);
	return 0;
}

int cmd_analyze(int argc, char **argv)
{
	const char *file = NULL, *cpuname = NULL, *v;
	bool json = false, core_wide_set = false;
	int level = 0;
	struct tma_env env;

	memset(&env, 0, sizeof(env));
	env.smt_on = 0;		/* a CSV does not say: perf's defaults for perf stat -a */
	env.core_wide = 1;
	env.prefer_perf = 1;
	for (int i = 1; i < argc; i++) {
		if ((v = parse_opt_value(argc, argv, &i, "--cpu"))) {
			cpuname = v;
		} else if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if ((v = parse_opt_value(argc, argv, &i, "--smt"))) {
			if (strcmp(v, "on") && strcmp(v, "off"))
				return fail("--smt takes on|off, not '%s'", v);
			env.smt_on = !strcmp(v, "on");
		} else if ((v = parse_opt_value(argc, argv, &i, "--core-wide"))) {
			if (strcmp(v, "yes") && strcmp(v, "no"))
				return fail("--core-wide takes yes|no, not '%s'", v);
			env.core_wide = !strcmp(v, "yes");
			core_wide_set = true;
		} else if ((v = parse_opt_value(argc, argv, &i, "--tma"))) {
			char *end;
			level = (int)strtol(v, &end, 10);
			if (!*v || *end || level < 1 || level > 6)
				return fail("--tma takes a level from 1 to 6, not '%s'", v);
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: tmabpf analyze FILE.csv [--cpu NAME] [--json] [--smt on|off] [--core-wide yes|no] [--tma=N]\n"
			       "  FILE.csv: output of perf stat -x, -e ... (or -M ...), aggregated or --per-thread, -A,\n"
			       "  --per-core, --per-socket, ...; CPU names: %s\n"
			       "See tmabpf-analyze(1).\n", tma_cpu_names());
			return 0;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return fail("unknown option '%s' (see tmabpf analyze --help)", argv[i]);
		} else if (!file) {
			file = argv[i];
		} else {
			return fail("more than one CSV file ('%s', '%s')", file, argv[i]);
		}
	}
	if (!file)
		return fail("missing FILE.csv (usage: tmabpf analyze FILE.csv [--cpu NAME] [--json])");
	const struct tma_cpu *c;
	if (cpuname) {
		c = tma_cpu_by_name(cpuname);
		if (!c)
			return fail("unknown CPU name '%s' (known: %s)", cpuname, tma_cpu_names());
	} else {
		char desc[256], why[256];
		c = tma_cpu_detect(desc, sizeof(desc), why, sizeof(why));
		if (!c)
			return fail("%s; name the CPU the CSV came from with --cpu NAME", why);
	}
	struct analysis *an = calloc(1, sizeof(*an));
	if (!an)
		return fail("out of memory");
	int r = analyze_file(an, file, c, &env, core_wide_set, level, json);
	perf_csv_free(&an->csv);
	free(an);
	return r;
}
