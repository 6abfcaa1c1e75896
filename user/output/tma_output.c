// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* TMA results as text and JSON; see tma_output.h. */
#include <errno.h>
#include <math.h>
#include <string.h>
#include "output/tma_output.h"

void tma_result_json(const struct tma_result *r, struct json *j, const char *key)
{
	json_obj_begin(j, key);
	for (int i = 0; i < r->n; i++)
		json_double(j, r->node[i].name, r->node[i].value);
	json_obj_end(j);
}

void tma_result_json_why(const struct tma_result *r, struct json *j, const char *key)
{
	bool any = false;

	for (int i = 0; i < r->n; i++)
		any |= isnan(r->node[i].value);
	if (!any)
		return;
	json_obj_begin(j, key);
	for (int i = 0; i < r->n; i++)
		if (isnan(r->node[i].value))
			json_str(j, r->node[i].name, r->node[i].why[0] ? r->node[i].why : "NaN");
	json_obj_end(j);
}

int tma_bottleneck_path(const struct tma_result *r, char *buf, size_t len)
{
	int parent = -1;
	size_t n = 0;

	if (len)
		buf[0] = 0;
	for (;;) {
		int best = -1;
		for (int i = 0; i < r->n; i++) {
			if (r->node[i].parent != parent || isnan(r->node[i].value))
				continue;
			if (best < 0 || r->node[i].value > r->node[best].value)
				best = i;
		}
		if (best < 0)
			break;
		int w = snprintf(buf + n, len > n ? len - n : 0, "%s%s %.1f%%", n ? " \xe2\x80\xba " : "",
				 r->node[best].label, r->node[best].value);
		if (w < 0 || n + (size_t)w >= len)
			return -ENOSPC;
		n += (size_t)w;
		parent = best;
	}
	return n ? (int)n : -ENOENT;
}

void tma_result_print(const struct tma_result *r, FILE *f, int indent)
{
	bool any_scaled = false;

	/* children follow their parent in DFS order */
	int order[TMA_MAX_NODES], no = 0;
	int stack[TMA_MAX_NODES], sp = 0;
	for (int i = r->n - 1; i >= 0; i--)
		if (r->node[i].parent < 0)
			stack[sp++] = i;
	while (sp) {
		int i = stack[--sp];
		order[no++] = i;
		for (int k = r->n - 1; k >= 0; k--)
			if (r->node[k].parent == i && sp < TMA_MAX_NODES)
				stack[sp++] = k;
	}
	for (int oi = 0; oi < no; oi++) {
		const struct tma_node *nd = &r->node[order[oi]];
		int pad = indent + 2 * (nd->depth - 1);
		char val[32];
		if (isnan(nd->value))
			snprintf(val, sizeof(val), "%7s", "n/a");
		else
			snprintf(val, sizeof(val), "%6.1f%%", nd->value);
		fprintf(f, "%*s%-*s %s%s%s%s%s\n", pad, "", 28 - 2 * (nd->depth - 1), nd->label, val,
			nd->scaled ? (nd->ungrouped ? "  [multiplexed, ungrouped]" : "  [multiplexed]") : "",
			isnan(nd->value) && nd->why[0] ? "  (" : "", isnan(nd->value) ? nd->why : "",
			isnan(nd->value) && nd->why[0] ? ")" : "");
		any_scaled |= nd->scaled;
	}
	if (any_scaled)
		fprintf(f, "%*s[multiplexed]: counters ran part of the time and were scaled by enabled/running; "
			"[ungrouped]: the ratio mixes counters from different groups or with different scaling\n", indent, "");
	if (r->missing[0])
		fprintf(f, "%*sn/a: events not counted: %s\n", indent, "", r->missing);
}
