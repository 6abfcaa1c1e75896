// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* libFuzzer target: 'tmabpf diff' report reader (JSON reports from other machines), read as
 * both sides so that rows match, then every row's metrics looked up. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/diff_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct diff_rows rows = {};
	char err[1024];

	for (int side = 0; side < 2; side++)
		if (diff_report_parse(&rows, side, (const char *)data, size, "fuzz.json", err, sizeof(err)))
			goto out;
	for (size_t i = 0; i < rows.n; i++) {
		const struct drow *r = &rows.v[i];

		drow_leaf(r);
		for (int s = 0; s < 2; s++)
			for (unsigned int k = 0; k < r->side[s].n; k++) {
				double v;

				if (!drow_metric(r, !s, diff_metric_name(&rows, r->side[s].m[k].name), &v))
					abort();	/* both sides were read from the same text */
			}
	}
out:
	diff_rows_free(&rows);
	return 0;
}
