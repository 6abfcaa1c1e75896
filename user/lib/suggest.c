// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Nearest known name to a mistyped one.  See suggest.h. */
#include <stdlib.h>
#include <string.h>
#include "lib/suggest.h"

int suggest_distance(const char *a, const char *b, int limit)
{
	int la = strlen(a), lb = strlen(b), i, j;
	int prev[SUGGEST_MAX_LEN + 1], cur[SUGGEST_MAX_LEN + 1];

	if (la > SUGGEST_MAX_LEN || lb > SUGGEST_MAX_LEN || abs(la - lb) > limit)
		return limit + 1;
	for (j = 0; j <= lb; j++)
		prev[j] = j;
	for (i = 1; i <= la; i++) {
		int rowmin;

		cur[0] = rowmin = i;
		for (j = 1; j <= lb; j++) {
			int c = prev[j - 1] + (a[i - 1] != b[j - 1]);

			if (prev[j] + 1 < c)
				c = prev[j] + 1;
			if (cur[j - 1] + 1 < c)
				c = cur[j - 1] + 1;
			cur[j] = c;
			if (c < rowmin)
				rowmin = c;
		}
		if (rowmin > limit)
			return limit + 1;
		memcpy(prev, cur, (lb + 1) * sizeof(int));
	}
	return prev[lb];
}

const char *suggest_nearest(const char *word, const char *const *cands, size_t n)
{
	int limit = strlen(word) / 4 > 2 ? (int)strlen(word) / 4 : 2, best_d = limit + 1;
	const char *best = NULL;

	for (size_t i = 0; i < n; i++) {
		int d;

		if (!cands[i] || !strcmp(cands[i], word))
			continue;
		d = !strncmp(cands[i], word, strlen(word)) ? 0 : suggest_distance(word, cands[i], limit);
		if (d < best_d) {
			best_d = d;
			best = cands[i];
		}
	}
	return best;
}
