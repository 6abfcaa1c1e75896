// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The functions section of the reports (--uprobe): sums per (function, pid/thread), JSON rows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/counters.h"
#include "model/func_sums.h"
#include "output/report_sections.h"

static void tma_json(const struct report *r, struct json *j, const struct func_sum *f)
{
	struct thread_stats t = {};

	memcpy(t.c, f->s.c, sizeof(t.c));
	t.oncpu_ns = f->s.oncpu_ns;
	report_tma_json(r, &t, j);
}

static void placement_json(struct json *j, const struct probe_place *p)
{
	char s[sizeof(p->why) + 16];

	snprintf(s, sizeof(s), "%s%s%s", p->moved ? "" : "symbol", !p->moved && p->why[0] ? ": " : "", p->why);
	json_str(j, "placement", s);
}

static void row_json(const struct report *r, struct json *j, const struct func_sum *f)
{
	const struct uprobe_func *uf = &r->uset->funcs[f->fn];

	json_obj_begin(j, NULL);
	json_str(j, "module", r->uset->libs[uf->lib].module);
	json_str(j, "symbol", uf->symbol);
	json_u64(j, "offset", uf->offset);
	json_u64(j, "probed_offset", uf->place.offset);
	placement_json(j, &uf->place);
	json_str(j, "entry_class", uprobe_insn_class_name(uf->insn.cls));
	report_json_ids(j, f->pid, f->tid);
	json_u64(j, "calls", f->s.calls);
	json_u64(j, "returns", f->s.returns);
	json_u64(j, "unmatched", f->s.unmatched);
	json_u64(j, "wall_ns", f->s.wall_ns);
	json_u64(j, "oncpu_ns", f->s.oncpu_ns);
	json_u64(j, "self_oncpu_ns", f->s.self_oncpu_ns);
	json_u64(j, "offcpu_blocked_ns", f->s.offcpu_blocked_ns);
	json_u64(j, "offcpu_runqueue_ns", f->s.offcpu_runqueue_ns);
	json_double(j, "calls_per_s", r->duration_ns ? f->s.calls * 1e9 / r->duration_ns : 0.0);
	json_bool(j, "detached", uf->detached);
	report_counters_json(r, j, "counters", f->s.c);
	report_counters_json(r, j, "self_counters", f->s.self);
	tma_json(r, j, f);
	json_obj_end(j);
}

void report_functions_json(const struct report *r, struct json *j)
{
	struct func_sum *agg, *thr;
	size_t na, nt;

	json_arr_begin(j, "functions");
	if (!r->uset) {
		json_arr_end(j);
		return;
	}
	na = func_sums(r->frows, r->nfrows, r->evs->n, false, &agg);
	nt = func_sums(r->frows, r->nfrows, r->evs->n, true, &thr);
	for (size_t i = 0; i < na; i++)
		row_json(r, j, &agg[i]);
	for (size_t i = 0; i < nt; i++)
		row_json(r, j, &thr[i]);
	json_arr_end(j);
	free(agg);
	free(thr);
	json_obj_begin(j, "uprobes");
	json_u64(j, "functions", (uint64_t)r->uset->nr_funcs);
	json_u64(j, "libraries", (uint64_t)r->uset->nr_libs);
	json_u64(j, "attach_ns", r->uprobe_attach_ns);
	json_u64(j, "bpf_run_ns", r->uprobe_run_ns);
	json_u64(j, "bpf_run_count", r->uprobe_run_cnt);
	json_double(j, "bpf_ns_per_hit", r->uprobe_run_cnt ? (double)r->uprobe_run_ns / r->uprobe_run_cnt : 0.0);
	/* skipped: the kernel refuses a probe on their first instruction */
	json_arr_begin(j, "unprobeable");
	for (int i = 0; i < r->uset->nr_funcs; i++) {
		const struct uprobe_func *uf = &r->uset->funcs[i];

		if (uf->insn.cls != UINSN_REFUSED)
			continue;
		json_obj_begin(j, NULL);
		json_str(j, "module", r->uset->libs[uf->lib].module);
		json_str(j, "symbol", uf->symbol);
		json_u64(j, "offset", uf->offset);
		json_str(j, "reason", uf->insn.why);
		json_obj_end(j);
	}
	json_arr_end(j);
	/* zero evidence (uprobe_evidence.c): libraries no target mapped, functions never called */
	json_arr_begin(j, "never_mapped");
	for (int i = 0; i < r->uset->nr_libs; i++)
		if (r->uset->libs[i].never_mapped)
			json_str(j, NULL, r->uset->libs[i].module);
	json_arr_end(j);
	json_arr_begin(j, "never_called");
	for (int i = 0; i < r->uset->nr_funcs; i++)
		if (r->uset->funcs[i].never_called)
			json_str(j, NULL, r->uset->funcs[i].symbol);
	json_arr_end(j);
	json_arr_begin(j, "mapped_before_attach");
	for (int i = 0; i < r->uset->nr_late; i++) {
		json_obj_begin(j, NULL);
		json_u64(j, "pid", (uint64_t)r->uset->late[i].pid);
		json_str(j, "module", r->uset->libs[r->uset->late[i].lib].module);
		json_double(j, "ms", r->uset->late[i].ms);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_arr_begin(j, "deferred");
	for (int i = 0; i < r->uset->nr_deferred; i++) {
		json_obj_begin(j, NULL);
		json_str(j, "lib", r->uset->deferred[i].lib);
		json_str(j, "glob", r->uset->deferred[i].glob);
		json_bool(j, "attached", r->uset->deferred[i].attached > 0);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}
