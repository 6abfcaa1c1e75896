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

/* A name elided in the middle to w columns and padded to them. */
static void put_name(FILE *f, const char *name, int w)
{
	char safe[512], fit[512];

	text_elide_middle(text_safe(name, safe, sizeof(safe)), w, fit, sizeof(fit));
	fprintf(f, "%s%*s", fit, w - text_columns(fit), "");
}

void report_memsamples_text(const struct report *r, FILE *f, int top, int width)
{
	const struct mem_result *m = r->mem;
	int fw = width - (7 + 24 + 8 + 3), dw = width - (7 + 33 + 8 + 3);

	if (!m)
		return;
	fw = fw > 40 ? 40 : fw < 12 ? 12 : fw;
	dw = dw > 40 ? 40 : dw < 12 ? 12 : dw;
	text_wrapf(f, width, 2, "memory samples (--mem-samples: %s, period %llu: %llu samples of tracked threads):",
		   m->ev->name, (unsigned long long)m->ev->attr.sample_period, m->samples);
	fprintf(f, "%7s %-*s %-24s %8s\n", "PID", fw, "FUNCTION", "MODULE", "SAMPLES");
	for (size_t i = 0; i < m->nfuncs && (int)i < top; i++) {
		fprintf(f, "%7u ", m->funcs[i].pid);
		put_name(f, m->funcs[i].symbol, fw);
		fputc(' ', f);
		put_name(f, m->funcs[i].module, 24);
		fprintf(f, " %8llu\n", m->funcs[i].count);
	}
	fprintf(f, "%7s %-*s %-33s %8s\n", "PID", dw, dw < 25 ? "DATA ADDRESSES" : "DATA ADDRESSES IN MAPPING",
		"[START, END)", "SAMPLES");
	for (size_t i = 0; i < m->nbins && (int)i < top; i++) {
		const struct mem_bin *b = &m->bins[i];

		fprintf(f, "%7u ", b->pid);
		put_name(f, b->mapping, dw);
		fprintf(f, " %16llx-%-16llx %8llu\n", (unsigned long long)b->start, (unsigned long long)b->end, b->count);
	}
}
