// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* libFuzzer target: perf map files (/tmp/perf-PID.map, written by the profiled process' user),
 * then lookups over what was read. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "sym/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap m = {};
	FILE *f = fmemopen((void *)data, size, "r");

	if (!size || !f) {
		if (f)
			fclose(f);
		return 0;
	}
	perfmap_parse(&m, f);
	fclose(f);
	for (size_t i = 0; i < m.nr; i++) {
		perfmap_lookup(&m, m.syms[i].start);
		perfmap_lookup(&m, m.syms[i].start + m.syms[i].size - 1);
		perfmap_lookup(&m, m.syms[i].start + m.syms[i].size);
	}
	perfmap_lookup(&m, 0);
	perfmap_lookup(&m, UINT64_MAX);
	perfmap_free(&m);
	return 0;
}
