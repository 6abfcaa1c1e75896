// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* tmabpf analyze: TMA from a `perf stat -x,` CSV recorded on any machine. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd_analyze.h"
#include "cpu_detect.h"
#include "json.h"
#include "perf_csv.h"
#include "tma.h"
#include "tma_recipes.h"

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

/* value of --opt=V or --opt V; advances *i */
static const char *optval(int argc, char **argv, int *i, const char *opt)
{
	size_t l = strlen(opt);
	if (!strncmp(argv[*i], opt, l) && argv[*i][l] == '=')
		return argv[*i] + l + 1;
	if (!strcmp(argv[*i], opt)) {
		if (*i + 1 >= argc)
			return "";
		return argv[++*i];
	}
	return NULL;
}

static bool csv_has(const struct perf_csv *csv, const char *key)
{
	char k[TMA_KEY_LEN];
	for (int i = 0; i < csv->n; i++)
		if (!tma_event_key(csv->ev[i].name, k, sizeof(k)) && !strcmp(k, key))
			return true;
	return false;
}

/* highest level whose events (either formulation) are all in the CSV; 0 if none */
static int csv_level(const struct tma_cpu *c, const struct perf_csv *csv, char *missing, size_t mlen)
{
	char keys[64][TMA_KEY_LEN];
	missing[0] = 0;
	for (int lvl = c->max_level; lvl >= 1; lvl--)
		for (int gc = 0; gc < 2; gc++) {
			int n = tma_needed_events(c, gc, lvl, keys, 64), miss = 0;
			for (int k = 0; k < n; k++)
				miss += !csv_has(csv, keys[k]);
			if (!miss)
				return lvl;
			if (lvl == 1 && gc == 0)
				for (int k = 0; k < n; k++)
					if (!csv_has(csv, keys[k])) {
						size_t l = strlen(missing);
						snprintf(missing + l, mlen - l, "%s%.95s", l ? ", " : "", keys[k]);
					}
		}
	return 0;
}

int cmd_analyze(int argc, char **argv)
{
	const char *file = NULL, *cpuname = NULL, *v;
	bool json = false;
	int level = 0;
	struct tma_env env;
	char err[512];

	tma_env_host(&env);
	env.smt_on = 0;		/* a CSV does not say: perf's defaults for perf stat -a */
	env.core_wide = 1;
	env.nmi_watchdog = 0;
	env.prefer_perf = 1;
	for (int i = 1; i < argc; i++) {
		if ((v = optval(argc, argv, &i, "--cpu"))) {
			cpuname = v;
		} else if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if ((v = optval(argc, argv, &i, "--smt"))) {
			if (strcmp(v, "on") && strcmp(v, "off"))
				return fail("--smt takes on|off, not '%s'", v);
			env.smt_on = !strcmp(v, "on");
		} else if ((v = optval(argc, argv, &i, "--core-wide"))) {
			if (strcmp(v, "yes") && strcmp(v, "no"))
				return fail("--core-wide takes yes|no, not '%s'", v);
			env.core_wide = !strcmp(v, "yes");
		} else if ((v = optval(argc, argv, &i, "--tma"))) {
			char *end;
			level = (int)strtol(v, &end, 10);
			if (!*v || *end || level < 1 || level > 3)
				return fail("--tma takes 1, 2 or 3, not '%s'", v);
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: tmabpf analyze FILE.csv [--cpu NAME] [--json] [--smt on|off] [--core-wide yes|no] [--tma=N]\n"
			       "  FILE.csv: output of perf stat -x, -e ... (or -M ...); CPU names: %s\n"
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
	static struct perf_csv csv;
	if (perf_csv_load(file, &csv, err, sizeof(err)))
		return fail("%s", err);
	if (csv_has(&csv, "MEM_LOAD_RETIRED.LOCAL_PMM"))
		env.has_pmem = 1;
	tma_set_env(&env);
	char missing[512];
	int have = csv_level(c, &csv, missing, sizeof(missing));
	if (!level)
		level = have ? have : 1;
	if (level > c->max_level)
		level = c->max_level;
	/* any TMA event at all? */
	char keys[64][TMA_KEY_LEN];
	int any = 0;
	for (int gc = 0; gc < 2; gc++) {
		int n = tma_needed_events(c, gc, c->max_level, keys, 64);
		for (int k = 0; k < n; k++)
			any += csv_has(&csv, keys[k]);
	}
	if (!any)
		return fail("%s has none of the events TMA needs on %s (level 1 needs: %s)", file, c->name,
			    missing[0] ? missing : "see tmabpf list");
	const char *names[PERF_CSV_MAX_EVENTS];
	static double vals[PERF_CSV_MAX_EVENTS], pct[PERF_CSV_MAX_EVENTS];
	for (int i = 0; i < csv.n; i++) {
		names[i] = csv.ev[i].name;
		vals[i] = csv.ev[i].not_supported ? NAN : csv.ev[i].value;	/* <not counted> is 0, as in perf */
		pct[i] = csv.ev[i].pct;
	}
	static struct tma_result res;
	tma_compute_named(c, level, csv.n, names, vals, pct, &res);
	char path[512];
	if (tma_bottleneck_path(&res, path, sizeof(path)) < 0)
		snprintf(path, sizeof(path), "(none: no node could be computed)");
	if (json) {
		struct json j;
		json_init(&j, stdout, true);
		json_obj_begin(&j, NULL);
		for (int i = 0; i < res.n; i++)
			json_double(&j, res.node[i].name, res.node[i].value);
		json_obj_end(&j);
		json_end(&j);
		return 0;
	}
	printf("CPU %s (%s); formulas: perf's %s metrics (%s); --tma=%d; #SMT_on=%d #core_wide=%d%s\n",
	       c->name, c->desc, c->vendor == TMA_INTEL ? "TMA" : "topdown", res.formulation, level, env.smt_on,
	       env.core_wide, env.has_pmem ? " #has_pmem=1" : "");
	tma_result_print(&res, stdout, 2);
	printf("Bottleneck: %s\n", path);
	int agree = 0, differ = 0;
	for (int i = 0; i < csv.nmetric; i++) {
		double mine = tma_result_get(&res, csv.metric[i].name);
		if (isnan(mine))
			continue;
		if (fabs(mine - csv.metric[i].value) <= 0.051 + 1e-3 * fabs(mine))
			agree++;
		else {
			differ++;
			printf("  note: perf printed %s %.1f, tmabpf computes %.1f\n", csv.metric[i].name,
			       csv.metric[i].value, mine);
		}
	}
	if (agree + differ)
		printf("Checked against the metrics perf printed: %d agree, %d differ\n", agree, differ);
	int nmux = 0;
	double low = 100;
	for (int i = 0; i < csv.n; i++) {
		if (csv.ev[i].not_supported)
			printf("  counter %s: <not supported> (perf cannot use it: its metrics are null)\n", csv.ev[i].name);
		else if (csv.ev[i].not_counted)
			printf("  counter %s: <not counted> (perf uses 0)\n", csv.ev[i].name);
		else if (csv.ev[i].pct < 100) {
			nmux++;
			low = csv.ev[i].pct < low ? csv.ev[i].pct : low;
		}
	}
	if (nmux)
		printf("  %d counters were multiplexed (lowest percent running %.2f%%); perf scaled them by enabled/running\n",
		       nmux, low);
	return 0;
}
