// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* A recipe's event keys encoded for perf_event_open, and a TMA plan's events
 * appended to an event list; see key_encode.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "lib/warn.h"
#include "pmu/key_encode.h"
#include "pmu/pfm_enc.h"
#include "tma/tma_keys.h"
#include "tma/tma_recipes.h"

int tma_encode_key(const struct tma_cpu *c, const char *key, struct perf_event_attr *attr,
		   char *err, size_t errlen)
{
	const struct tma_event_enc *e = tma_event_enc(c, key);
	struct pfm_enc_out o = { 0 };

	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	if (e && e->pseudo) {
		err_set(err, errlen, "%s is a perf-metrics pseudo event (slots/topdown-*): not opened by tmabpf", key);
		return -EOPNOTSUPP;
	}
	if (e && !e->pfm) {
		o.type = PERF_TYPE_RAW;
		o.config = e->raw;
	} else if (e) {
		if (!c->pfm_pmu) {
			err_set(err, errlen, "no libpfm4 PMU for %s", c->name);
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
		tma_key_mods(key, base, sizeof(base), &um, &hu, &cm, &ed, &in);
		if (!c->pfm_pmu) {
			err_set(err, errlen, "recipe event %s has no encoding for %s", key, c->name);
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

int tma_plan_append(const struct tma_plan *p, struct event_list *out, char *err, size_t errlen)
{
	int first_new = out->n, maxgroup = -1;

	for (int i = 0; i < out->n; i++)
		if (out->ev[i].group > maxgroup)
			maxgroup = out->ev[i].group;
	for (int i = 0; i < p->nev; i++) {
		struct event_desc d = { .attr = p->ev[i].attr, .group = p->ev[i].group + maxgroup + 1 };
		snprintf(d.name, sizeof(d.name), "%s", p->ev[i].name);
		snprintf(d.pmu, sizeof(d.pmu), "cpu");
		snprintf(d.need, sizeof(d.need), "%s", p->ev[i].need);
		int r = events_add(out, &d, err, errlen);
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
	return 0;
}

int tma_flops_append(const struct tma_cpu *c, struct event_list *out, char *err, size_t errlen)
{
	char keys[32][TMA_KEY_LEN];
	int nk = tma_flops_events(c, keys, 32), first_new = out->n, group = -1;

	if (nk < 0) {
		snprintf(err, errlen, "out of memory");
		return nk;
	}
	for (int i = 0; i < out->n; i++)
		if (out->ev[i].group > group)
			group = out->ev[i].group;
	for (int k = 0; k < nk; k++) {
		struct event_desc d = { .group = ++group, .leader = true };
		int r;

		snprintf(d.name, sizeof(d.name), "%.*s", TMA_KEY_LEN - 1, keys[k]);
		snprintf(d.pmu, sizeof(d.pmu), "cpu");
		snprintf(d.need, sizeof(d.need), "--roofline measured FLOPs (%s)", c->perf->flops);
		if ((r = tma_encode_key(c, keys[k], &d.attr, err, errlen)) < 0 ||
		    (r = events_add(out, &d, err, errlen)) < 0) {
			out->n = first_new;
			return r;
		}
	}
	return out->n - first_new;
}
