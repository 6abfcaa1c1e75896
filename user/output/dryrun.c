// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "output/dryrun.h"
#include "tma/tma_recipes.h"

int dryrun_print(const struct tma_cpu *c, int level, const char *plan_note, const struct event_list *evs, FILE *f)
{
	fprintf(f, "dry run: %d perf_event_attr%s for CPU %s%s%s, TMA level %d; nothing is opened\n",
		evs->n, evs->n == 1 ? "" : "s", c ? tma_cpu_name(c) : "(none)", c ? " " : "",
		c ? ((const struct tma_cpu *)c)->desc : "", level);
	if (level > 0 && plan_note && plan_note[0])
		fprintf(f, "plan: %s\n", plan_note);
	for (int i = 0; i < evs->n; i++) {
		const struct event_desc *d = &evs->ev[i];
		const struct perf_event_attr *a = &d->attr;
		fprintf(f, "[%d] %s pmu=%s type=%u(%s) config=0x%" PRIx64 " config1=0x%" PRIx64 " config2=0x%" PRIx64
			" group=%d leader=%s exclude_user=%u exclude_kernel=%u exclude_hv=%u exclude_guest=%u",
			i, d->name, d->pmu[0] ? d->pmu : "-", a->type, events_type_name(a->type), (uint64_t)a->config,
			(uint64_t)a->config1, (uint64_t)a->config2, d->group, d->leader ? "yes" : "no",
			a->exclude_user, a->exclude_kernel, a->exclude_hv, a->exclude_guest);
		if (a->exclude_host)
			fprintf(f, " exclude_host=1");
		if (a->precise_ip)
			fprintf(f, " precise_ip=%u", a->precise_ip);
		if (a->type == PERF_TYPE_RAW && c && c->vendor != TMA_ARM) {
			uint64_t x = a->config;
			unsigned evc = (unsigned)(x & 0xff);
			if (c->vendor == TMA_AMD)
				evc |= (unsigned)((x >> 32) & 0xf) << 8;
			fprintf(f, " event=0x%x,umask=0x%x,cmask=%u,inv=%u,edge=%u%s", evc, (unsigned)((x >> 8) & 0xff),
				(unsigned)((x >> 24) & 0xff), (unsigned)((x >> 23) & 1), (unsigned)((x >> 18) & 1),
				(x >> 21 & 1) && c->vendor == TMA_INTEL ? ",any=1" : "");
		} else if (a->type == PERF_TYPE_RAW && c) {
			fprintf(f, " event=0x%" PRIx64, (uint64_t)a->config);
		}
		fprintf(f, " need=%s\n", d->need[0] ? d->need : (d->from_user ? "(-e)" : "-"));
	}
	return 0;
}
