// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * TMA engine: the recipes' formulas compiled once, evaluated with perf 6.12's
 * rules in two passes: planning (which events perf would count for a node,
 * given the plan's literals) and computing (the values, from counts).  Pure:
 * the plan (with its events' encodings) and the counts are arguments; no I/O,
 * no library call; the only shared state is the cache of compiled
 * formulations behind a mutex.  Scheduling counters is tma_plan.c.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "lib/warn.h"
#include "tma/tma.h"
#include "tma/tma_cache.h"
#include "tma/tma_expr.h"

/* ---------------- formulas ---------------- */

static const struct tma_metric *find_metric(const struct tma_formulation *f, const char *name)
{
	for (; f; f = f->base)
		for (int i = 0; i < f->n; i++)
			if (!strcasecmp(f->m[i].name, name))
				return &f->m[i];
	return NULL;
}

/* tree order: the base formulation's order, overridden entries replaced */
static int tree_metrics(const struct tma_formulation *f, const struct tma_metric **out, int max)
{
	const struct tma_formulation *root = f;
	int n = 0;

	while (root->base)
		root = root->base;
	for (int i = 0; i < root->n && n < max; i++)
		if (root->m[i].level)
			out[n++] = find_metric(f, root->m[i].name);
	return n;
}

static bool in_list(const char *const *l, const char *name)
{
	for (; l && *l; l++)
		if (!strcmp(*l, name))
			return true;
	return false;
}

/* the --tma level that shows m in plan p, 0 when p does not show it */
static int shown_level(const struct tma_plan *p, const struct tma_metric *m)
{
	int lvl = m->level;

	if (!lvl)
		return 0;
	for (int i = 0; i < p->nomit; i++)
		if (!strcmp(p->omit[i], m->name))
			return 0;
	if (p->run && lvl > 2)
		lvl = in_list(p->cpu->run_deep, m->name) ? 3 : 0;
	return lvl && lvl <= p->level ? lvl : 0;
}

/* ---------------- compiled formulations ----------------
 * Each (cpu, formulation) is compiled once, on first use: every metric visible
 * through the formulation (its own, then its bases') becomes a postfix program
 * whose references are bound to a metric index or an interned event key (the
 * key's index is its bit in tma_ids), so a run does no parsing, no name lookup
 * and no event-key canonicalisation.  The event keys each node needs for a
 * plan's (level, node set, literals) are cached too.  Results are the same as
 * evaluating the strings (tests/unit/test_tma_cache.c). */
#define MAXM 384	/* metrics visible through one formulation */
#define MAXK TMA_EXPR_MAX_IDS	/* distinct event keys its formulas name */
#define NPLAN 8

enum { LIT_SMT, LIT_CORE_WIDE, LIT_PMEM, LIT_SLOTS };

/* the events each shown node needs under one plan: perf's compute_ids pass */
struct plan_memo {
	int level, run, smt_on, core_wide, has_pmem, slots;
	unsigned long long omit_sig;
	int nk;
	short k[MAXK];			/* keys, first-use order */
	int ntree;
	unsigned char shown[TMA_MAX_NODES];	/* per tree entry: the --tma level that shows it, 0 */
	struct tma_ids need[TMA_MAX_NODES];	/* per tree entry (cform.tree order) */
};

struct cform {
	const struct tma_cpu *c;
	const struct tma_formulation *f;
	int nm, nkey, ntree;
	const struct tma_metric *m[MAXM];
	struct tma_expr_prog *prog[MAXM];
	short tree[TMA_MAX_NODES];	/* index in m[] */
	short tparent[TMA_MAX_NODES];	/* tree index of the parent, -1 */
	char *key[MAXK];
	struct plan_memo *plan[NPLAN];
	int nplan;
	struct cform *next;
};

static pthread_mutex_t cf_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cform *cforms;

#define MAXV 256
struct evalctx {
	struct tma_expr_ctx x;
	const struct tma_cpu *c;
	const struct tma_env *env;
	struct cform *cf;
	/* counts */
	int nv;
	char key[MAXV][TMA_KEY_LEN];
	double val[MAXV], pct[MAXV];
	int group[MAXV];
	short val_of[MAXK];	/* key -> index in val[], -1 none, -2 not looked up */
	/* metric values: valid when memo_gen[i] == gen */
	unsigned gen;
	unsigned memo_gen[MAXM];
	struct tma_expr_val memo_v[MAXM];
	/* planning: keys in first-use order */
	bool seen[MAXK];
	short order[MAXK];
	int norder;
};

static int lookup_value(const struct evalctx *e, const char *key)
{
	for (int i = 0; i < e->nv; i++)
		if (!strcmp(e->key[i], key))
			return i;
	return -1;
}

static int intern_key(struct cform *cf, const char *id)
{
	char key[TMA_KEY_LEN];

	if (tma_event_key(id, key, sizeof(key)))
		snprintf(key, sizeof(key), "%s", id);
	for (int k = 0; k < cf->nkey; k++)
		if (!strcmp(cf->key[k], key))
			return k;
	if (cf->nkey >= MAXK || !(cf->key[cf->nkey] = strdup(key)))
		return -1;
	return cf->nkey++;
}

static int metric_index(const struct cform *cf, const struct tma_metric *m)
{
	for (int i = 0; i < cf->nm; i++)
		if (cf->m[i] == m)
			return i;
	return -1;
}

static void cform_free(struct cform *cf)
{
	for (int i = 0; i < cf->nm; i++)
		tma_expr_free(cf->prog[i]);
	for (int k = 0; k < cf->nkey; k++)
		free(cf->key[k]);
	for (int i = 0; i < cf->nplan; i++)
		free(cf->plan[i]);
	free(cf);
}

/* bind a reference: metric index (0..MAXM-1), MAXM + event key, literal code */
static int bind_ref(struct cform *cf, struct tma_expr_ref *r)
{
	switch (r->kind) {
	case TMA_EXPR_LITERAL:
		r->bind = !strcasecmp(r->id, "SMT_on") ? LIT_SMT : !strcasecmp(r->id, "core_wide") ? LIT_CORE_WIDE :
			  !strcasecmp(r->id, "has_pmem") ? LIT_PMEM : !strcasecmp(r->id, "slots") ? LIT_SLOTS : -1;
		return 0;
	case TMA_EXPR_CPUID:
		return 0;
	case TMA_EXPR_ID: {
		const struct tma_metric *m = find_metric(cf->f, r->id);
		if (m) {
			r->bind = metric_index(cf, m);
			return r->bind >= 0 ? 0 : -1;
		}
	}
		/* fallthrough */
	default: {
		int k = intern_key(cf, r->id);
		r->bind = MAXM + k;
		return k >= 0 ? 0 : -1;
	}
	}
}

static struct cform *cform_build(const struct tma_cpu *c, const struct tma_formulation *f)
{
	struct cform *cf = calloc(1, sizeof(*cf));
	const struct tma_metric *tree[TMA_MAX_NODES];

	if (!cf)
		return NULL;
	cf->c = c;
	cf->f = f;
	for (const struct tma_formulation *g = f; g; g = g->base)
		for (int i = 0; i < g->n; i++) {
			if (find_metric(f, g->m[i].name) != &g->m[i])
				continue;	/* overridden */
			if (cf->nm >= MAXM)
				goto fail;
			cf->m[cf->nm] = &g->m[i];
			cf->prog[cf->nm] = tma_expr_compile(g->m[i].expr);
			if (!cf->prog[cf->nm++])
				goto fail;
		}
	for (int i = 0; i < cf->nm; i++)
		for (int r = 0; r < tma_expr_nrefs(cf->prog[i]); r++)
			if (bind_ref(cf, tma_expr_ref_at(cf->prog[i], r)))
				goto fail;
	cf->ntree = tree_metrics(f, tree, TMA_MAX_NODES);
	for (int i = 0; i < cf->ntree; i++) {
		if ((cf->tree[i] = (short)metric_index(cf, tree[i])) < 0)
			goto fail;
		cf->tparent[i] = -1;
		for (int j = 0; tree[i]->parent && j < i; j++)
			if (!strcmp(tree[j]->name, tree[i]->parent))
				cf->tparent[i] = (short)j;
	}
	return cf;
fail:
	cform_free(cf);
	return NULL;
}

static struct cform *cform_get(const struct tma_cpu *c, const struct tma_formulation *f)
{
	struct cform *cf;

	pthread_mutex_lock(&cf_lock);
	for (cf = cforms; cf; cf = cf->next)
		if (cf->c == c && cf->f == f)
			break;
	if (!cf && (cf = cform_build(c, f))) {
		cf->next = cforms;
		cforms = cf;
	}
	pthread_mutex_unlock(&cf_lock);
	return cf;
}

int tma_compile(const struct tma_cpu *c, char *err, size_t errlen)
{
	const struct tma_formulation *f[] = { c->perf, c->gc };

	for (int i = 0; i < 2; i++)
		if (f[i] && !cform_get(c, f[i])) {
			err_set(err, errlen, "TMA recipe %s (%s formulation): cannot compile its formulas (out of memory, "
				"or more than %d metrics, %d events or %d nodes)", c->name, f[i]->name, MAXM, MAXK,
				TMA_MAX_NODES);
			return -ENOMEM;
		}
	return 0;
}

void tma_cache_reset(void)
{
	pthread_mutex_lock(&cf_lock);
	while (cforms) {
		struct cform *cf = cforms;
		cforms = cf->next;
		cform_free(cf);
	}
	pthread_mutex_unlock(&cf_lock);
}

static int key_val(struct evalctx *e, int k)
{
	if (e->val_of[k] == -2)
		e->val_of[k] = (short)lookup_value(e, e->cf->key[k]);
	return e->val_of[k];
}

static int resolve(struct tma_expr_ctx *x, const struct tma_expr_ref *ref, struct tma_expr_val *out)
{
	struct evalctx *e = (struct evalctx *)x;

	memset(out, 0, sizeof(*out));
	out->v = NAN;
	if (ref->kind == TMA_EXPR_LITERAL) {
		switch (ref->bind) {
		case LIT_SMT: out->v = e->env->smt_on; return 0;
		case LIT_CORE_WIDE: out->v = e->env->core_wide; return 0;
		case LIT_PMEM: out->v = e->env->has_pmem; return 0;
		case LIT_SLOTS: out->v = e->env->slots ? e->env->slots : e->c->slots; return 0;
		default: return -1;
		}
	}
	if (ref->kind == TMA_EXPR_CPUID) {
		/* N2/V2 stall-slot erratum test: treat the recipe CPU as a current revision */
		out->v = !strcmp(e->c->name, "neoverse-n2") ? 1 : 0;
		return 0;
	}
	if (ref->bind < MAXM) {	/* a metric */
		int m = ref->bind;
		if (e->memo_gen[m] != e->gen) {
			struct tma_expr_val v;
			x->depth++;
			int r = tma_expr_run(x, e->cf->prog[m], &v, NULL, 0);
			x->depth--;
			if (r != 0)	/* perf: a referenced metric that aborts is NaN */
				v.v = NAN;
			e->memo_gen[m] = e->gen;
			e->memo_v[m] = v;
		}
		*out = e->memo_v[m];
		if (x->planning)
			out->v = NAN;	/* perf's compute_ids: a reference is an identifier, not a constant */
		return 0;
	}
	int k = ref->bind - MAXM;
	if (ref->kind == TMA_EXPR_HAS_EVENT) {
		out->v = key_val(e, k) >= 0;
		return 0;
	}
	tma_ids_add(&out->ids, k);
	if (x->planning) {
		if (!e->seen[k]) {
			e->seen[k] = true;
			e->order[e->norder++] = (short)k;
		}
		return 0;
	}
	int i = key_val(e, k);
	if (i < 0)
		return -1;	/* NaN; compute says which */
	out->v = ref->kind == TMA_EXPR_SOURCE_COUNT ? 1 : e->val[i];
	return 0;
}

static void ctx_init(struct evalctx *e, const struct tma_cpu *c, const struct tma_env *env, bool planning)
{
	memset(e, 0, offsetof(struct evalctx, key));
	e->x.resolve_ref = resolve;
	e->x.planning = planning;
	e->c = c;
	e->env = env;
	e->gen = 0;
	e->norder = 0;
	memset(e->memo_gen, 0, sizeof(e->memo_gen));
	memset(e->seen, 0, sizeof(e->seen));
}

/* evaluate cf from a clean slate: no memo, no lookups */
static void ctx_bind(struct evalctx *e, struct cform *cf)
{
	e->cf = cf;
	for (int k = 0; k < cf->nkey; k++)
		e->val_of[k] = -2;
	e->gen++;
}

/* ---------------- planning: the events each node needs ---------------- */

static bool memo_match(const struct plan_memo *m, const struct tma_plan *p)
{
	return m->level == p->level && m->run == p->run && m->smt_on == p->env.smt_on &&
	       m->core_wide == p->env.core_wide && m->has_pmem == p->env.has_pmem && m->slots == p->env.slots &&
	       m->omit_sig == p->omit_sig;
}

/* the keys cf needs for p's nodes into *out (a copy: the cache may drop its entry), cached; -ENOMEM */
static int plan_keys(struct cform *cf, const struct tma_plan *p, struct plan_memo *out)
{
	bool hit = false;

	pthread_mutex_lock(&cf_lock);
	for (int i = 0; i < cf->nplan && !hit; i++)
		if ((hit = memo_match(cf->plan[i], p)))
			*out = *cf->plan[i];
	pthread_mutex_unlock(&cf_lock);
	if (hit)
		return 0;

	struct plan_memo *pm = calloc(1, sizeof(*pm));
	struct evalctx *e = malloc(sizeof(*e));
	struct tma_ids used = { { 0 } };
	if (!pm || !e) {
		free(pm);
		free(e);
		return -ENOMEM;
	}
	*pm = (struct plan_memo){ .level = p->level, .run = p->run, .smt_on = p->env.smt_on,
				  .core_wide = p->env.core_wide, .has_pmem = p->env.has_pmem,
				  .slots = p->env.slots, .omit_sig = p->omit_sig, .ntree = cf->ntree };
	ctx_init(e, cf->c, &p->env, true);
	ctx_bind(e, cf);
	for (int i = 0; i < cf->ntree; i++) {
		if (!(pm->shown[i] = (unsigned char)shown_level(p, cf->m[cf->tree[i]])))
			continue;
		struct tma_expr_val v;
		tma_expr_run(&e->x, cf->prog[cf->tree[i]], &v, NULL, 0);
		pm->need[i] = v.ids;
		tma_ids_or(&used, &v.ids);
	}
	/* keys of branches perf would not take were resolved while parsing: drop them */
	for (int i = 0; i < e->norder; i++)
		if (tma_ids_has(&used, e->order[i]))
			pm->k[pm->nk++] = e->order[i];
	free(e);

	pthread_mutex_lock(&cf_lock);
	if (cf->nplan == NPLAN) {	/* full: the oldest goes (plans change rarely) */
		free(cf->plan[0]);
		memmove(&cf->plan[0], &cf->plan[1], (NPLAN - 1) * sizeof(cf->plan[0]));
		cf->nplan--;
	}
	cf->plan[cf->nplan++] = pm;
	*out = *pm;
	pthread_mutex_unlock(&cf_lock);
	return 0;
}

const struct tma_formulation *tma_run_formulation(const struct tma_cpu *c)
{
	return c->gc ? c->gc : c->perf;
}

int tma_needed_events(const struct tma_plan *p, const struct tma_formulation *f, struct tma_needs *out)
{
	struct cform *cf;
	struct plan_memo *pm = malloc(sizeof(*pm));

	out->nkey = 0;
	out->nnode = 0;
	if (!p->cpu || !pm) {
		free(pm);
		return p->cpu ? -ENOMEM : -EINVAL;
	}
	if (!(cf = cform_get(p->cpu, f ? f : p->cpu->perf)) || plan_keys(cf, p, pm)) {
		free(pm);
		return -ENOMEM;
	}
	out->nkey = pm->nk;
	for (int i = 0; i < pm->nk; i++)
		snprintf(out->key[i], TMA_KEY_LEN, "%s", cf->key[pm->k[i]]);
	for (int i = 0; i < cf->ntree && out->nnode < TMA_MAX_NODES; i++) {
		if (!pm->shown[i])
			continue;
		out->node[out->nnode] = cf->m[cf->tree[i]]->name;
		memset(&out->uses[out->nnode], 0, sizeof(out->uses[0]));
		for (int j = 0; j < pm->nk; j++)
			if (tma_ids_has(&pm->need[i], pm->k[j]))
				tma_ids_add(&out->uses[out->nnode], j);
		out->nnode++;
	}
	free(pm);
	return out->nkey;
}

/* ---------------- compute ---------------- */

static void add_list(char *buf, size_t len, const char *item)
{
	size_t l = strlen(buf);

	if (strstr(buf, item) || l + strlen(item) + 3 >= len)
		return;
	snprintf(buf + l, len - l, "%s%s", l ? ", " : "", item);
}

/* why a computed value is NaN */
static void nan_reason(struct evalctx *e, const struct tma_expr_val *v, char *why, size_t len)
{
	char unsup[80] = "", zero[80] = "";

	tma_ids_for_each(k, &v->ids) {
		int i = key_val(e, k);
		if (i >= 0 && isnan(e->val[i]))
			add_list(unsup, sizeof(unsup), e->cf->key[k]);
		else if (i >= 0 && e->val[i] == 0)
			add_list(zero, sizeof(zero), e->cf->key[k]);
	}
	if (unsup[0])
		snprintf(why, len, "<not supported>: %s", unsup);
	else if (v->div0)
		snprintf(why, len, "division by zero%s%s%s", zero[0] ? " (zero: " : "", zero, zero[0] ? ")" : "");
	else
		snprintf(why, len, "NaN in perf's formula");
}

static void node_flags(struct evalctx *e, const struct tma_expr_val *v, struct tma_node *nd)
{
	int g0 = -1;
	double p0 = -1;
	bool mixed = false;

	nd->min_running = 100;
	tma_ids_for_each(k, &v->ids) {
		int i = key_val(e, k);
		if (i < 0)
			continue;
		if (e->pct[i] < nd->min_running)
			nd->min_running = e->pct[i];
		/* different groups, or (groups unknown) differently scaled counters */
		if (e->group[i] >= 0) {
			if (g0 >= 0 && g0 != e->group[i])
				mixed = true;
			g0 = e->group[i];
		}
		if (p0 >= 0 && fabs(p0 - e->pct[i]) > 0.01)
			mixed = true;
		p0 = e->pct[i];
	}
	nd->scaled = nd->min_running < 99.995;
	nd->ungrouped = nd->scaled && mixed;
}

static int compute_with(const struct tma_plan *p, struct cform *cf, const struct plan_memo *pm, struct evalctx *e,
			struct tma_result *res)
{
	int idx[TMA_MAX_NODES];		/* tree entry -> node index, -1 */
	bool keep[TMA_MAX_NODES];

	memset(res, 0, offsetof(struct tma_result, node));
	res->missing[0] = 0;
	res->cpu = p->cpu;
	res->level = p->level;
	res->formulation = cf->f->name;
	ctx_bind(e, cf);
	/* a run plan shows all its nodes; an analyze plan the computable ones and their ancestors */
	memset(keep, 0, sizeof(keep));
	for (int i = cf->ntree - 1; i >= 0; i--) {
		if (!pm->shown[i])
			continue;
		bool ok = true;
		tma_ids_for_each(k, &pm->need[i])
			if (key_val(e, k) < 0) {
				ok = false;
				break;
			}
		if (p->run || ok || cf->m[cf->tree[i]]->level == 1)	/* level 1 always: null with what it lacks */
			keep[i] = true;
		if (keep[i] && cf->tparent[i] >= 0 && pm->shown[cf->tparent[i]])
			keep[cf->tparent[i]] = true;
	}
	for (int i = 0; i < cf->ntree; i++) {
		const struct tma_metric *m = cf->m[cf->tree[i]];
		idx[i] = -1;
		if (!keep[i] || res->n >= TMA_MAX_NODES)
			continue;
		struct tma_node *nd = &res->node[res->n];
		memset(nd, 0, sizeof(*nd));
		snprintf(nd->name, sizeof(nd->name), "%s", m->name);
		snprintf(nd->label, sizeof(nd->label), "%s", m->label ? m->label : m->name);
		nd->tma = pm->shown[i];
		nd->level = m->level;
		nd->parent = cf->tparent[i] >= 0 ? idx[cf->tparent[i]] : -1;
		nd->depth = nd->parent >= 0 ? res->node[nd->parent].depth + 1 : 1;
		char miss[80] = "";
		tma_ids_for_each(k, &pm->need[i])
			if (++nd->nevents && key_val(e, k) < 0) {
				add_list(miss, sizeof(miss), cf->key[k]);
				add_list(res->missing, sizeof(res->missing), cf->key[k]);
			}
		nd->computable = !miss[0];
		struct tma_expr_val v;
		int r = tma_expr_run(&e->x, cf->prog[cf->tree[i]], &v, NULL, 0);
		node_flags(e, &v, nd);
		if (!nd->computable) {
			nd->value = NAN;
			snprintf(nd->why, sizeof(nd->why), "missing: %s", miss);
		} else if (r != 0) {
			nd->value = NAN;
			snprintf(nd->why, sizeof(nd->why), "perf aborts this metric ('%%' by zero)");
		} else {
			nd->value = v.v * m->scale;
			if (isnan(nd->value))
				nan_reason(e, &v, nd->why, sizeof(nd->why));
		}
		idx[i] = res->n++;
	}
	return 0;
}

/* the formulation whose events the counts cover best (perf's first with prefer_perf) */
static int compute_best(const struct tma_plan *p, struct evalctx *e, struct tma_result *res)
{
	const struct tma_cpu *c = p->cpu;
	const struct tma_formulation *cand[2];
	struct cform *best = NULL;
	struct plan_memo pm[2];
	int nc = 0, bestmiss = 1 << 30, bi = 0;

	if (p->env.prefer_perf || !c->gc) {
		cand[nc++] = c->perf;
		if (c->gc)
			cand[nc++] = c->gc;
	} else {
		cand[nc++] = c->gc;
		cand[nc++] = c->perf;
	}
	for (int i = 0; i < nc; i++) {
		struct cform *cf = cform_get(c, cand[i]);
		if (!cf || plan_keys(cf, p, &pm[i]))
			return -ENOMEM;
		ctx_bind(e, cf);
		int miss = 0;
		for (int k = 0; k < pm[i].nk; k++)
			miss += key_val(e, pm[i].k[k]) < 0;
		if (miss < bestmiss) {
			bestmiss = miss;
			best = cf;
			bi = i;
		}
	}
	return compute_with(p, best, &pm[bi], e, res);
}

static void add_value(struct evalctx *e, const char *name, double v, double pct, int group)
{
	char key[TMA_KEY_LEN];

	if (e->nv >= MAXV || tma_event_key(name, key, sizeof(key)))
		return;
	int i = lookup_value(e, key);
	if (i >= 0) { /* same event listed twice: sum */
		e->val[i] += v;
		return;
	}
	snprintf(e->key[e->nv], TMA_KEY_LEN, "%s", key);
	e->val[e->nv] = v;
	e->pct[e->nv] = pct;
	e->group[e->nv] = group;
	e->nv++;
}

static struct evalctx *ctx_new(const struct tma_plan *p)
{
	struct evalctx *e = malloc(sizeof(*e));

	if (e)
		ctx_init(e, p->cpu, &p->env, false);
	return e;
}

/* A context for plan p's counts, or NULL with *r -EINVAL (no recipe) or -ENOMEM. */
static struct evalctx *compute_begin(const struct tma_plan *p, int *r)
{
	struct evalctx *e = p->cpu ? ctx_new(p) : NULL;

	*r = !p->cpu ? -EINVAL : e ? 0 : -ENOMEM;
	return e;
}

/* The tree from e's counts; frees e. */
static int compute_end(const struct tma_plan *p, struct evalctx *e, struct tma_result *res)
{
	int r = compute_best(p, e, res);

	free(e);
	return r;
}

int tma_compute(const struct tma_plan *p, int n, const struct tma_count *counts, struct tma_result *res)
{
	int r;
	struct evalctx *e = compute_begin(p, &r);

	if (!e)
		return r;
	for (int i = 0; i < n; i++)
		add_value(e, counts[i].name, counts[i].value, counts[i].pct, counts[i].group);
	/* recipe events given under another name (e.g. -e r00c0): match by the plan's encodings */
	for (int i = 0; i < n; i++) {
		const struct perf_event_attr *a = counts[i].attr;
		if (!a || a->type != PERF_TYPE_RAW)
			continue;
		for (int k = 0; k < p->nalias; k++) {
			const struct tma_alias *al = &p->alias[k];
			if (al->type == a->type && al->config == a->config && al->config1 == a->config1 &&
			    lookup_value(e, al->key) < 0)
				add_value(e, al->key, counts[i].value, counts[i].pct, counts[i].group);
		}
	}
	return compute_end(p, e, res);
}

int tma_compute_named(const struct tma_plan *p, int n, const char *const *names, const double *values,
		      const double *pct_running, struct tma_result *res)
{
	int r;
	struct evalctx *e = compute_begin(p, &r);

	if (!e)
		return r;
	for (int i = 0; i < n; i++)
		add_value(e, names[i], values[i], pct_running ? pct_running[i] : 100, -1);
	return compute_end(p, e, res);
}

const struct tma_node *tma_result_node(const struct tma_result *r, const char *name)
{
	for (int i = 0; i < r->n; i++)
		if (!strcmp(r->node[i].name, name))
			return &r->node[i];
	return NULL;
}

double tma_result_get(const struct tma_result *r, const char *name)
{
	const struct tma_node *n = tma_result_node(r, name);

	return n ? n->value : NAN;
}

/* ---------------- measured FLOPs (perf's FLOPs metric) ---------------- */

static const struct tma_env flops_env;	/* the FLOPs metric has no literals */

/* c's compiled perf formulation and the index of its FLOPs metric, or NULL (*r: -ENOENT, -ENOMEM) */
static struct cform *flops_form(const struct tma_cpu *c, int *mi, int *r)
{
	const struct tma_metric *m = c && c->perf && c->perf->flops ? find_metric(c->perf, c->perf->flops) : NULL;
	struct cform *cf = m ? cform_get(c, c->perf) : NULL;

	*r = !m ? -ENOENT : !cf ? -ENOMEM : 0;
	if (cf)
		*mi = metric_index(cf, m);
	return cf;
}

int tma_flops_events(const struct tma_cpu *c, char (*keys)[TMA_KEY_LEN], int max)
{
	int mi, r;
	struct cform *cf = flops_form(c, &mi, &r);
	struct evalctx *e;
	struct tma_expr_val v;
	int n = 0;

	if (!cf)
		return r == -ENOENT ? 0 : r;
	if (!(e = malloc(sizeof(*e))))
		return -ENOMEM;
	ctx_init(e, c, &flops_env, true);
	ctx_bind(e, cf);
	tma_expr_run(&e->x, cf->prog[mi], &v, NULL, 0);
	for (int i = 0; i < e->norder; i++)
		if (tma_ids_has(&v.ids, e->order[i]) && strcasecmp(cf->key[e->order[i]], "duration_time") && n < max)
			snprintf(keys[n++], TMA_KEY_LEN, "%s", cf->key[e->order[i]]);
	free(e);
	return n;
}

int tma_flops_named(const struct tma_cpu *c, int n, const char *const *names, const double *values, double seconds,
		    double *flops, double *gflops, char *why, size_t whylen)
{
	int mi, r;
	struct cform *cf = flops_form(c, &mi, &r);
	struct evalctx *e;
	struct tma_expr_val v;
	char miss[160] = "";

	*flops = NAN;
	if (gflops)
		*gflops = NAN;
	if (!cf) {
		snprintf(why, whylen, r == -ENOENT ? "perf has no FLOPs metric for %s" : "out of memory",
			 c ? c->name : "this CPU");
		return r;
	}
	if (!(seconds > 0)) {
		snprintf(why, whylen, "no time to measure FLOP/s over");
		return -EINVAL;
	}
	if (!(e = malloc(sizeof(*e))))
		return -ENOMEM;
	ctx_init(e, c, &flops_env, false);
	for (int i = 0; i < n; i++)
		add_value(e, names[i], values[i], 100, -1);
	add_value(e, "duration_time", seconds, 100, -1);
	ctx_bind(e, cf);
	r = tma_expr_run(&e->x, cf->prog[mi], &v, NULL, 0);
	tma_ids_for_each(k, &v.ids)
		if (key_val(e, k) < 0)
			add_list(miss, sizeof(miss), cf->key[k]);
	free(e);
	if (miss[0]) {
		snprintf(why, whylen, "missing: %s", miss);
		return -EAGAIN;
	}
	if (gflops)
		*gflops = r ? NAN : v.v;
	*flops = r ? NAN : v.v * 1e9 * seconds;
	why[0] = 0;
	return 0;
}
