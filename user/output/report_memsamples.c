// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The memory-samples section of the reports (--mem-samples): JSON "mem_samples", text tables. */
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

void report_memsamples_text(const struct report *r, FILE *f, int top)
{
	const struct mem_result *m = r->mem;
	char sym[512], mod[512];

	if (!m)
		return;
	fprintf(f, "memory samples (--mem-samples: %s, period %llu: %llu samples of tracked threads):\n", m->ev->name,
		(unsigned long long)m->ev->attr.sample_period, m->samples);
	fprintf(f, "%7s %-40s %-24s %8s\n", "PID", "FUNCTION", "MODULE", "SAMPLES");
	for (size_t i = 0; i < m->nfuncs && (int)i < top; i++)
		fprintf(f, "%7u %-40.40s %-24.24s %8llu\n", m->funcs[i].pid, text_safe(m->funcs[i].symbol, sym, sizeof(sym)),
			text_safe(m->funcs[i].module, mod, sizeof(mod)),
			m->funcs[i].count);
	fprintf(f, "%7s %-40s %-33s %8s\n", "PID", "DATA ADDRESSES IN MAPPING", "[START, END)", "SAMPLES");
	for (size_t i = 0; i < m->nbins && (int)i < top; i++) {
		const struct mem_bin *b = &m->bins[i];

		fprintf(f, "%7u %-40.40s %16llx-%-16llx %8llu\n", b->pid, text_safe(b->mapping, sym, sizeof(sym)),
			(unsigned long long)b->start,
			(unsigned long long)b->end, b->count);
	}
}
