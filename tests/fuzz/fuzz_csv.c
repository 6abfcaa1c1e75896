// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* libFuzzer target: perf stat -x, CSV parser, and TMA on whatever it parsed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "perf_csv.h"
#include "tma.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct perf_csv csv;
	static struct tma_result res;
	char err[512];

	if (perf_csv_parse((const char *)data, size, &csv, err, sizeof(err)) != 0)
		return 0;
	const char *names[PERF_CSV_MAX_EVENTS];
	double vals[PERF_CSV_MAX_EVENTS], pct[PERF_CSV_MAX_EVENTS];
	for (int i = 0; i < csv.n; i++) {
		names[i] = csv.ev[i].name;
		vals[i] = csv.ev[i].value;
		pct[i] = csv.ev[i].pct;
	}
	const struct tma_cpu *c = tma_cpu_by_name(size && (data[0] & 1) ? "sapphirerapids" : "skylakex");
	tma_compute_named(c, 3, csv.n, names, vals, pct, &res);
	char path[512];
	tma_bottleneck_path(&res, path, sizeof(path));
	return 0;
}
