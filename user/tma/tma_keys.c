// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Canonical event keys and the recipe's entry for one; see tma_keys.h. */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "tma/tma_keys.h"
#include "tma/tma_recipes.h"

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
	/* perf stat -A (no aggregation) names events "NAME [pmu]" */
	size_t bl = strlen(buf);
	if (bl > 3 && buf[bl - 1] == ']') {
		char *sp = strrchr(buf, ' ');
		if (sp && sp[1] == '[')
			*sp = 0;
	}
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

const struct tma_event_enc *tma_event_enc(const struct tma_cpu *c, const char *key)
{
	for (int i = 0; i < c->nev; i++)
		if (!strcmp(c->ev[i].key, key))
			return &c->ev[i];
	return NULL;
}

void tma_key_mods(const char *key, char *base, size_t blen, unsigned long long *umask, bool *has_umask,
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

int tma_event_perf_name(const char *key, char *out, size_t len)
{
	char base[160], terms[96] = "";
	unsigned long long um, cm;
	bool hu, ed, in;
	size_t t = 0;

	tma_key_mods(key, base, sizeof(base), &um, &hu, &cm, &ed, &in);
	for (char *p = base; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	if (!strcmp(base, "topdown.slots"))
		snprintf(base, sizeof(base), "slots");
	if (hu)
		t += (size_t)snprintf(terms + t, sizeof(terms) - t, ",umask=0x%llx", um);
	if (cm)
		t += (size_t)snprintf(terms + t, sizeof(terms) - t, ",cmask=%llu", cm);
	if (ed)
		t += (size_t)snprintf(terms + t, sizeof(terms) - t, ",edge");
	if (in)
		snprintf(terms + t, sizeof(terms) - t, ",inv");
	int n = terms[0] ? snprintf(out, len, "cpu/%s%s/", base, terms) : snprintf(out, len, "%s", base);
	return n >= 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}
