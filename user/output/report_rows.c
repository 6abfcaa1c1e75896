// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* What every report row writes: its ids, its counters, and its TMA as JSON or as a bottleneck path.  See report_sections.h. */
#include "output/report_sections.h"
#include "output/tma_output.h"

void report_json_ids(struct json *j, unsigned int pid, long long tid)
{
	json_u64(j, "pid", pid);
	if (tid < 0)
		json_null(j, "tid");
	else
		json_u64(j, "tid", (uint64_t)tid);
}

void report_counters_json(const struct report *r, struct json *j, const char *key, const struct counter_val *c)
{
	json_obj_begin(j, key);
	for (int e = 0; e < r->evs->n; e++)
		json_u64(j, r->evs->ev[e].name, (uint64_t)(counter_scaled(&c[e]) + 0.5));
	json_obj_end(j);
}

void report_tma_json(const struct report *r, const struct thread_stats *s, struct json *j)
{
	struct tma_result res;

	if (report_tma(r, s, &res)) {
		json_obj_begin(j, "tma");
		json_obj_end(j);
		return;
	}
	tma_result_json(&res, j, "tma");
}

int report_tma_path(const struct report *r, const struct thread_stats *s, char *buf, size_t len)
{
	struct tma_result res;

	if (report_tma(r, s, &res))
		return -1;
	return tma_bottleneck_path(&res, buf, len) < 0 ? -1 : 0;
}
