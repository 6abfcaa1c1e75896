// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* libFuzzer target: 'tmabpf diff --fail-on' budgets, then each parsed rule judged on a few
 * (base, new) pairs. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/diff_rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const double pairs[][2] = { { 0, 0 }, { 0, 5 }, { 100, 120 }, { 1e18, -1e18 }, { -3, 3 } };
	struct diff_rule *rules = NULL;
	char *spec = malloc(size + 1), err[512];
	int n = 0;

	if (!spec)
		return 0;
	memcpy(spec, data, size);
	spec[size] = 0;
	if (diff_rules_parse(spec, &rules, &n, err, sizeof(err)) == 0)
		for (int i = 0; i < n; i++)
			for (size_t k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++) {
				double d;

				if (diff_rule_delta(&rules[i], pairs[k][0], pairs[k][1], &d))
					diff_rule_broken(&rules[i], d);
				diff_kind_name((enum drow_kind)rules[i].scope);
			}
	free(rules);
	free(spec);
	return 0;
}
