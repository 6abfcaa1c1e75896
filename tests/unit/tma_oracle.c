// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * tma_oracle: a recipe against perf itself.  tests/test_tma_perf.py runs perf
 * 6.12 (`perf list -j --details` with PERF_CPUID naming the CPU) and hands
 * this program perf's tables as TSV; nothing here knows perf's answers.
 *
 *   tma_oracle formulas CPU METRICS.tsv [SETS]
 *     METRICS.tsv: name, level, parent, scale, expression (perf's MetricExpr)
 *     - every node of perf's tree is in the recipe with perf's level, parent
 *       and scale, and every recipe node is in perf's tree;
 *     - on SETS random count sets plus edge cases (all zero, zero cycles, zero
 *       slots, missing events, <not supported>, multiplexed) under 8 literal
 *       settings (#SMT_on, #core_wide, #has_pmem), the engine's tree
 *       (tma_compute_named) equals perf's expressions evaluated with the
 *       project's evaluator, node by node; a node is computable exactly when
 *       perf's compute_ids pass finds all its events.
 *   tma_oracle gc CPU METRICS.tsv [SETS]
 *     the general-counter formulation the BPF path uses (Ice Lake-X, Sapphire
 *     Rapids) against perf's perf-metrics formulas, on counts where each
 *     general-counter event equals the perf-metrics fraction it stands for.
 *   tma_oracle flops CPU METRICS.tsv [SETS]
 *     perf's FLOPs metric (tma_info_system_gflops) against the engine's
 *     measured FLOPs (tma_flops_named): the recipe has it exactly when perf
 *     does; its events are the ones perf's compute_ids finds; on SETS random
 *     count sets and durations, plus all zero and each event missing in turn,
 *     the engine's GFLOP/s equals perf's expression and its FLOPs equal perf's
 *     GFLOP/s x 1e9 x duration; a missing event gives no figure, never 0.
 *   tma_oracle encodings CPU EVENTS.tsv
 *     EVENTS.tsv: perf event name, encoding terms (event=0xc0,umask=0x1,...);
 *     every attr --dry-run --tma=N prints (every level, SMT and watchdog
 *     setting) against perf's table, else libpfm4; skips named with a reason.
 * Prints ok/not ok lines and a summary; exits 1 on any mismatch.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "check.h"
#include "pmu/pfm_enc.h"
#include "tma/tma.h"
#include "tma/tma_expr.h"
#include "tma/tma_recipes.h"
#include "pmu/key_encode.h"

/* ---------------- perf's tables ---------------- */

struct pm {
	char *name, *parent, *expr;
	int level;
	double scale;
};
static struct pm pms[2048];
static int npm;

static char *field(char **p)
{
	char *s = *p, *t = strchr(s, '\t');
	if (t) {
		*t = 0;
		*p = t + 1;
	} else {
		*p = s + strlen(s);
	}
	return s;
}

static int load_metrics(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[8192];

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && npm < 2048) {
		line[strcspn(line, "\n")] = 0;
		char *p = line;
		struct pm *m = &pms[npm++];
		m->name = strdup(field(&p));
		m->level = atoi(field(&p));
		char *par = field(&p);
		m->parent = *par ? strdup(par) : NULL;
		m->scale = atof(field(&p));
		m->expr = strdup(field(&p));
	}
	fclose(f);
	return npm;
}

static struct pm *perf_metric(const char *name)
{
	for (int i = 0; i < npm; i++)
		if (!strcasecmp(pms[i].name, name))
			return &pms[i];
	return NULL;
}

static const struct tma_metric *recipe_metric(const struct tma_formulation *f, const char *name)
{
	for (; f; f = f->base)
		for (int i = 0; i < f->n; i++)
			if (!strcmp(f->m[i].name, name))
				return &f->m[i];
	return NULL;
}

/* ---------------- perf's expressions, evaluated directly ---------------- */

#define MAXKEY 256
struct counts {
	int n;
	char key[MAXKEY][TMA_KEY_LEN];
	double val[MAXKEY], pct[MAXKEY];
	bool present[MAXKEY];
};

struct pctx {
	struct tma_expr_ctx x;
	const struct tma_cpu *c;
	const struct tma_env *env;
	const struct counts *cs;
	struct counts *collect;		/* planning: keys seen */
	/* metric references: perf evaluates each once per context (REF_VALUE) */
	int nref;
	const char *refname[256];
	struct tma_expr_val refval[256];
};

static int key_index(const struct counts *cs, const char *key)
{
	for (int i = 0; i < cs->n; i++)
		if (!strcmp(cs->key[i], key))
			return i;
	return -1;
}

static int add_key(struct counts *cs, const char *key)
{
	int i = key_index(cs, key);
	if (i >= 0 || cs->n >= MAXKEY)
		return i;
	snprintf(cs->key[cs->n], TMA_KEY_LEN, "%s", key);
	cs->present[cs->n] = true;
	cs->pct[cs->n] = 100;
	return cs->n++;
}

static int p_resolve(struct tma_expr_ctx *x, enum tma_expr_kind k, const char *id, struct tma_expr_val *out)
{
	struct pctx *c = (struct pctx *)x;

	memset(out, 0, sizeof(*out));
	out->v = NAN;
	if (k == TMA_EXPR_LITERAL) {
		if (!strcasecmp(id, "SMT_on")) out->v = c->env->smt_on;
		else if (!strcmp(id, "core_wide")) out->v = c->env->core_wide;
		else if (!strcmp(id, "has_pmem")) out->v = c->env->has_pmem;
		else if (!strcmp(id, "slots")) out->v = c->c->slots;
		else return -1;
		return 0;
	}
	if (k == TMA_EXPR_CPUID) {
		out->v = !strcmp(c->c->name, "neoverse-n2");
		return 0;
	}
	struct pm *m = k == TMA_EXPR_ID ? perf_metric(id) : NULL;
	if (m) {
		for (int i = 0; i < c->nref; i++)
			if (c->refname[i] == m->name) {
				*out = c->refval[i];
				if (x->planning)
					out->v = NAN;
				return 0;
			}
		struct tma_expr_val v;
		x->depth++;
		int r = tma_expr_eval(x, m->expr, &v, NULL, 0);
		x->depth--;
		if (r)
			v.v = NAN;	/* perf: a referenced metric that fails is NaN */
		if (c->nref < 256) {
			c->refname[c->nref] = m->name;
			c->refval[c->nref++] = v;
		}
		*out = v;
		if (x->planning)
			out->v = NAN;
		return 0;
	}
	char key[TMA_KEY_LEN];
	if (tma_event_key(id, key, sizeof(key)))
		snprintf(key, sizeof(key), "%s", id);
	if (c->collect) {
		int i = add_key(c->collect, key);
		if (i >= 0)
			tma_ids_add(&out->ids, i);
		return 0;
	}
	int i = key_index(c->cs, key);
	if (i < 0 || !c->cs->present[i])
		return -1;
	tma_ids_add(&out->ids, i);
	if (k == TMA_EXPR_HAS_EVENT)
		out->v = 1;
	else
		out->v = k == TMA_EXPR_SOURCE_COUNT ? 1 : c->cs->val[i];
	return 0;
}

/* perf's value of metric m (times its ScaleUnit), NaN when perf prints nothing */
static double perf_value(const struct tma_cpu *c, const struct tma_env *env, const struct counts *cs, const struct pm *m)
{
	static struct pctx px;
	struct tma_expr_val v;

	memset(&px, 0, sizeof(px));
	px.x.resolve = p_resolve;
	px.c = c;
	px.env = env;
	px.cs = cs;
	int r = tma_expr_eval(&px.x, m->expr, &v, NULL, 0);
	return r ? NAN : v.v * m->scale;
}

/* the events perf's compute_ids pass collects for m (references followed), into need */
static void perf_needs(const struct tma_cpu *c, const struct tma_env *env, struct counts *universe, const struct pm *m,
		       struct tma_ids *need)
{
	static struct pctx px;
	struct tma_expr_val v;

	memset(&px, 0, sizeof(px));
	px.x.resolve = p_resolve;
	px.x.planning = true;
	px.c = c;
	px.env = env;
	px.collect = universe;
	tma_expr_eval(&px.x, m->expr, &v, NULL, 0);
	*need = v.ids;
}

/* ---------------- count sets ---------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static double rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

enum edge { E_RANDOM, E_ZERO, E_ZERO_CYCLES, E_ZERO_SLOTS, E_MISSING, E_UNSUPPORTED, E_MULTIPLEXED, E_NEDGE };
static const char *const edge_name[] = { "random", "all zero", "zero cycles", "zero slots", "missing events",
					 "<not supported>", "multiplexed" };

static bool is_cycles(const char *k)
{
	return strstr(k, "CLK_UNHALTED") || !strcmp(k, "CPU_CYCLES") || strstr(k, "NOT_HALTED_CYC") ||
	       !strcmp(k, "CYCLES");
}

static bool is_slots(const char *k)
{
	return strstr(k, "SLOTS") || !strncmp(k, "TOPDOWN-", 8) || strstr(k, "STALL_SLOT");
}

static void make_set(struct counts *cs, const struct counts *universe, enum edge e)
{
	*cs = *universe;
	for (int i = 0; i < cs->n; i++) {
		/* counts spread over 1 .. 1e10, some small: ratios land anywhere, as they do on hardware */
		cs->val[i] = floor(pow(10, 10 * rnd()));
		cs->pct[i] = 100;
		cs->present[i] = true;
		if (e == E_ZERO || (e == E_ZERO_CYCLES && is_cycles(cs->key[i])) || (e == E_ZERO_SLOTS && is_slots(cs->key[i])))
			cs->val[i] = 0;
		if (e == E_MISSING && rnd() < 0.15)
			cs->present[i] = false;
		if (e == E_UNSUPPORTED && rnd() < 0.15)
			cs->val[i] = NAN;
		if (e == E_MULTIPLEXED)
			cs->pct[i] = 5 + 95 * rnd();
	}
}

static bool same(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b || fabs(a - b) <= 1e-9 * fmax(1, fabs(b));
}

/* ---------------- formulas ---------------- */

static int formulas(const struct tma_cpu *c, int sets)
{
	const struct tma_formulation *f = c->perf;
	static struct counts universe, cs;
	static struct tma_result res;
	static struct tma_plan plan;
	char err[256];
	int nodes = 0, helpers = 0, bad = 0;

	/* the tree: perf's nodes = the recipe's nodes, with perf's level, parent and scale */
	for (int i = 0; i < npm; i++) {
		const struct pm *p = &pms[i];
		const struct tma_metric *m = recipe_metric(f, p->name);
		if (!p->level)
			continue;
		nodes++;
		bool ok = m && m->level == p->level && m->scale == p->scale &&
			  ((!m->parent && !p->parent) || (m->parent && p->parent && !strcmp(m->parent, p->parent)));
		if (!ok && bad++ < 10)
			check(0, "%s: perf's node %s (level %d, parent %s, scale %g) %s", c->name, p->name, p->level,
			      p->parent ? p->parent : "-", p->scale, m ? "differs in the recipe" : "is not in the recipe");
	}
	int extra = 0;
	for (const struct tma_formulation *g = f; g; g = g->base)
		for (int i = 0; i < g->n; i++) {
			const struct pm *p = perf_metric(g->m[i].name);
			if (!p || (g->m[i].level && !p->level))
				extra++, check(0, "%s: recipe node %s is not in perf's table", c->name, g->m[i].name);
			else if (!g->m[i].level)
				helpers++;
		}
	check(!bad && !extra && nodes, "%s: perf 6.12's tree has %d nodes; the recipe holds the same %d nodes "
	      "(level, parent, scale) and %d helper metrics they reference", c->name, nodes, nodes, helpers);

	/* every event any node references, with perf's compute_ids pass under each literal setting */
	universe.n = 0;
	for (int e = 0; e < 8; e++) {
		struct tma_env env = { .smt_on = e & 1, .core_wide = e >> 1 & 1, .has_pmem = e >> 2 & 1 };
		for (int i = 0; i < npm; i++) {
			struct tma_ids need;
			if (pms[i].level)
				perf_needs(c, &env, &universe, &pms[i], &need);
		}
	}
	/* values: every computable node equals perf's expression; computable == perf's events all given */
	long compared = 0, finite = 0, nsets = 0;
	int mism = 0;
	for (int e = 0; e < 8; e++) {
		struct tma_env env = { .smt_on = e & 1, .core_wide = e >> 1 & 1, .has_pmem = e >> 2 & 1 };
		if (tma_plan_init(&plan, c, c->max_level, false, &env, err, sizeof(err))) {
			check(0, "%s: plan: %s", c->name, err);
			return 1;
		}
		static struct tma_ids need[2048];
		for (int i = 0; i < npm; i++)
			if (pms[i].level)
				perf_needs(c, &env, &universe, &pms[i], &need[i]);
		for (int s = 0; s < sets + E_NEDGE - 1; s++) {
			enum edge kind = s < sets ? E_RANDOM : (enum edge)(s - sets + 1);
			make_set(&cs, &universe, kind);
			const char *names[MAXKEY];
			double vals[MAXKEY], pct[MAXKEY];
			int n = 0;
			for (int i = 0; i < cs.n; i++)
				if (cs.present[i]) {
					names[n] = cs.key[i];
					vals[n] = cs.val[i];
					pct[n++] = cs.pct[i];
				}
			tma_compute_named(&plan, n, names, vals, pct, &res);
			nsets++;
			for (int i = 0; i < npm; i++) {
				const struct pm *p = &pms[i];
				if (!p->level)
					continue;
				bool computable = true, counted = false;
				for (int k = 0; k < universe.n; k++)
					if (tma_ids_has(&need[i], k)) {
						counted = true;
						if (!cs.present[k])
							computable = false;
					}
				const struct tma_node *nd = tma_result_node(&res, p->name);
				double want = perf_value(c, &env, &cs, p);
				bool ok;
				if (computable)
					ok = nd && nd->computable && same(nd->value, want) &&
					     (kind != E_MULTIPLEXED || !counted || nd->scaled);
				else
					ok = !nd || !nd->computable;
				compared += computable;
				finite += computable && isfinite(want);
				if (!ok && mism++ < 5)
					check(0, "%s %s set %d, #SMT_on=%d #core_wide=%d #has_pmem=%d: %s: tmabpf %s %g, perf %s %g",
					      c->name, edge_name[kind], s, env.smt_on, env.core_wide, env.has_pmem, p->name,
					      nd ? (nd->computable ? "computes" : "cannot compute") : "omits",
					      nd ? nd->value : NAN, computable ? "computes" : "cannot compute", want);
			}
		}
	}
	check(mism == 0 && finite > compared / 4, "%s: %d nodes x %ld count sets (%d random + %d edge cases, x 8 literal "
	      "settings): %ld values equal perf's (%ld finite), computability as perf's compute_ids", c->name, nodes,
	      nsets, sets, E_NEDGE - 1, compared, finite);
	printf("summary %s formulas nodes=%d helpers=%d sets=%ld compared=%ld mismatches=%d\n", c->name, nodes, helpers,
	       nsets, compared, mism);
	return 0;
}

/* ---------------- measured FLOPs ---------------- */

#define FLOPS_METRIC "tma_info_system_gflops"

static int flops(const struct tma_cpu *c, int sets)
{
	const struct pm *p = perf_metric(FLOPS_METRIC);
	static struct counts universe, cs;
	static const struct tma_env env;
	char keys[64][TMA_KEY_LEN], why[256];
	struct tma_ids need;
	int nk = tma_flops_events(c, keys, 64), mism = 0;
	long compared = 0;

	if (!p) {
		double f;
		int r = tma_flops_named(c, 0, NULL, NULL, 1, &f, NULL, why, sizeof(why));
		check(nk == 0 && r == -ENOENT, "%s: perf 6.12 has no %s; the engine has no FLOPs metric (%d): %s",
		      c->name, FLOPS_METRIC, r, why);
		printf("summary %s flops metric=none events=%d compared=0 mismatches=%d\n", c->name, nk, nk != 0 || r != -ENOENT);
		return 0;
	}
	check(c->perf->flops && !strcmp(c->perf->flops, FLOPS_METRIC) &&
	      !strcmp(recipe_metric(c->perf, FLOPS_METRIC)->expr, p->expr),
	      "%s: the recipe's FLOPs metric is perf's %s, verbatim: %s", c->name, FLOPS_METRIC, p->expr);
	universe.n = 0;
	perf_needs(c, &env, &universe, p, &need);
	int same_events = 0, perf_events = 0;
	for (int k = 0; k < universe.n; k++) {
		if (!strcasecmp(universe.key[k], "duration_time"))
			continue;
		perf_events++;
		for (int j = 0; j < nk; j++)
			same_events += !strcmp(keys[j], universe.key[k]);
	}
	check(nk > 0 && same_events == nk && perf_events == nk, "%s: the engine's %d FLOPs events are the %d perf counts",
	      c->name, nk, perf_events);
	for (int s = 0; s < sets + 1 + universe.n; s++) {
		make_set(&cs, &universe, s == sets ? E_ZERO : E_RANDOM);
		int gone = s > sets ? s - sets - 1 : -1;	/* each event missing in turn */
		if (gone >= 0 && !strcasecmp(cs.key[gone], "duration_time"))
			gone = -1;	/* the duration is the call's own time, always there */
		if (gone >= 0)
			cs.present[gone] = false;
		double dur = 1e-6 + 100 * rnd();
		const char *names[MAXKEY];
		double vals[MAXKEY];
		int n = 0;
		for (int i = 0; i < cs.n; i++) {
			if (!strcasecmp(cs.key[i], "duration_time"))
				cs.val[i] = dur;	/* the run's own time, not a count */
			else if (cs.present[i]) {
				names[n] = cs.key[i];
				vals[n++] = cs.val[i];
			}
		}
		double f, g, want = perf_value(c, &env, &cs, p);
		int r = tma_flops_named(c, n, names, vals, dur, &f, &g, why, sizeof(why));
		bool ok = gone >= 0 ? r == -EAGAIN && isnan(f) && strstr(why, cs.key[gone])
				  : r == 0 && same(g, want) && same(f, want * 1e9 * dur) && isfinite(f);
		compared++;
		if (!ok && mism++ < 5)
				check(0, "%s set %d (%s): tmabpf %d %g GFLOP/s %g FLOPs (%s), perf %g GFLOP/s", c->name, s,
			      gone >= 0 ? cs.key[gone] : s == sets ? "all zero" : "random", r, g, f, why, want);
	}
	check(mism == 0, "%s: %ld count sets (%d random, all zero, each of %d events missing): measured FLOPs equal "
	      "perf's %s x 1e9 x duration", c->name, compared, sets, universe.n, FLOPS_METRIC);
	printf("summary %s flops metric=%s events=%d compared=%ld mismatches=%d\n", c->name, FLOPS_METRIC, nk, compared,
	       mism);
	return 0;
}

/* ---------------- the general-counter formulation ---------------- */

/* general-counter event = factor * the perf-metrics count it stands for, on the recipe
 * cpu and every recipe sharing its general-counter nodes (Emerald Rapids: Sapphire Rapids') */
struct ident { const char *cpu, *gc, *perf; double factor; };
static const struct ident idents[] = {
	{ "icelakex", "TOPDOWN.SLOTS_P", "TOPDOWN.SLOTS", 1 },
	{ "icelakex", "IDQ_UOPS_NOT_DELIVERED.CORE", "TOPDOWN-FE-BOUND", 1 },
	{ "icelakex", "TOPDOWN.BACKEND_BOUND_SLOTS", "TOPDOWN-BE-BOUND", 1 },
	{ "icelakex", "UOPS_RETIRED.SLOTS", "TOPDOWN-RETIRING", 1 },
	{ "sapphirerapids", "TOPDOWN.SLOTS_P", "TOPDOWN.SLOTS", 1 },
	{ "sapphirerapids", "IDQ_BUBBLES.CORE", "TOPDOWN-FE-BOUND", 1 },
	{ "sapphirerapids", "TOPDOWN.BACKEND_BOUND_SLOTS", "TOPDOWN-BE-BOUND", 1 },
	{ "sapphirerapids", "UOPS_RETIRED.SLOTS", "TOPDOWN-RETIRING", 1 },
	{ "sapphirerapids", "TOPDOWN.MEMORY_BOUND_SLOTS", "TOPDOWN-MEM-BOUND", 1 },
	{ "sapphirerapids", "UOPS_RETIRED.HEAVY", "TOPDOWN-HEAVY-OPS", 1 },
	{ "sapphirerapids", "TOPDOWN.BR_MISPREDICT_SLOTS", "TOPDOWN-BR-MISPREDICT", 1 },
	{ "sapphirerapids", "IDQ_BUBBLES.CYCLES_0_UOPS_DELIV.CORE", "TOPDOWN-FETCH-LAT", 6 },
};

static bool ident_of(const struct ident *id, const struct tma_cpu *c)
{
	const struct tma_cpu *o = tma_cpu_by_name(id->cpu);

	return o && o->gc && c->gc && o->gc->m == c->gc->m;
}

static double *val_of(struct counts *cs, const char *key)
{
	int i = add_key(cs, key);
	return i >= 0 ? &cs->val[i] : NULL;
}

static int gc(const struct tma_cpu *c, int sets)
{
	static struct counts universe, cs;
	static struct tma_result res;
	static struct tma_plan plan;
	char err[256];
	long compared = 0;
	int mism = 0, nodes = 0;

	if (!c->gc) {
		check(0, "%s has no general-counter formulation", c->name);
		return 1;
	}
	/* the events of both formulations at the BPF path's levels */
	universe.n = 0;
	struct tma_env env0 = { 0 };
	static struct tma_needs nd;
	if (tma_plan_init(&plan, c, c->run_max_level, true, &env0, err, sizeof(err)))
		return 1;
	for (int f = 0; f < 2; f++) {
		tma_needed_events(&plan, f ? c->gc : c->perf, &nd);
		for (int k = 0; k < nd.nkey; k++)
			add_key(&universe, nd.key[k]);
	}
	for (size_t i = 0; i < sizeof(idents) / sizeof(idents[0]); i++)
		if (ident_of(&idents[i], c))
			add_key(&universe, idents[i].gc), add_key(&universe, idents[i].perf);
	add_key(&universe, "TOPDOWN-BAD-SPEC");
	for (int e = 0; e < 2; e++) {
		struct tma_env env = { .smt_on = e };
		if (tma_plan_init(&plan, c, c->run_max_level, true, &env, err, sizeof(err)))
			return 1;
		for (int s = 0; s < sets; s++) {
			make_set(&cs, &universe, E_RANDOM);
			/* one slot breakdown: fe + bad + retiring + be = slots; mem <= be, heavy <= retiring, ... */
			double slots = *val_of(&cs, "TOPDOWN.SLOTS") + 1, w[4], sum = 0;
			for (int i = 0; i < 4; i++)
				sum += w[i] = rnd() + 0.01;
			*val_of(&cs, "TOPDOWN-FE-BOUND") = slots * w[0] / sum;
			*val_of(&cs, "TOPDOWN-BAD-SPEC") = slots * w[1] / sum;
			*val_of(&cs, "TOPDOWN-RETIRING") = slots * w[2] / sum;
			*val_of(&cs, "TOPDOWN-BE-BOUND") = slots - (slots * w[0] + slots * w[1] + slots * w[2]) / sum;
			*val_of(&cs, "TOPDOWN.SLOTS") = slots;
			*val_of(&cs, "TOPDOWN-MEM-BOUND") = *val_of(&cs, "TOPDOWN-BE-BOUND") * rnd();
			*val_of(&cs, "TOPDOWN-HEAVY-OPS") = *val_of(&cs, "TOPDOWN-RETIRING") * rnd();
			*val_of(&cs, "TOPDOWN-BR-MISPREDICT") = *val_of(&cs, "TOPDOWN-BAD-SPEC") * rnd();
			*val_of(&cs, "TOPDOWN-FETCH-LAT") = 6 * floor(*val_of(&cs, "TOPDOWN-FE-BOUND") * rnd() / 6);
			/* dropped uops are frontend slots (no cancellation of a huge term against another) */
			*val_of(&cs, "INT_MISC.UOP_DROPPING") = floor(*val_of(&cs, "TOPDOWN-FE-BOUND") * rnd() / 2);
			for (size_t i = 0; i < sizeof(idents) / sizeof(idents[0]); i++)
				if (ident_of(&idents[i], c))
					*val_of(&cs, idents[i].gc) = *val_of(&cs, idents[i].perf) / idents[i].factor;
			/* the BPF path counts general counters only */
			const char *names[MAXKEY];
			double vals[MAXKEY];
			int n = 0;
			for (int i = 0; i < cs.n; i++)
				if (strncmp(cs.key[i], "TOPDOWN-", 8) && strcmp(cs.key[i], "TOPDOWN.SLOTS")) {
					names[n] = cs.key[i];
					vals[n++] = cs.val[i];
				}
			tma_compute_named(&plan, n, names, vals, NULL, &res);
			if (strcmp(res.formulation, "gc"))
				check(0, "%s: the BPF path chose the %s formulation", c->name, res.formulation);
			nodes = res.n;
			for (int i = 0; i < res.n; i++) {
				const struct pm *p = perf_metric(res.node[i].name);
				double want = p ? perf_value(c, &env, &cs, p) : NAN;
				/* the same slots in another order of operations: equal to rounding */
				bool ok = p && (same(res.node[i].value, want) || fabs(res.node[i].value - want) < 1e-9);
				compared++;
				if (!ok && mism++ < 5)
					check(0, "%s gc set %d #SMT_on=%d: %s: general counters %g, perf's perf-metrics formula %g",
					      c->name, s, env.smt_on, res.node[i].name, res.node[i].value, want);
			}
		}
	}
	check(mism == 0 && compared, "%s: the BPF path's %d general-counter nodes equal perf's perf-metrics formulas on "
	      "%d x 2 slot breakdowns (%ld values)", c->name, nodes, sets, compared);
	printf("summary %s gc nodes=%d sets=%d compared=%ld mismatches=%d\n", c->name, nodes, 2 * sets, compared, mism);
	return 0;
}

/* ---------------- encodings ---------------- */

struct pev {
	char *name;
	uint64_t term[16];
	bool has[16];
};
static const char *const termname[] = { "event", "umask", "cmask", "edge", "inv", "any", "ldlat", "pc", "frontend",
					"offcore_rsp", NULL };
enum { T_EVENT, T_UMASK, T_CMASK, T_EDGE, T_INV, T_ANY, T_LDLAT, T_PC, T_FRONTEND, T_OFFCORE };
static struct pev pevs[8192];
static int npev;

static int load_events(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[4096];

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && npev < 8192) {
		line[strcspn(line, "\n")] = 0;
		char *p = line, *name = field(&p), *enc = field(&p);
		struct pev *e = &pevs[npev++];
		memset(e, 0, sizeof(*e));
		e->name = strdup(name);
		for (char *t = strtok(enc, ","); t; t = strtok(NULL, ",")) {
			char *eq = strchr(t, '=');
			if (eq)
				*eq = 0;
			for (int k = 0; termname[k]; k++)
				if (!strcmp(t, termname[k])) {
					e->term[k] = eq ? strtoull(eq + 1, NULL, 0) : 1;
					e->has[k] = true;
				}
		}
	}
	fclose(f);
	return npev;
}

static const struct pev *perf_event(const char *name)
{
	for (int i = 0; i < npev; i++)
		if (!strcasecmp(pevs[i].name, name))
			return &pevs[i];
	return NULL;
}

/* the config perf's terms give, with the key's modifiers on top */
static uint64_t compose(const struct tma_cpu *c, const struct pev *e, const char *key, uint64_t *config1)
{
	uint64_t t[16];
	memcpy(t, e->term, sizeof(t));
	for (const char *m = strchr(key, ':'); m; m = strchr(m + 1, ':')) {
		uint64_t v = strtoull(m + 2, NULL, 0);
		if (m[1] == 'c') t[T_CMASK] = v;
		else if (m[1] == 'e') t[T_EDGE] = v;
		else if (m[1] == 'i') t[T_INV] = v;
		else if (m[1] == 'u') t[T_UMASK] = v;
	}
	*config1 = t[T_LDLAT] | t[T_OFFCORE] | t[T_FRONTEND];
	if (c->vendor == TMA_AMD)
		return (t[T_EVENT] & 0xff) | ((t[T_EVENT] >> 8) & 0xf) << 32 | t[T_UMASK] << 8 | t[T_EDGE] << 18 |
		       t[T_INV] << 23 | t[T_CMASK] << 24;
	if (c->vendor == TMA_ARM)
		return t[T_EVENT];
	return (t[T_EVENT] & 0xff) | t[T_UMASK] << 8 | t[T_EDGE] << 18 | t[T_PC] << 19 | t[T_ANY] << 21 |
	       t[T_INV] << 23 | t[T_CMASK] << 24;
}

static int encodings(const struct tma_cpu *c)
{
	static struct tma_plan plan;
	char err[256];
	int by_perf = 0, by_pfm = 0, skipped = 0, bad = 0, seen = 0;
	char keys[256][TMA_KEY_LEN];
	int nk = 0;

	for (int combo = 0; combo < 4; combo++) {
		struct tma_env env = { .smt_on = combo & 1, .nmi_watchdog = combo >> 1 & 1 };
		for (int lvl = 1; lvl <= c->run_max_level; lvl++) {
			if (tma_plan(&plan, c, lvl, TMABPF_MAX_EVENTS, &env, tma_encode_key, err, sizeof(err))) {
				check(0, "%s --tma=%d: %s", c->name, lvl, err);
				bad++;
				continue;
			}
			for (int i = 0; i < plan.nev; i++) {
				const struct tma_event *d = &plan.ev[i];
				seen++;
				bool dup = false;
				for (int k = 0; k < nk; k++)
					dup |= !strcmp(keys[k], d->name);
				if (dup)
					continue;
				if (nk < 256)
					snprintf(keys[nk++], TMA_KEY_LEN, "%s", d->name);
				const struct tma_event_enc *enc = tma_event_enc(c, d->name);
				char base[TMA_KEY_LEN];
				snprintf(base, sizeof(base), "%.*s", (int)strcspn(d->name, ":"), d->name);
				const char *pname = enc && enc->perf ? enc->perf : base;
				const struct pev *pe = perf_event(pname);
				uint64_t c1 = 0;
				if (pe) {
					uint64_t want = compose(c, pe, d->name, &c1);
					bool ok = d->attr.type == PERF_TYPE_RAW && d->attr.config == want && d->attr.config1 == c1;
					by_perf++;
					if (!ok)
						bad++;
					check(ok, "%s %s: config 0x%llx config1 0x%llx; perf's %s gives 0x%llx 0x%llx", c->name,
					      d->name, (unsigned long long)d->attr.config, (unsigned long long)d->attr.config1,
					      pname, (unsigned long long)want, (unsigned long long)c1);
					continue;
				}
				/* not in perf's table: libpfm4, where the recipe's encoding is not libpfm4's own */
				struct pfm_enc_out o;
				char name[200];
				snprintf(name, sizeof(name), "%s", base);
				char *dot = strchr(name, '.');
				if (dot)
					*dot = ':';
				if (c->pfm_pmu && enc && !enc->pfm && !pfm_enc_event(c->pfm_pmu, name, &o, NULL, 0, err, sizeof(err))) {
					bool ok = o.config == d->attr.config;
					by_pfm++;
					bad += !ok;
					check(ok, "%s %s: config 0x%llx; libpfm4 %s::%s gives 0x%llx (perf's table lacks %s)",
					      c->name, d->name, (unsigned long long)d->attr.config, c->pfm_pmu, name,
					      (unsigned long long)o.config, pname);
					continue;
				}
				skipped++;
				printf("skip %s %s: %s\n", c->name, d->name,
				       c->vendor == TMA_ARM ? "neither this perf's nor libpfm4's tables hold Arm events (x86 builds)" :
				       "neither perf's table nor libpfm4 knows this event");
			}
		}
	}
	check(!bad && seen, "%s: %d planned attrs (every level, SMT on/off, watchdog on/off), %d distinct events: %d equal "
	      "perf's encoding, %d libpfm4's, %d skipped (named above)", c->name, seen, nk, by_perf, by_pfm, skipped);
	printf("summary %s encodings events=%d perf=%d libpfm4=%d skipped=%d bad=%d\n", c->name, nk, by_perf, by_pfm,
	       skipped, bad);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: tma_oracle formulas|gc|flops CPU METRICS.tsv [SETS] | encodings CPU EVENTS.tsv\n");
		return 2;
	}
	const struct tma_cpu *c = tma_cpu_by_name(argv[2]);
	int sets = argc > 4 ? atoi(argv[4]) : 200;
	if (!c) {
		fprintf(stderr, "tma_oracle: no recipe %s\n", argv[2]);
		return 2;
	}
	if (!strcmp(argv[1], "encodings")) {
		if (load_events(argv[3]) < 0) {	/* empty: perf knows no event of this CPU */
			fprintf(stderr, "tma_oracle: cannot read %s\n", argv[3]);
			return 2;
		}
		encodings(c);
	} else {
		if (load_metrics(argv[3]) <= 0) {
			fprintf(stderr, "tma_oracle: cannot read %s\n", argv[3]);
			return 2;
		}
		if (!strcmp(argv[1], "gc"))
			gc(c, sets);
		else if (!strcmp(argv[1], "flops"))
			flops(c, sets);
		else
			formulas(c, sets);
	}
	return check_exit();
}
