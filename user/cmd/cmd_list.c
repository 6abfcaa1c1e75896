// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* tmabpf list [--cpu NAME]: CPU, recipe, counters, TMA events and libpfm4 events. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/cmd_list.h"
#include "lib/parse.h"
#include "lib/text_fit.h"
#include "pmu/cpu_detect.h"
#include "pmu/events.h"
#include "pmu/pfm_enc.h"
#include "tma/tma_recipes.h"
#include "tma/tma.h"
#include "pmu/tma_env_host.h"

static void print_name(const char *name, const char *desc, void *arg)
{
	int *col = arg;
	int l = (int)strlen(name) + 2;
	if (*col + l > text_width(stdout, 0)) {
		printf("\n   ");
		*col = 3;
	}
	printf(" %s", name);
	*col += l;
	(void)desc;
}

int cmd_list(int argc, char **argv)
{
	const char *cpuname = NULL;
	char desc[256] = "", why[256] = "", pwhy[256];
	const struct tma_cpu *c;

	for (int i = 1; i < argc; i++) {
		const char *v = parse_opt_value(argc, argv, &i, "--cpu");

		if (v && *v)
			cpuname = v;
		else if (!v && (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))) {
			printf("usage: tmabpf list [--cpu NAME]\n"
			       "The host's CPU, PMU and TMA recipe, or CPU NAME's: counters, encodings, the events\n"
			       "of each TMA level.  See tmabpf-list(1).\n");
			return 0;
		} else {
			fprintf(stderr, "tmabpf list: unknown argument '%s' (usage: tmabpf list [--cpu NAME])\n", argv[i]);
			return 2;
		}
	}
	const struct tma_cpu *host = tma_cpu_detect(desc, sizeof(desc), why, sizeof(why));
	bool pmu = events_host_has_pmu(pwhy, sizeof(pwhy));
	int w = text_width(stdout, 0);	/* lines wrapped to it: the terminal's, else 80 */

	text_wrapf(stdout, w, 2, "host CPU: %s", desc);
	text_wrapf(stdout, w, 2, "host PMU: %s", pmu ? pwhy : "hardware counters are unavailable (virtualised, no cpu PMU); TMA skipped, software events only");
	if (cpuname) {
		c = tma_cpu_by_name(cpuname);
		if (!c) {
			fprintf(stderr, "tmabpf list: unknown CPU name '%s' (known: %s)\n", cpuname, tma_cpu_names());
			return 2;
		}
	} else {
		c = host;
		if (!c)
			text_wrapf(stdout, w, 2, "recipe: none (%s)", why);
	}
	text_wrapf(stdout, w, 2, "recipes: %s", tma_cpu_names());
	if (!c)
		return 0;
	struct tma_env env;
	tma_env_host(&env);
	text_wrapf(stdout, w, 2, "recipe: %s (%s), TMA levels 1..%d on runs, 1..%d with analyze, pipeline width %d slots",
		   c->name, c->desc, c->run_max_level, c->max_level, c->slots);
	text_wrapf(stdout, w, 2, "counters: %d fixed + %d general per thread (%d with SMT off)%s; %s", c->fixed_counters,
		   c->gp_counters, c->gp_counters_smt_off, env.nmi_watchdog ? "; NMI watchdog on: it holds one" : "",
		   c->notes);
	text_wrapf(stdout, w, 2, "encodings: %s", c->pfm_pmu ? c->pfm_pmu : "built-in raw table (libpfm4 4.13 has no PMU for it)");
	struct tma_needs *nd = malloc(sizeof(*nd));
	for (int lvl = 1; nd && lvl <= c->run_max_level; lvl++) {
		struct tma_plan *p = malloc(sizeof(*p));
		char err[256];
		int n = !p || tma_plan_init(p, c, lvl, true, &env, err, sizeof(err)) ? -1 :
			tma_needed_events(p, tma_run_formulation(c), nd);
		free(p);
		if (n < 0)
			break;
		char line[4096];
		int at = snprintf(line, sizeof(line), "TMA level %d needs %d events%s:", lvl, n,
				  c->gc ? " (general-counter formulation)" : "");

		for (int k = 0; k < n && at < (int)sizeof(line); k++)
			at += snprintf(line + at, sizeof(line) - at, "%s %s", k ? "," : "", nd->key[k]);
		text_wrap(stdout, w, 2, line);
	}
	free(nd);
	if (c->pfm_pmu) {
		int col = 3;
		text_wrapf(stdout, w, 2, "libpfm4 events for %s (use with -e, e.g. -e inst_retired.any_p or INST_RETIRED:ANY_P):",
			   c->pfm_pmu);
		printf("   ");
		int n = pfm_enc_list(c->pfm_pmu, print_name, &col);
		printf("\n(%d events)\n", n < 0 ? 0 : n);
	}
	return 0;
}
