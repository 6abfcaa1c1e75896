// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The TMA engine's compiled-formula cache gives the same results as a fresh
 * compile: every recipe and level, computed cold (cache dropped), warm, and
 * again after switching recipe, level and #SMT_on in between; from planned
 * events (tma_compute, with a raw-encoded alias; hash_encoder.h encodes) and from named values
 * (tma_compute_named).  Values are compared bit for bit (NaN included), with
 * the scaled/ungrouped flags, the null reasons and the missing-events note.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "tma/tma.h"
#include "tma/tma_cache.h"
#include "tma/tma_recipes.h"
#include "hash_encoder.h"

#define MAXCASE 128
struct tcase {
	const struct tma_cpu *c;
	int level, smt;
	struct tma_result named, planned;
	bool planned_ok;
};
static struct tcase cases[MAXCASE];
static int ncase;

static double val_of(const char *key)
{
	uint64_t h = 1469598103934665603ULL;
	for (const char *p = key; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	return 1e7 * (1 + h % 997);
}

static bool same(const struct tma_result *a, const struct tma_result *b)
{
	if (a->n != b->n || a->formulation != b->formulation || strcmp(a->missing, b->missing))
		return false;
	for (int i = 0; i < a->n; i++) {
		const struct tma_node *x = &a->node[i], *y = &b->node[i];
		if (strcmp(x->name, y->name) || memcmp(&x->value, &y->value, sizeof(double)) ||
		    x->scaled != y->scaled || x->ungrouped != y->ungrouped || x->parent != y->parent || strcmp(x->why, y->why) ||
		    memcmp(&x->min_running, &y->min_running, sizeof(double)))
			return false;
	}
	return true;
}

static struct tma_env env_of(int smt)
{
	struct tma_env e = { .smt_on = smt };
	return e;
}

/* named values: every key the whole recipe names at this level, but one */
static void compute_named(const struct tcase *t, struct tma_result *r)
{
	static struct tma_needs nd;
	static struct tma_plan p;
	const char *names[TMA_EXPR_MAX_IDS];
	double vals[TMA_EXPR_MAX_IDS], pct[TMA_EXPR_MAX_IDS];
	struct tma_env e = env_of(t->smt);
	char err[256];

	if (tma_plan_init(&p, t->c, t->level, false, &e, err, sizeof(err)))
		return;
	int n = tma_needed_events(&p, t->c->perf, &nd);
	for (int i = 0; i < n; i++) {
		names[i] = nd.key[i];
		vals[i] = val_of(nd.key[i]);
		pct[i] = i % 3 ? 100 : 60;
	}
	tma_compute_named(&p, n > 1 ? n - 1 : n, names, vals, pct, r);
}

/* planned events; the first one renamed to its raw encoding (-e rXXXX) */
static bool compute_planned(const struct tcase *t, struct tma_result *r)
{
	static struct tma_plan p;
	struct tma_count c[TMABPF_MAX_EVENTS];
	struct tma_env e = env_of(t->smt);
	char err[256], rname[32];

	if (t->level > t->c->run_max_level ||
	    tma_plan(&p, t->c, t->level, TMABPF_MAX_EVENTS, &e, hash_encoder, err, sizeof(err)))
		return false;
	for (int i = 0; i < p.nev; i++)
		c[i] = (struct tma_count){ .name = p.ev[i].name, .attr = &p.ev[i].attr, .group = p.ev[i].group,
					   .value = val_of(p.ev[i].name), .pct = p.ev[i].group == 0 ? 100 : 50 };
	if (p.nev && p.ev[0].attr.type == PERF_TYPE_RAW) {
		snprintf(rname, sizeof(rname), "r%llx", (unsigned long long)p.ev[0].attr.config);
		c[0].name = rname;
	}
	tma_compute(&p, p.nev, c, r);
	return true;
}

int main(void)
{
	static struct tma_result r;

	for (int i = 0; i < tma_ncpus; i++)
		for (int lvl = 1; lvl <= tma_cpus[i]->max_level; lvl++)
			for (int smt = 0; smt < 2 && ncase < MAXCASE; smt++)
				cases[ncase++] = (struct tcase){ .c = tma_cpus[i], .level = lvl, .smt = smt };
	/* cold: each case right after dropping the cache */
	int nvalues = 0, nraw = 0;
	for (int i = 0; i < ncase; i++) {
		tma_cache_reset();
		cases[i].planned_ok = compute_planned(&cases[i], &cases[i].planned);
		tma_cache_reset();
		compute_named(&cases[i], &cases[i].named);
		for (int k = 0; k < cases[i].named.n; k++)
			nvalues += !isnan(cases[i].named.node[k].value);
		nraw += cases[i].planned_ok;
	}
	check(ncase >= 20 && nvalues > 100, "%d cases (recipe x level x SMT), %d values computed cold", ncase, nvalues);
	/* warm: the same case twice in a row */
	bool ok_named = true, ok_planned = true;
	for (int i = 0; i < ncase; i++)
		for (int rep = 0; rep < 2; rep++) {
			if (cases[i].planned_ok) {
				compute_planned(&cases[i], &r);
				ok_planned &= same(&r, &cases[i].planned);
			}
			compute_named(&cases[i], &r);
			ok_named &= same(&r, &cases[i].named);
		}
	check(ok_named, "tma_compute_named: warm cache == cold, every recipe and level");
	check(ok_planned, "tma_compute on planned events (%d plans): warm cache == cold", nraw);
	/* switches: recipes, levels and SMT interleaved, backwards and strided */
	bool ok_switch = true;
	int bad = -1;
	for (int pass = 0; pass < 3; pass++)
		for (int j = 0; j < ncase; j++) {
			int i = pass == 0 ? ncase - 1 - j : pass == 1 ? (j * 7) % ncase : (j * 13 + 5) % ncase;
			bool ok = true;
			if (cases[i].planned_ok) {
				compute_planned(&cases[i], &r);
				ok &= same(&r, &cases[i].planned);
			}
			compute_named(&cases[i], &r);
			ok &= same(&r, &cases[i].named);
			if (!ok && bad < 0)
				bad = i;
			ok_switch &= ok;
		}
	check(ok_switch, "after recipe/level/SMT switches == cold%s%s", bad < 0 ? "" : "; first bad: ",
	      bad < 0 ? "" : cases[bad].c->name);
	return check_exit();
}
