// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Counters that read 0 where they cannot have (see zero_counts.h). */
#include <stdio.h>
#include <string.h>
#include "model/zero_counts.h"

int zero_counts_tma(const struct event_list *evs, const struct counter_val *total, double seconds,
		    char *why, size_t len)
{
	char names[160] = "";
	bool counted = false;
	int zero = 0;
	size_t n = 0;

	why[0] = 0;
	for (int e = 0; e < evs->n; e++) {
		if (!evs->ev[e].need[0] || !total[e].running)
			continue;	/* not TMA's, or never scheduled (multiplexing says so) */
		if (total[e].value) {
			counted = true;
			continue;
		}
		zero++;
		if (n + 1 < sizeof(names))
			n += snprintf(names + n, sizeof(names) - n, "%s%s", n ? ", " : "", evs->ev[e].name);
	}
	if (!zero || !counted)
		return 0;
	snprintf(why, len, "%s read 0 over %.1f s: the TMA nodes that need %s are not meaningful on this host",
		 names, seconds, zero > 1 ? "them" : "it");
	return zero;
}
