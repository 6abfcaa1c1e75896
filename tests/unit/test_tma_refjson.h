/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Test helper: a minimal JSON reader for the reference files in
 * ../shared/pmu-reference (arrays of flat objects with string values), and the
 * tiny test harness shared by the TMA tests. */
#ifndef TEST_TMA_REFJSON_H
#define TEST_TMA_REFJSON_H
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RJ_FN __attribute__((unused)) static
static int t_pass, t_fail;
#define CHECK(cond, ...) do { if (cond) { t_pass++; printf("ok - "); } else { t_fail++; printf("not ok - "); } \
	printf(__VA_ARGS__); printf("\n"); } while (0)
RJ_FN int t_done(void)
{
	printf("%d passed, %d failed\n", t_pass, t_fail);
	return t_fail ? 1 : 0;
}

struct rj_obj {
	int n;
	char *k[48];
	char *v[48];	/* strings; nested values kept as raw text */
};
struct rj_file {
	int n;
	struct rj_obj *o;
};

RJ_FN const char *refdir(void)
{
	const char *e = getenv("TMABPF_PMU_REF");
	static const char *const cand[] = { "../shared/pmu-reference", "../../../shared/pmu-reference",
					    "../../shared/pmu-reference" };
	char p[512];
	if (e && *e)
		return e;
	for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++) {
		snprintf(p, sizeof(p), "%s/SOURCES.md", cand[i]);
		FILE *f = fopen(p, "r");
		if (f) {
			fclose(f);
			return cand[i];
		}
	}
	return cand[0];
}

RJ_FN char *rj_readall(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	if (fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		fclose(f);
		return NULL;
	}
	b[n] = 0;
	fclose(f);
	return b;
}

RJ_FN const char *rj_ws(const char *p) { while (isspace((unsigned char)*p)) p++; return p; }

RJ_FN const char *rj_str(const char *p, char **out)
{
	/* p at opening quote */
	size_t cap = 64, n = 0;
	char *s = malloc(cap);
	for (p++; *p && *p != '"'; p++) {
		char c = *p;
		if (c == '\\') {
			p++;
			switch (*p) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'u': c = '?'; p += 4; break;
			default: c = *p;
			}
		}
		if (n + 2 > cap)
			s = realloc(s, cap *= 2);
		s[n++] = c;
	}
	s[n] = 0;
	*out = s;
	return *p ? p + 1 : p;
}

RJ_FN const char *rj_skip(const char *p)
{
	p = rj_ws(p);
	if (*p == '"') {
		char *s;
		p = rj_str(p, &s);
		free(s);
		return p;
	}
	if (*p == '{' || *p == '[') {
		int depth = 0;
		do {
			if (*p == '"') {
				char *s;
				p = rj_str(p, &s);
				free(s);
				continue;
			}
			if (*p == '{' || *p == '[') depth++;
			if (*p == '}' || *p == ']') depth--;
			p++;
		} while (*p && depth);
		return p;
	}
	while (*p && *p != ',' && *p != '}' && *p != ']')
		p++;
	return p;
}

/* Parse a top-level array of objects (or {"Metrics": [...]}, intel perfmon). */
RJ_FN int rj_load(const char *path, struct rj_file *rf)
{
	char *b = rj_readall(path);
	memset(rf, 0, sizeof(*rf));
	if (!b)
		return -1;
	const char *p = rj_ws(b);
	if (*p == '{') {
		const char *m = strstr(p, "\"Metrics\"");
		if (!m) { free(b); return -1; }
		p = strchr(m, '[');
	}
	if (!p || *p != '[') { free(b); return -1; }
	p++;
	int cap = 64;
	rf->o = calloc((size_t)cap, sizeof(*rf->o));
	for (;;) {
		p = rj_ws(p);
		if (*p == ',') { p++; continue; }
		if (*p != '{')
			break;
		if (rf->n == cap)
			rf->o = realloc(rf->o, sizeof(*rf->o) * (size_t)(cap *= 2));
		struct rj_obj *o = &rf->o[rf->n++];
		memset(o, 0, sizeof(*o));
		p++;
		for (;;) {
			p = rj_ws(p);
			if (*p == ',') { p++; continue; }
			if (*p != '"') { if (*p == '}') p++; break; }
			char *k;
			p = rj_str(p, &k);
			p = rj_ws(p);
			if (*p == ':') p++;
			p = rj_ws(p);
			char *v = NULL;
			if (*p == '"')
				p = rj_str(p, &v);
			else {
				const char *s = p;
				p = rj_skip(p);
				v = strndup(s, (size_t)(p - s));
			}
			if (o->n < 48) {
				o->k[o->n] = k;
				o->v[o->n++] = v;
			} else {
				free(k);
				free(v);
			}
		}
	}
	free(b);
	return 0;
}

RJ_FN const char *rj_get(const struct rj_obj *o, const char *key)
{
	for (int i = 0; i < o->n; i++)
		if (!strcmp(o->k[i], key))
			return o->v[i];
	return NULL;
}

/* first object whose field key equals val (case-insensitive) */
RJ_FN const struct rj_obj *rj_find(const struct rj_file *rf, const char *key, const char *val)
{
	for (int i = 0; i < rf->n; i++) {
		const char *v = rj_get(&rf->o[i], key);
		if (v && !strcasecmp(v, val))
			return &rf->o[i];
	}
	return NULL;
}

#endif
