// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The memory-samples section of the reports (--mem-samples): JSON "mem_samples", text tables. */
#include "lib/text_fit.h"
#include "lib/text_safe.h"
#include "output/report_sections.h"
#include "pmu/mem_event.h"

void report_memsamples_json(const struct report *r, struct json *j)
{
	const struct mem_result *m = r->mem;

	if (!m) {
		json_null(j, "mem_samples");
		return;
	}
	json_obj_begin(j, "mem_samples");
	json_str(j, "source", m->ev->source);
	json_str(j, "event", m->ev->name);
	json_u64(j, "sample_period", m->ev->attr.sample_period);
	json_u64(j, "samples", m->samples);
	json_u64(j, "samples_seen", m->seen);
	json_u64(j, "lost", m->lost);
	json_arr_begin(j, "by_function");
	for (size_t i = 0; i < m->nfuncs; i++) {
		json_obj_begin(j, NULL);
		json_u64(j, "pid", m->funcs[i].pid);
		json_str(j, "module", m->funcs[i].module);
		json_str(j, "symbol", m->funcs[i].symbol);
		json_u64(j, "count", m->funcs[i].count);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_arr_begin(j, "by_mapping");
	for (size_t i = 0; i < m->nbins; i++) {
		const struct mem_bin *b = &m->bins[i];

		json_obj_begin(j, NULL);
		json_u64(j, "pid", b->pid);
		json_str(j, "mapping", b->mapping);
		json_u64(j, "start", b->start);
		json_u64(j, "end", b->end);
		json_u64(j, "count", b->count);
		json_u64(j, "addr_min", b->addr_min);
		json_u64(j, "addr_max", b->addr_max);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

/* The tables' columns: at a short width MODULE (the mapping) and PID go first; the names are elided in the
 * middle down to 12 columns before. */
static const struct text_col func_cols[] = {
	{ .name = "PID", .prio = 2 }, { .name = "FUNCTION", .prio = 1, .left = true, .min = 12 },
	{ .name = "MODULE", .prio = 3, .left = true, .min = 12 }, { .name = "SAMPLES", .prio = 1 },
};
static const struct text_col bin_cols[] = {
	{ .name = "PID", .prio = 2 }, { .name = "DATA ADDRESSES IN MAPPING", .prio = 3, .left = true, .min = 12 },
	{ .name = "[START, END)", .prio = 1, .left = true }, { .name = "SAMPLES", .prio = 1 },
};

void report_memsamples_text(const struct report *r, FILE *f, int top, int width, struct text_hidden *hid)
{
	const struct mem_result *m = r->mem;
	char pid[16], sym[512], mod[512], count[24], range[48];
	struct text_table t;

	if (!m)
		return;
	text_wrapf(f, width, 2, "memory samples (--mem-samples: %s, period %llu: %llu samples of tracked threads):",
		   m->ev->name, (unsigned long long)m->ev->attr.sample_period, m->samples);
	text_table_init(&t, func_cols, 4);
	for (size_t i = 0; i < m->nfuncs && (int)i < top; i++) {
		snprintf(pid, sizeof(pid), "%u", m->funcs[i].pid);
		snprintf(count, sizeof(count), "%llu", m->funcs[i].count);
		if (text_table_add(&t, (const char *[]){ pid, text_safe(m->funcs[i].symbol, sym, sizeof(sym)),
							  text_safe(m->funcs[i].module, mod, sizeof(mod)), count }))
			break;
	}
	text_table_print(&t, f, width, hid);
	text_table_free(&t);
	text_table_init(&t, bin_cols, 4);
	for (size_t i = 0; i < m->nbins && (int)i < top; i++) {
		const struct mem_bin *b = &m->bins[i];

		snprintf(pid, sizeof(pid), "%u", b->pid);
		snprintf(range, sizeof(range), "%llx-%llx", (unsigned long long)b->start, (unsigned long long)b->end);
		snprintf(count, sizeof(count), "%llu", b->count);
		if (text_table_add(&t, (const char *[]){ pid, text_safe(b->mapping, mod, sizeof(mod)), range, count }))
			break;
	}
	text_table_print(&t, f, width, hid);
	text_table_free(&t);
}
