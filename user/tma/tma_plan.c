// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * TMA planning: which nodes a level shows, and for the BPF path the events to
 * open, packed into groups that fit the CPU's counters; see tma.h.  Pure: the
 * recipe, the level, the counter budget, the host facts and the encoder are
 * arguments.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/warn.h"
#include "tma/tma.h"

static unsigned long long omit_signature(const struct tma_plan *p)
{
	unsigned long long h = 1469598103934665603ULL;

	for (int i = 0; i < p->nomit; i++)
		for (const char *s = p->omit[i]; ; s++) {
			h = (h ^ (unsigned char)*s) * 1099511628211ULL;
			if (!*s)
				break;
		}
	return p->nomit ? h : 0;
}

int tma_plan_init(struct tma_plan *p, const struct tma_cpu *c, int level, bool run, const struct tma_env *env,
		  char *err, size_t errlen)
{
	memset(p, 0, offsetof(struct tma_plan, ev));
	p->nalias = 0;
	p->note[0] = 0;
	if (!c) {
		err_set(err, errlen, "no TMA recipe for this CPU");
		return -ENOENT;
	}
	int max = run ? c->run_max_level : c->max_level;
	if (level < 1)
		level = 1;
	if (level > max) {
		err_set(err, errlen, "--tma=%d is not available on %s: its recipe has levels 1..%d", level, c->name, max);
		return -EINVAL;
	}
	p->cpu = c;
	p->level = level;
	p->run = run;
	p->env = *env;
	return tma_compile(c, err, errlen);
}

struct grp {
	unsigned fixed_used;
	int ngp;
	uint8_t cmask[16];	/* per gp event: allowed counters (0 = any) */
};

/* can the gp events (with new one) be assigned to distinct counters < total? */
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

/* leave out the level-2 nodes of the top-level branches that hold no level-3 node */
static void leave_out_other_branches(struct tma_plan *p)
{
	const struct tma_formulation *f = tma_run_formulation(p->cpu);
	const char *const *deep = p->cpu->run_deep;
	const char *root = NULL;

	/* the drill-down's top-level node: walk up from the first level-3 node */
	for (const struct tma_formulation *g = f; g && deep && *deep && !root; g = g->base)
		for (int i = 0; i < g->n && !root; i++)
			if (!strcmp(g->m[i].name, deep[0])) {
				const struct tma_metric *m = &g->m[i];
				for (int up = 0; m && m->parent && up < 8; up++) {
					const struct tma_metric *pm = NULL;
					for (const struct tma_formulation *h = f; h && !pm; h = h->base)
						for (int j = 0; j < h->n && !pm; j++)
							if (!strcmp(h->m[j].name, m->parent))
								pm = &h->m[j];
					m = pm;
				}
				root = m ? m->name : NULL;
			}
	if (!root)
		return;
	const struct tma_formulation *base = f;
	while (base->base)
		base = base->base;
	for (int i = 0; i < base->n && p->nomit < TMA_MAX_OMIT; i++) {
		const struct tma_metric *m = &base->m[i];
		if (m->level == 2 && m->parent && strcmp(m->parent, root))
			snprintf(p->omit[p->nomit++], TMA_NAME_LEN, "%s", m->name);
	}
	p->omit_sig = omit_signature(p);
}

/* every key of c's BPF-path tree (levels 1..run_max_level) that encodes, with its encoding */
static int plan_aliases(struct tma_plan *p, tma_encode_fn *encode, struct tma_needs *nd)
{
	struct tma_plan *whole = calloc(1, sizeof(*whole));
	char err[128];

	if (!whole)
		return -ENOMEM;
	whole->cpu = p->cpu;
	whole->level = p->cpu->run_max_level;
	whole->run = true;
	whole->env = p->env;
	int nk = tma_needed_events(whole, tma_run_formulation(p->cpu), nd);
	free(whole);
	for (int k = 0; k < nk && p->nalias < TMA_MAX_ALIAS; k++) {
		struct perf_event_attr a;
		if (encode(p->cpu, nd->key[k], &a, err, sizeof(err)))
			continue;	/* the key cannot be given under another name */
		struct tma_alias *al = &p->alias[p->nalias++];
		snprintf(al->key, sizeof(al->key), "%s", nd->key[k]);
		al->type = a.type;
		al->config = a.config;
		al->config1 = a.config1;
	}
	return nk < 0 ? nk : 0;
}

int tma_plan(struct tma_plan *p, const struct tma_cpu *c, int level, int budget, const struct tma_env *env,
	     tma_encode_fn *encode, char *err, size_t errlen)
{
	struct tma_needs *nd = malloc(sizeof(*nd));
	int r = tma_plan_init(p, c, level, true, env, err, errlen);

	if (!nd)
		r = -ENOMEM;
	if (r)
		goto out;
	const struct tma_formulation *f = tma_run_formulation(c);
	int nk = tma_needed_events(p, f, nd);
	if (nk >= 0 && level >= 3 && nk > budget) {
		/* keep the level-3 drill-down: leave out the level-2 nodes of the other top-level branches */
		leave_out_other_branches(p);
		nk = tma_needed_events(p, f, nd);
	}
	if (nk < 0) {
		err_set(err, errlen, "recipe %s: its formulas cannot be compiled", c->name);
		r = nk;
		goto out;
	}
	if (nk > budget || nk > TMABPF_MAX_EVENTS) {
		err_set(err, errlen, "TMA level %d on %s needs %d counters; with %d other events that exceeds "
			 "the %d tmabpf can virtualise per thread (try --tma=%d)", level, c->name, nk,
			 TMABPF_MAX_EVENTS - budget, TMABPF_MAX_EVENTS, level > 1 ? level - 1 : 1);
		r = -E2BIG;
		goto out;
	}
	int gp = env->smt_on ? c->gp_counters : c->gp_counters_smt_off;
	if (env->nmi_watchdog && c->vendor != TMA_INTEL)
		gp--;	/* the watchdog's cycles event takes a general counter */
	struct grp g = { 0 };
	int gid = 0;
	for (int k = 0; k < nk; k++) {
		const char *key = nd->key[k];
		const struct tma_event_enc *enc = tma_event_enc(c, key);
		struct tma_event *d = &p->ev[p->nev];
		memset(d, 0, sizeof(*d));
		r = encode(c, key, &d->attr, err, errlen);
		if (r)
			goto out;
		snprintf(d->name, sizeof(d->name), "%s", key);
		for (int m = 0; m < nd->nnode; m++)
			if (tma_ids_has(&nd->uses[m], k)) {
				size_t l = strlen(d->need);
				if (l + strlen(nd->node[m]) + 2 < sizeof(d->need))
					snprintf(d->need + l, sizeof(d->need) - l, "%s%s", l ? "," : "", nd->node[m]);
			}
		int fx = enc ? enc->fixed : -1;
		if (c->vendor == TMA_INTEL && env->nmi_watchdog && fx == 1)
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
				gid++;
			}
		}
		if (!placed) {
			err_set(err, errlen, "event %s cannot be scheduled on %s counters", key, c->name);
			r = -EINVAL;
			goto out;
		}
		d->group = gid;
		p->nev++;
	}
	r = plan_aliases(p, encode, nd);
	if (r) {
		err_set(err, errlen, "recipe %s: its formulas cannot be compiled", c->name);
		goto out;
	}
	int ngroups = gid + 1, pn;
	pn = snprintf(p->note, sizeof(p->note),
		      "%s TMA level %d (%s formulation): %d events in %d group%s; budget %d fixed + %d general counters%s%s",
		      c->name, level, f->name, nk, ngroups, ngroups > 1 ? "s" : "", c->fixed_counters, gp,
		      env->nmi_watchdog ? " (NMI watchdog holds one)" : "",
		      ngroups > 1 ? "; groups are multiplexed, values scaled by enabled/running" : "");
	if (p->nomit) {
		pn += snprintf(p->note + pn, sizeof(p->note) - pn, "; to stay within %d counters level 3 leaves out",
			       TMABPF_MAX_EVENTS);
		for (int i = 0; i < p->nomit && pn < (int)sizeof(p->note); i++)
			pn += snprintf(p->note + pn, sizeof(p->note) - pn, " %s", p->omit[i]);
		if (pn < (int)sizeof(p->note))
			snprintf(p->note + pn, sizeof(p->note) - pn, " (see them with --tma=2)");
	}
out:
	free(nd);
	if (r)
		p->nev = p->nalias = 0;
	return r;
}
