// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* libFuzzer target: perf stat -x, CSV parser, and TMA on whatever it parsed
 * (the total and every row, perf's whole tree), printed as text and JSON. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/perf_csv.h"
#include "tma/tma.h"
#include "output/tma_output.h"
#include "tma/tma_recipes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct perf_csv csv;
	static struct tma_result res;
	static struct tma_plan plan;
	static FILE *null;
	struct tma_env env = { .smt_on = size > 1 && (data[1] & 1), .core_wide = 1, .prefer_perf = 1 };
	char err[512];

	if (!null)
		null = fopen("/dev/null", "w");
	if (perf_csv_parse((const char *)data, size, &csv, err, sizeof(err)) != 0)
		return 0;
	const struct tma_cpu *c = tma_cpu_by_name(size && (data[0] & 1) ? "sapphirerapids" : "skylakex");
	if (tma_plan_init(&plan, c, c->max_level, false, &env, err, sizeof(err)))
		abort();
	for (int row = -1; row < csv.nrow && row < 8; row++) {
		const char *names[PERF_CSV_MAX_EVENTS];
		double vals[PERF_CSV_MAX_EVENTS], pct[PERF_CSV_MAX_EVENTS];
		int n = 0;
		for (int i = 0; i < csv.n; i++) {
			if (row >= 0 && !(csv.row[row].flags[i] & PERF_CSV_SEEN))
				continue;
			names[n] = csv.ev[i].name;
			vals[n] = row < 0 ? csv.ev[i].value : csv.row[row].value[i];
			pct[n++] = row < 0 ? csv.ev[i].pct : csv.row[row].pct[i];
		}
		tma_compute_named(&plan, n, names, vals, pct, &res);
		char path[512];
		tma_bottleneck_path(&res, path, sizeof(path));
		tma_result_print(&res, null, 2);
		struct json j;
		json_init(&j, null, false);
		json_obj_begin(&j, NULL);
		tma_result_json(&res, &j, "tma");
		tma_result_json_why(&res, &j, "why_null");
		json_obj_end(&j);
	}
	return 0;
}
