// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* libFuzzer target: /proc/PID/maps text (paths are the process' to choose: spaces, newlines'
 * escapes, " (deleted)"), then lookups and kinds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "sym/procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct procmaps m;
	char *text = malloc(size + 1), err[512];

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	if (procmaps_parse(text, &m, err, sizeof(err)) == 0) {
		for (size_t i = 0; i < m.nr; i++) {
			procmaps_find(&m, m.entries[i].start);
			procmaps_find(&m, m.entries[i].end - 1);
			procmaps_kind_str(&m.entries[i]);
		}
		procmaps_find(&m, 0);
		procmaps_find(&m, UINT64_MAX);
		procmaps_free(&m);
	}
	free(text);
	return 0;
}
