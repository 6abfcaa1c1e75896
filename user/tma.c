// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* TMA engine: event planning, perf-exact formula evaluation, tree output. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "tma.h"
#include "tma_expr.h"
#include "tma_recipes.h"
#include "pfm_enc.h"
#include "tma_cache.h"

static struct tma_env env = { 0, 0, 0, -1, 0, 0 };
static char plan_note[512];
/* nodes the last plan left out to fit the counters (tma_compute skips them) */
static const struct tma_cpu *omit_cpu;
static char omit[TMA_MAX_NODES][48];
static int nomit;
static unsigned omit_gen = 1;	/* changes with omit[]: keys the cached plans */

static bool omitted(const struct tma_cpu *c, const char *name)
{
	if (c != omit_cpu)
		return false;
	for (int i = 0; i < nomit; i++)
		if (!strcmp(omit[i], name))
			return true;
	return false;
}

static int read_int_file(const char *path, int dflt)
{
	FILE *f = fopen(path, "r");
	int v = dflt;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = dflt;
		fclose(f);
	}
	return v;
}

void tma_env_host(struct tma_env *e)
{
	memset(e, 0, sizeof(*e));
	e->smt_on = read_int_file("/sys/devices/system/cpu/smt/active", 0) > 0;
	e->core_wide = 0;
	e->nmi_watchdog = -1;
}

void tma_set_env(const struct tma_env *e)
{
	env = *e;
}

const struct tma_env *tma_get_env(void)
{
	return &env;
}

const char *tma_plan_note(void)
{
	return plan_note;
}

/* ---------------- event names ---------------- */

static const struct { const char *from, *to; } key_alias[] = {
	{ "SLOTS", "TOPDOWN.SLOTS" },
	{ "PERF_METRICS.FRONTEND_BOUND", "TOPDOWN-FE-BOUND" },
	{ "PERF_METRICS.BAD_SPECULATION", "TOPDOWN-BAD-SPEC" },
	{ "PERF_METRICS.RETIRING", "TOPDOWN-RETIRING" },
	{ "PERF_METRICS.BACKEND_BOUND", "TOPDOWN-BE-BOUND" },
	{ "PERF_METRICS.HEAVY_OPERATIONS", "TOPDOWN-HEAVY-OPS" },
	{ "PERF_METRICS.BRANCH_MISPREDICTS", "TOPDOWN-BR-MISPREDICT" },
	{ "PERF_METRICS.FETCH_LATENCY", "TOPDOWN-FETCH-LAT" },
	{ "PERF_METRICS.MEMORY_BOUND", "TOPDOWN-MEM-BOUND" },
};

static bool parse_num(const char *s, unsigned long long *v)
{
	char *end;

	if (!*s)
		return false;
	*v = strtoull(s, &end, 0);
	return *end == 0;
}

int tma_event_key(const char *name, char *out, size_t len)
{
	char buf[256], base[160] = "";
	unsigned long long umask = 0, cmask = 0;
	bool has_umask = false, edge = false, inv = false;
	char *p, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", name);
	for (p = buf; *p; p++)
		if (*p == '@')
			*p = '/';
	p = buf;
	/* pmu/terms/[modifiers] */
	char *s1 = strchr(p, '/');
	if (s1) {
		char *s2 = strrchr(p, '/');
		if (s2 == s1)
			return -EINVAL;
		*s2 = 0;
		p = s1 + 1;
	}
	int i = 0;
	for (char *t = strtok_r(p, ",", &save); t; t = strtok_r(NULL, ",", &save), i++) {
		char *eq = strchr(t, '=');
		if (i == 0 && !eq) {
			/* NAME[:mod...] */
			char *save2 = NULL;
			int j = 0;
			for (char *m = strtok_r(t, ":", &save2); m; m = strtok_r(NULL, ":", &save2), j++) {
				if (j == 0) {
					snprintf(base, sizeof(base), "%s", m);
					continue;
				}
				char k = (char)tolower((unsigned char)m[0]);
				const char *val = m[1] == '=' ? m + 2 : m + 1;
				unsigned long long v;
				if (!*val || !parse_num(val, &v))
					continue;	/* perf modifiers (u, k, pp, perf_metrics ...) */
				if (k == 'c')
					cmask = v;
				else if (k == 'e')
					edge = v != 0;
				else if (k == 'i')
					inv = v != 0;
				else if (k == 'u')
					umask = v, has_umask = true;
			}
			continue;
		}
		char term[64];
		unsigned long long v = 1;
		snprintf(term, sizeof(term), "%.*s", eq ? (int)(eq - t) : (int)strlen(t), t);
		if (eq && !parse_num(eq + 1, &v))
			return -EINVAL;
		if (!strcasecmp(term, "cmask"))
			cmask = v;
		else if (!strcasecmp(term, "edge"))
			edge = v != 0;
		else if (!strcasecmp(term, "inv"))
			inv = v != 0;
		else if (!strcasecmp(term, "umask"))
			umask = v, has_umask = true;
		else if (!strcasecmp(term, "name") || !strncasecmp(term, "metric-id", 9))
			;
		else if (i == 0)
			return -EINVAL;	/* raw event=..,umask=.. spec: not a name */
	}
	if (!base[0])
		return -EINVAL;
	for (p = base; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	for (size_t k = 0; k < sizeof(key_alias) / sizeof(key_alias[0]); k++)
		if (!strcmp(base, key_alias[k].from))
			snprintf(base, sizeof(base), "%s", key_alias[k].to);
	int n = snprintf(out, len, "%s", base);
	if (has_umask)
		n += snprintf(out + n, len > (size_t)n ? len - n : 0, ":u0x%llx", umask);
	if (cmask)
		n += snprintf(out + n, len > (size_t)n ? len - n : 0, ":c%llu", cmask);
	if (edge)
		n += snprintf(out + n, len > (size_t)n ? len - n : 0, ":e1");
	if (inv)
		n += snprintf(out + n, len > (size_t)n ? len - n : 0, ":i1");
	return (size_t)n < len ? 0 : -ENAMETOOLONG;
}

static const struct tma_event_enc *find_enc(const struct tma_cpu *c, const char *key)
{
	for (int i = 0; i < c->nev; i++)
		if (!strcmp(c->ev[i].key, key))
			return &c->ev[i];
	return NULL;
}

/* split key into base and modifiers */
static void key_mods(const char *key, char *base, size_t blen, unsigned long long *umask, bool *has_umask,
		     unsigned long long *cmask, bool *edge, bool *inv)
{
	const char *colon = strchr(key, ':');
	snprintf(base, blen, "%.*s", colon ? (int)(colon - key) : (int)strlen(key), key);
	*umask = 0, *has_umask = false, *cmask = 0, *edge = false, *inv = false;
	while (colon) {
		const char *m = colon + 1;
		colon = strchr(m, ':');
		unsigned long long v = strtoull(m + 1, NULL, 0);
		if (*m == 'u') *umask = v, *has_umask = true;
		else if (*m == 'c') *cmask = v;
		else if (*m == 'e') *edge = v;
		else if (*m == 'i') *inv = v;
	}
}

int tma_encode_key(const struct tma_cpu *c, const char *key, struct perf_event_attr *attr,
		   char *err, size_t errlen)
{
	const struct tma_event_enc *e = find_enc(c, key);
	struct pfm_enc_out o = { 0 };

	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	if (e && e->pseudo) {
		snprintf(err, errlen, "%s is a perf-metrics pseudo event (slots/topdown-*): not opened by tmabpf", key);
		return -EOPNOTSUPP;
	}
	if (e && !e->pfm) {
		o.type = PERF_TYPE_RAW;
		o.config = e->raw;
	} else if (e) {
		if (!c->pfm_pmu) {
			snprintf(err, errlen, "no libpfm4 PMU for %s", c->name);
			return -ENOENT;
		}
		int r = pfm_enc_event(c->pfm_pmu, e->pfm, &o, NULL, 0, err, errlen);
		if (r)
			return r;
	} else {
		/* default rule (Intel): A.B with modifiers -> libpfm4 A:B:c=N:e=1:i=1, umask patched */
		char base[160], name[200];
		unsigned long long um, cm;
		bool hu, ed, in;
		key_mods(key, base, sizeof(base), &um, &hu, &cm, &ed, &in);
		if (!c->pfm_pmu) {
			snprintf(err, errlen, "recipe event %s has no encoding for %s", key, c->name);
			return -ENOENT;
		}
		char *dot = strchr(base, '.');
		if (dot)
			*dot = ':';
		int n = snprintf(name, sizeof(name), "%s", base);
		if (cm)
			n += snprintf(name + n, sizeof(name) - n, ":c=%llu", cm);
		if (ed)
			n += snprintf(name + n, sizeof(name) - n, ":e=1");
		if (in)
			n += snprintf(name + n, sizeof(name) - n, ":i=1");
		int r = pfm_enc_event(c->pfm_pmu, name, &o, NULL, 0, err, errlen);
		if (r)
			return r;
		if (hu)
			o.config = (o.config & ~0xff00ULL) | ((um & 0xff) << 8);
	}
	attr->type = o.type;
	attr->config = o.config;
	attr->config1 = o.config1;
	attr->config2 = o.config2;
	attr->exclude_guest = 1;	/* perf stat's default */
	return 0;
}

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
		out[n++] = find_metric(f, root->m[i].name);
	return n;
}

/* ---------------- compiled formulations ----------------
 * Each (cpu, formulation) is compiled once, on first use: every metric visible
 * through the formulation (its own, then its bases') becomes a postfix program
 * whose references are bound to a metric index or an interned event key, so a
 * run does no parsing, no name lookup and no event-key canonicalisation.  The
 * event keys each (level, #literals, left-out nodes) needs are cached too.
 * Results are the same as evaluating the strings (tests/unit/test_tma_cache.c). */
#define MAXM 256	/* metrics visible through one formulation */
#define MAXK 256	/* distinct event keys its formulas name */
#define NPLAN 16

enum { LIT_SMT, LIT_CORE_WIDE, LIT_PMEM, LIT_SLOTS };

struct plan_memo {
	int level, smt_on, core_wide, has_pmem, slots;
	unsigned omit_gen;	/* 0: the whole recipe (no left-out nodes) */
	int nk;
	short k[TMA_EXPR_MAX_IDS];	/* keys, first-use order */
};

struct key_enc {
	signed char state;	/* 0 not tried, 1 encoded, -1 cannot be encoded */
	struct perf_event_attr a;
};

struct cform {
	const struct tma_cpu *c;
	const struct tma_formulation *f;
	int nm, nkey, ntree;
	const struct tma_metric *m[MAXM];
	struct tma_expr_prog *prog[MAXM];
	short tree[TMA_MAX_NODES];	/* index in m[], -1 */
	char *key[MAXK];
	struct key_enc enc[MAXK];
	struct plan_memo plan[NPLAN];
	int nplan;
	struct cform *next;
};

static pthread_mutex_t cf_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cform *cforms;

#define MAXV 96
struct evalctx {
	struct tma_expr_ctx x;
	const struct tma_cpu *c;
	const struct tma_formulation *f;
	struct cform *cf;	/* f compiled */
	int nv;
	char key[MAXV][TMA_EXPR_ID_LEN];
	double val[MAXV], pct[MAXV];
	int group[MAXV];
	/* memo of metric values: valid when memo_gen[i] == gen */
	unsigned gen;
	unsigned memo_gen[MAXM];
	struct tma_expr_val memo_v[MAXM];
	short slot_of[MAXK];	/* key -> bit in x (ids), -1 */
	short val_of[MAXK];	/* key -> index in val[], -1 none, -2 not looked up */
	short key_of_slot[TMA_EXPR_MAX_IDS];
	char missing[256];
};

static int lookup_value(struct evalctx *e, const char *key)
{
	for (int i = 0; i < e->nv; i++)
		if (!strcmp(e->key[i], key))
			return i;
	return -1;
}

static void add_missing(struct evalctx *e, const char *key)
{
	if (strstr(e->missing, key))
		return;
	size_t l = strlen(e->missing);
	snprintf(e->missing + l, sizeof(e->missing) - l, "%s%s", l ? ", " : "", key);
}

static int intern_key(struct cform *cf, const char *id)
{
	char key[TMA_EXPR_ID_LEN];

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
	for (int i = 0; i < cf->ntree; i++)
		cf->tree[i] = tree[i] ? (short)metric_index(cf, tree[i]) : -1;
	return cf;
fail:
	fprintf(stderr, "tmabpf: TMA recipe %s (%s formulation): cannot compile its formulas (out of memory, "
		"or more than %d metrics or %d events)\n", c->name, f->name, MAXM, MAXK);
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

/* x's bit for key k (registered on first use, as tma_expr_id_index did) */
static int key_slot(struct evalctx *e, int k)
{
	if (e->slot_of[k] >= 0)
		return e->slot_of[k];
	if (e->x.nid >= TMA_EXPR_MAX_IDS) {
		e->x.id_overflow = true;
		return -1;
	}
	e->key_of_slot[e->x.nid] = (short)k;
	e->slot_of[k] = (short)e->x.nid;
	return e->x.nid++;
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

	out->v = NAN, out->cnst = false, out->ids = 0;
	if (ref->kind == TMA_EXPR_LITERAL) {
		out->cnst = true;
		switch (ref->bind) {
		case LIT_SMT: out->v = env.smt_on; return 0;
		case LIT_CORE_WIDE: out->v = env.core_wide; return 0;
		case LIT_PMEM: out->v = env.has_pmem; return 0;
		case LIT_SLOTS: out->v = env.slots ? env.slots : e->c->slots; return 0;
		default: return -1;
		}
	}
	if (ref->kind == TMA_EXPR_CPUID) {
		/* N2/V2 stall-slot erratum test: treat the recipe CPU as a current revision */
		out->cnst = true;
		out->v = !strcmp(e->c->name, "neoverse-n2") ? 1 : 0;
		return 0;
	}
	if (ref->bind < MAXM) {	/* a metric */
		int m = ref->bind;
		if (e->memo_gen[m] == e->gen) {
			*out = e->memo_v[m];
			return 0;
		}
		struct tma_expr_val v;
		x->depth++;
		int r = tma_expr_run(x, e->cf->prog[m], &v, NULL, 0);
		x->depth--;
		if (r != 0) { /* perf: a referenced metric that fails to parse -> NaN */
			v.v = NAN;
			v.cnst = false;
		}
		e->memo_gen[m] = e->gen;
		e->memo_v[m] = v;
		*out = v;
		return 0;
	}
	int k = ref->bind - MAXM;
	int bit = key_slot(e, k);
	if (bit >= 0)
		out->ids = 1ULL << bit;
	if (ref->kind == TMA_EXPR_HAS_EVENT) {
		out->cnst = true;
		out->v = key_val(e, k) >= 0;
		return 0;
	}
	if (x->planning)
		return 0;
	int i = key_val(e, k);
	if (i < 0)
		return -1;	/* reported by compute_with when on a taken branch */
	out->v = ref->kind == TMA_EXPR_SOURCE_COUNT ? 1 : e->val[i];
	return 0;
}

static void ctx_init(struct evalctx *e, const struct tma_cpu *c, const struct tma_formulation *f, bool planning)
{
	memset(e, 0, sizeof(*e));
	e->x.resolve_ref = resolve;
	e->x.planning = planning;
	e->c = c;
	e->f = f;
}

/* evaluate f from a clean slate: no ids, no memo; -1 when f cannot be compiled */
static int ctx_bind(struct evalctx *e, const struct tma_formulation *f)
{
	e->f = f;
	e->cf = cform_get(e->c, f);
	if (!e->cf)
		return -1;
	e->x.nid = 0;
	e->x.id_overflow = false;
	for (int k = 0; k < e->cf->nkey; k++) {
		e->slot_of[k] = -1;
		e->val_of[k] = -2;
	}
	e->gen++;
	return 0;
}

/* events (keys) formulation f needs for nodes up to level; returns count, keys in e->x.id
 * (and e->key_of_slot) */
static int needed_keys(struct evalctx *e, int level, uint64_t *per_metric, const struct tma_metric **ms, int *nm,
		       uint64_t *usedp)
{
	uint64_t used = 0;
	int k = 0;

	if (ctx_bind(e, e->f))
		return -ENOMEM;
	const struct cform *cf = e->cf;
	for (int i = 0; i < cf->ntree; i++) {
		const struct tma_metric *m = cf->tree[i] >= 0 ? cf->m[cf->tree[i]] : NULL;
		if (!m || m->tma == 0 || m->tma > level || omitted(e->c, m->name))
			continue;
		struct tma_expr_val v;
		e->gen++;	/* planning memo must not hide ids */
		tma_expr_run(&e->x, cf->prog[cf->tree[i]], &v, NULL, 0);
		used |= v.ids;
		if (per_metric) {
			per_metric[k] = v.ids;
			ms[k] = m;
		}
		k++;
	}
	if (nm)
		*nm = k;
	/* ids of branches perf would not take were registered while parsing: drop them */
	int n2 = 0;
	for (int b = 0; b < e->x.nid; b++) {
		if (!(used >> b & 1))
			continue;
		if (n2 != b) {
			e->key_of_slot[n2] = e->key_of_slot[b];
			for (int m = 0; per_metric && m < k; m++)
				per_metric[m] = (per_metric[m] & ~(1ULL << n2)) | (((per_metric[m] >> b) & 1) << n2);
		}
		snprintf(e->x.id[n2], TMA_EXPR_ID_LEN, "%s", cf->key[e->key_of_slot[n2]]);
		n2++;
	}
	if (usedp)
		*usedp = used;
	return n2;
}

/* the keys formulation f needs up to level with the current #literals and left-out
 * nodes (whole: none left out), cached; NULL when f cannot be compiled */
static int plan_keys(const struct tma_cpu *c, const struct tma_formulation *f, int level, bool whole,
		     struct plan_memo *out)
{
	static struct evalctx pe;
	struct cform *cf = cform_get(c, f);
	struct plan_memo key = { .level = level, .smt_on = env.smt_on, .core_wide = env.core_wide,
				 .has_pmem = env.has_pmem, .slots = env.slots,
				 .omit_gen = whole || omit_cpu != c || !nomit ? 0 : omit_gen };
	const struct plan_memo *hit = NULL;

	if (!cf)
		return -ENOMEM;
	pthread_mutex_lock(&cf_lock);
	for (int i = 0; i < cf->nplan && !hit; i++) {
		const struct plan_memo *p = &cf->plan[i];
		if (p->level == key.level && p->smt_on == key.smt_on && p->core_wide == key.core_wide &&
		    p->has_pmem == key.has_pmem && p->slots == key.slots && p->omit_gen == key.omit_gen)
			hit = p;
	}
	if (hit)
		*out = *hit;
	pthread_mutex_unlock(&cf_lock);
	if (hit)
		return 0;
	const struct tma_cpu *saved = omit_cpu;
	if (whole)
		omit_cpu = NULL;
	ctx_init(&pe, c, f, true);
	key.nk = needed_keys(&pe, level, NULL, NULL, NULL, NULL);
	omit_cpu = saved;
	if (key.nk < 0)
		return key.nk;
	for (int i = 0; i < key.nk; i++)
		key.k[i] = pe.key_of_slot[i];
	pthread_mutex_lock(&cf_lock);
	/* full: the oldest entry goes (env changes are rare) */
	if (cf->nplan == NPLAN) {
		memmove(&cf->plan[0], &cf->plan[1], (NPLAN - 1) * sizeof(cf->plan[0]));
		cf->nplan--;
	}
	cf->plan[cf->nplan++] = key;
	pthread_mutex_unlock(&cf_lock);
	*out = key;
	return 0;
}

int tma_needed_events(const struct tma_cpu *c, bool gc, int level, char (*keys)[TMA_KEY_LEN], int max)
{
	static struct evalctx e;

	if (!c)
		return -EINVAL;
	const struct tma_cpu *saved = omit_cpu;
	omit_cpu = NULL;	/* the whole recipe, not the last plan's subset */
	ctx_init(&e, c, gc && c->gc ? c->gc : c->perf, true);
	int nk = needed_keys(&e, level, NULL, NULL, NULL, NULL);
	omit_cpu = saved;
	if (nk < 0)
		return nk;
	for (int i = 0; i < nk && i < max; i++)
		snprintf(keys[i], TMA_KEY_LEN, "%s", e.x.id[i]);
	return nk < max ? nk : max;
}

/* ---------------- planning ---------------- */

static int host_watchdog(void)
{
	if (env.nmi_watchdog >= 0)
		return env.nmi_watchdog;
	return read_int_file("/proc/sys/kernel/nmi_watchdog", 0) > 0;
}

struct grp {
	int id;
	unsigned fixed_used;
	int ngp;
	uint8_t cmask[16];	/* per gp event: allowed counters (0 = any) */
};

/* can the gp events (with new one) be assigned to distinct counters < ngp_total? */
static bool gp_fits(const struct grp *g, uint8_t newmask, int total)
{
	uint8_t masks[17];
	int n = 0;
	unsigned used = 0;

	if (g->ngp + 1 > total)
		return false;
	for (int i = 0; i < g->ngp; i++)
		masks[n++] = g->cmask[i];
	masks[n++] = newmask;
	/* constrained first (fewest choices), greedy lowest counter */
	for (int pass = 1; pass <= 8; pass++)
		for (int i = 0; i < n; i++) {
			if (!masks[i] || __builtin_popcount(masks[i]) != pass)
				continue;
			int ctr = -1;
			for (int b = 0; b < total; b++)
				if ((masks[i] >> b & 1) && !(used >> b & 1)) {
					ctr = b;
					break;
				}
			if (ctr < 0)
				return false;
			used |= 1u << ctr;
		}
	int free_ctr = total - __builtin_popcount(used), anyn = 0;
	for (int i = 0; i < n; i++)
		anyn += masks[i] == 0;
	return anyn <= free_ctr;
}

int tma_plan_events(const struct tma_cpu *c, int level, struct event_list *out, char *err, size_t errlen)
{
	static struct evalctx e;
	uint64_t per[TMA_MAX_NODES];
	const struct tma_metric *ms[TMA_MAX_NODES];
	int nm = 0;

	plan_note[0] = 0;
	if (!c) {
		snprintf(err, errlen, "no TMA recipe for this CPU");
		return -ENOENT;
	}
	if (level < 1)
		level = 1;
	if (level > c->max_level) {
		snprintf(err, errlen, "--tma=%d is not available on %s: its recipe has levels 1..%d",
			 level, c->name, c->max_level);
		return -EINVAL;
	}
	const struct tma_formulation *f = c->gc ? c->gc : c->perf;
	nomit = 0;
	omit_cpu = c;
	omit_gen++;
	ctx_init(&e, c, f, true);
	int nk = needed_keys(&e, level, per, ms, &nm, NULL);
	if (level >= 3 && out->n + nk > TMABPF_MAX_EVENTS) {
		/* keep the level-3 drill-down: leave out the level-2 nodes of the other top-level branches */
		const struct tma_metric *tree[TMA_MAX_NODES], *root = NULL;
		int n = tree_metrics(f, tree, TMA_MAX_NODES);
		for (int i = 0; i < n && !root; i++)
			if (tree[i] && tree[i]->tma == 3) {
				const struct tma_metric *m = tree[i];
				while (m && m->parent)
					m = find_metric(f, m->parent);
				root = m;
			}
		for (int i = 0; i < n && root; i++) {
			const struct tma_metric *m = tree[i];
			if (!m || m->tma != 2 || !m->parent || !strcmp(m->parent, root->name))
				continue;
			snprintf(omit[nomit++], sizeof(omit[0]), "%s", m->name);
		}
		omit_gen++;
		ctx_init(&e, c, f, true);
		nk = needed_keys(&e, level, per, ms, &nm, NULL);
	}
	if (nk < 0) {
		snprintf(err, errlen, "recipe %s: its formulas cannot be compiled", c->name);
		return nk;
	}
	if (e.x.id_overflow) {
		snprintf(err, errlen, "recipe %s level %d references too many events", c->name, level);
		return -E2BIG;
	}
	int first_new = out->n, maxgroup = -1;
	for (int i = 0; i < out->n; i++)
		if (out->ev[i].group > maxgroup)
			maxgroup = out->ev[i].group;
	if (out->n + nk > TMABPF_MAX_EVENTS) {
		snprintf(err, errlen, "TMA level %d on %s needs %d counters; with %d other events that exceeds "
			 "the %d tmabpf can virtualise per thread (try --tma=%d)", level, c->name, nk, out->n,
			 TMABPF_MAX_EVENTS, level > 1 ? level - 1 : 1);
		return -E2BIG;
	}
	bool wd = host_watchdog();
	int gp = env.smt_on ? c->gp_counters : c->gp_counters_smt_off;
	if (wd && c->vendor != TMA_INTEL)
		gp--;	/* the watchdog's cycles event takes a general counter */
	struct grp g = { .id = maxgroup + 1 };
	int ngroups = 1;
	for (int k = 0; k < nk; k++) {
		const char *key = e.x.id[k];
		const struct tma_event_enc *enc = find_enc(c, key);
		struct event_desc d;
		memset(&d, 0, sizeof(d));
		int r = tma_encode_key(c, key, &d.attr, err, errlen);
		if (r) {
			out->n = first_new;
			return r;
		}
		snprintf(d.name, sizeof(d.name), "%s", key);
		snprintf(d.pmu, sizeof(d.pmu), "cpu");
		for (int m = 0; m < nm; m++)
			if (per[m] >> k & 1) {
				size_t l = strlen(d.need);
				const char *lab = ms[m]->name;
				if (l + strlen(lab) + 2 < sizeof(d.need))
					snprintf(d.need + l, sizeof(d.need) - l, "%s%s", l ? "," : "", lab);
			}
		int fx = enc ? enc->fixed : -1;
		if (c->vendor == TMA_INTEL && wd && fx == 1)
			fx = -1;	/* the NMI watchdog holds the fixed cycles counter */
		uint8_t cm = enc ? enc->counters : 0;
		bool placed = false;
		for (int attempt = 0; attempt < 2 && !placed; attempt++) {
			if (fx >= 0 && fx < c->fixed_counters && !(g.fixed_used >> fx & 1)) {
				g.fixed_used |= 1u << fx;
				placed = true;
			} else if (gp_fits(&g, cm, gp)) {
				g.cmask[g.ngp++] = cm;
				placed = true;
			} else if (attempt == 0) {
				memset(&g, 0, sizeof(g));
				g.id = maxgroup + 1 + ngroups++;
			}
		}
		if (!placed) {
			snprintf(err, errlen, "event %s cannot be scheduled on %s counters", key, c->name);
			out->n = first_new;
			return -EINVAL;
		}
		d.group = g.id;
		r = events_add(out, &d, err, errlen);
		if (r < 0) {
			out->n = first_new;
			return r;
		}
	}
	/* leaders: first event of each group */
	for (int i = first_new; i < out->n; i++) {
		out->ev[i].leader = true;
		for (int j = first_new; j < i; j++)
			if (out->ev[j].group == out->ev[i].group)
				out->ev[i].leader = false;
	}
	int pn = snprintf(plan_note, sizeof(plan_note),
		 "%s TMA level %d (%s formulation): %d events in %d group%s; budget %d fixed + %d general counters%s%s",
		 c->name, level, f->name, nk, ngroups, ngroups > 1 ? "s" : "", c->fixed_counters, gp,
		 wd ? " (NMI watchdog holds one)" : "",
		 ngroups > 1 ? "; groups are multiplexed, values scaled by enabled/running" : "");
	if (nomit) {
		pn += snprintf(plan_note + pn, sizeof(plan_note) - pn, "; to stay within %d counters level 3 leaves out",
			       TMABPF_MAX_EVENTS);
		for (int i = 0; i < nomit && pn < (int)sizeof(plan_note); i++)
			pn += snprintf(plan_note + pn, sizeof(plan_note) - pn, " %s", omit[i]);
		if (pn < (int)sizeof(plan_note))
			snprintf(plan_note + pn, sizeof(plan_note) - pn, " (see them with --tma=2)");
	}
	return 0;
}

/* ---------------- compute ---------------- */

static bool skip_omitted;

static int compute_with(const struct tma_cpu *c, const struct tma_formulation *f, int level,
			struct evalctx *e, struct tma_result *res)
{
	memset(res, 0, sizeof(*res));
	res->cpu = c;
	res->level = level;
	res->formulation = f->name;
	if (ctx_bind(e, f))
		return -ENOMEM;
	e->missing[0] = 0;
	const struct cform *cf = e->cf;
	for (int i = 0; i < cf->ntree; i++) {
		const struct tma_metric *m = cf->tree[i] >= 0 ? cf->m[cf->tree[i]] : NULL;
		if (!m || m->tma == 0 || m->tma > level || res->n >= TMA_MAX_NODES)
			continue;
		if (skip_omitted && omitted(c, m->name))
			continue;
		struct tma_node *nd = &res->node[res->n];
		struct tma_expr_val v;
		snprintf(nd->name, sizeof(nd->name), "%s", m->name);
		snprintf(nd->label, sizeof(nd->label), "%s", m->label ? m->label : m->name);
		nd->tma = m->tma;
		nd->parent = -1;
		nd->depth = 1;
		for (int p = 0; m->parent && p < res->n; p++)
			if (!strcmp(res->node[p].name, m->parent)) {
				nd->parent = p;
				nd->depth = res->node[p].depth + 1;
			}
		int r = tma_expr_run(&e->x, cf->prog[cf->tree[i]], &v, NULL, 0);
		nd->value = r == 0 ? v.v * m->scale : NAN;
		nd->min_running = 100;
		int g0 = -1;
		double p0 = -1;
		bool mixed = false;
		for (int b = 0; b < e->x.nid; b++) {
			if (!(v.ids >> b & 1))
				continue;
			int k = key_val(e, e->key_of_slot[b]);
			if (k < 0) {
				add_missing(e, cf->key[e->key_of_slot[b]]);
				continue;
			}
			if (e->pct[k] < nd->min_running)
				nd->min_running = e->pct[k];
			/* different groups, or (groups unknown) differently scaled counters */
			if (e->group[k] >= 0) {
				if (g0 >= 0 && g0 != e->group[k])
					mixed = true;
				g0 = e->group[k];
			}
			if (p0 >= 0 && fabs(p0 - e->pct[k]) > 0.01)
				mixed = true;
			p0 = e->pct[k];
		}
		nd->scaled = nd->min_running < 99.995;
		nd->ungrouped = nd->scaled && mixed;
		res->n++;
	}
	snprintf(res->missing, sizeof(res->missing), "%s", e->missing);
	return 0;
}

static int compute_common(const struct tma_cpu *c, int level, struct evalctx *e, struct tma_result *res)
{
	const struct tma_formulation *cand[2];
	int nc = 0, best = -1, bestmiss = 1 << 30;

	if (!c)
		return -EINVAL;
	if (level > c->max_level)
		level = c->max_level;
	if (env.prefer_perf || !c->gc) {
		cand[nc++] = c->perf;
		if (c->gc)
			cand[nc++] = c->gc;
	} else {
		cand[nc++] = c->gc;
		cand[nc++] = c->perf;
	}
	for (int i = 0; i < nc; i++) {
		struct plan_memo pm;
		if (plan_keys(c, cand[i], level, false, &pm))
			return -ENOMEM;
		if (ctx_bind(e, cand[i]))
			return -ENOMEM;
		int miss = 0;
		for (int k = 0; k < pm.nk; k++)
			miss += key_val(e, pm.k[k]) < 0;
		if (miss < bestmiss) {
			bestmiss = miss;
			best = i;
		}
	}
	return compute_with(c, cand[best], level, e, res);
}

/* the encoding of key k for cf's CPU (tma_encode_key, cached); NULL if none */
static const struct perf_event_attr *key_attr(struct cform *cf, int k)
{
	struct key_enc *ke = &cf->enc[k];

	pthread_mutex_lock(&cf_lock);
	if (!ke->state) {
		char err[128];
		ke->state = tma_encode_key(cf->c, cf->key[k], &ke->a, err, sizeof(err)) ? -1 : 1;
	}
	pthread_mutex_unlock(&cf_lock);
	return ke->state > 0 ? &ke->a : NULL;
}

static void add_value(struct evalctx *e, const char *name, const struct perf_event_attr *attr,
		      double v, double pct, int group)
{
	char key[TMA_EXPR_ID_LEN];

	if (e->nv >= MAXV || tma_event_key(name, key, sizeof(key)))
		return;
	int i = lookup_value(e, key);
	if (i >= 0) { /* same event listed twice (per-CPU lines): sum */
		e->val[i] += v;
		return;
	}
	snprintf(e->key[e->nv], TMA_EXPR_ID_LEN, "%s", key);
	e->val[e->nv] = v;
	e->pct[e->nv] = pct;
	e->group[e->nv] = group;
	e->nv++;
	(void)attr;
}

int tma_compute(const struct tma_cpu *c, int level, const struct event_list *evs,
		const double *scaled_values, const double *pct_running, struct tma_result *res)
{
	static struct evalctx e;

	ctx_init(&e, c, c ? c->perf : NULL, false);
	if (!c)
		return -EINVAL;
	for (int i = 0; i < evs->n; i++)
		add_value(&e, evs->ev[i].name, &evs->ev[i].attr, scaled_values[i],
			  pct_running ? pct_running[i] : 100, evs->ev[i].group);
	/* recipe events given under another name (e.g. -e r00c0): match by encoding */
	struct plan_memo pm = { .nk = -1 };
	struct cform *cf = NULL;
	bool have[TMA_EXPR_MAX_IDS];
	for (int i = 0; i < evs->n; i++) {
		const struct event_desc *d = &evs->ev[i];
		if (d->attr.type != PERF_TYPE_RAW)
			continue;
		if (pm.nk < 0) {
			const struct tma_formulation *gf = c->gc ? c->gc : c->perf;
			if (plan_keys(c, gf, c->max_level, true, &pm) || !(cf = cform_get(c, gf)))
				return -ENOMEM;
			for (int k = 0; k < pm.nk; k++)
				have[k] = lookup_value(&e, cf->key[pm.k[k]]) >= 0;
		}
		for (int k = 0; k < pm.nk; k++) {
			const struct perf_event_attr *a = have[k] ? NULL : key_attr(cf, pm.k[k]);
			if (a && a->type == d->attr.type && a->config == d->attr.config && a->config1 == d->attr.config1) {
				add_value(&e, cf->key[pm.k[k]], &d->attr, scaled_values[i],
					  pct_running ? pct_running[i] : 100, d->group);
				have[k] = lookup_value(&e, cf->key[pm.k[k]]) >= 0;
			}
		}
	}
	skip_omitted = true;
	int r = compute_common(c, level, &e, res);
	skip_omitted = false;
	return r;
}

int tma_compute_named(const struct tma_cpu *c, int level, int n, const char *const *names,
		      const double *values, const double *pct_running, struct tma_result *res)
{
	static struct evalctx e;

	ctx_init(&e, c, c ? c->perf : NULL, false);
	if (!c)
		return -EINVAL;
	for (int i = 0; i < n; i++)
		add_value(&e, names[i], NULL, values[i], pct_running ? pct_running[i] : 100, -1);
	return compute_common(c, level, &e, res);
}

double tma_result_get(const struct tma_result *r, const char *name)
{
	for (int i = 0; i < r->n; i++)
		if (!strcmp(r->node[i].name, name))
			return r->node[i].value;
	return NAN;
}

void tma_result_json(const struct tma_result *r, struct json *j, const char *key)
{
	json_obj_begin(j, key);
	for (int i = 0; i < r->n; i++)
		json_double(j, r->node[i].name, r->node[i].value);
	json_obj_end(j);
}

int tma_bottleneck_path(const struct tma_result *r, char *buf, size_t len)
{
	int parent = -1;
	size_t n = 0;

	if (len)
		buf[0] = 0;
	for (;;) {
		int best = -1;
		for (int i = 0; i < r->n; i++) {
			if (r->node[i].parent != parent || isnan(r->node[i].value))
				continue;
			if (best < 0 || r->node[i].value > r->node[best].value)
				best = i;
		}
		if (best < 0)
			break;
		int w = snprintf(buf + n, len > n ? len - n : 0, "%s%s %.1f%%", n ? " \xe2\x80\xba " : "",
				 r->node[best].label, r->node[best].value);
		if (w < 0 || n + (size_t)w >= len)
			return -ENOSPC;
		n += (size_t)w;
		parent = best;
	}
	return n ? (int)n : -ENOENT;
}

void tma_result_print(const struct tma_result *r, FILE *f, int indent)
{
	bool any_scaled = false;

	/* children follow their parent in DFS order */
	int order[TMA_MAX_NODES], no = 0;
	int stack[TMA_MAX_NODES], sp = 0;
	for (int i = r->n - 1; i >= 0; i--)
		if (r->node[i].parent < 0)
			stack[sp++] = i;
	while (sp) {
		int i = stack[--sp];
		order[no++] = i;
		for (int k = r->n - 1; k >= 0; k--)
			if (r->node[k].parent == i && sp < TMA_MAX_NODES)
				stack[sp++] = k;
	}
	for (int oi = 0; oi < no; oi++) {
		const struct tma_node *nd = &r->node[order[oi]];
		int pad = indent + 2 * (nd->depth - 1);
		char val[32];
		if (isnan(nd->value))
			snprintf(val, sizeof(val), "%7s", "n/a");
		else
			snprintf(val, sizeof(val), "%6.1f%%", nd->value);
		fprintf(f, "%*s%-*s %s%s%s\n", pad, "", 28 - 2 * (nd->depth - 1), nd->label, val,
			nd->scaled ? (nd->ungrouped ? "  [multiplexed, ungrouped]" : "  [multiplexed]") : "",
			"");
		any_scaled |= nd->scaled;
	}
	if (any_scaled)
		fprintf(f, "%*s[multiplexed]: counters ran part of the time and were scaled by enabled/running; "
			"[ungrouped]: the ratio mixes counters from different groups or with different scaling\n", indent, "");
	if (r->missing[0])
		fprintf(f, "%*sn/a: events not counted: %s\n", indent, "", r->missing);
}
