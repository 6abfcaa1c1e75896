// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* --dry-run --uprobe preview and the hot-probe guard.  See uprobe_preview.h. */
#include <stdio.h>
#include "collect/uprobe_preview.h"
#include "lib/text_safe.h"
#include "lib/warn.h"

double uprobe_call_cost_ns(const struct uprobe_func *f, const struct probe_calib *calib, double bpf_ns_per_hit)
{
	double trap = calib && f->insn.cls != UINSN_REFUSED ? calib->ns[f->insn.cls] : 0;

	return trap + 2 * bpf_ns_per_hit;
}

void uprobe_preview_print(const struct uprobe_set *s, const struct probe_calib *calib, const char *why, FILE *f)
{
	if (calib)
		fprintf(f, "uprobe cost per call on this host (entry + return probe, measured now, before the programs' "
			"own time): emulated entry %.2f us, single-stepped entry %.2f us\n", calib->ns[UINSN_EMULATED] / 1e3,
			calib->ns[UINSN_SSTEP] / 1e3);
	else
		fprintf(f, "uprobe cost per call: not measured (%s)\n", why);
	for (int lib = 0; lib < s->nr_libs; lib++) {
		int cnt[3] = { 0 }, n = 0, shown = 0;

		for (int i = 0; i < s->nr_funcs; i++)
			if (s->funcs[i].lib == lib) {
				cnt[s->funcs[i].insn.cls]++;
				n++;
			}
		fprintf(f, "uprobe %s: %d functions match (%d emulated, %d single-stepped, %d unprobeable)  [%s]\n",
			s->libs[lib].module, n, cnt[UINSN_EMULATED], cnt[UINSN_SSTEP], cnt[UINSN_REFUSED], s->libs[lib].note);
		/* the unprobeable ones first: they are what the user must know */
		for (int i = 0; i < 2 * s->nr_funcs && shown < UPROBE_PREVIEW_NAMES; i++) {
			const struct uprobe_func *u = &s->funcs[i % s->nr_funcs];
			char sym[512];
			const char *name;

			if (u->lib != lib || (i < s->nr_funcs) != (u->insn.cls == UINSN_REFUSED))
				continue;
			shown++;
			name = text_safe(u->symbol, sym, sizeof(sym));	/* a library's symbols are its author's */
			if (u->insn.cls == UINSN_REFUSED)
				fprintf(f, "  %-14s %9s  %s (%s: skipped)\n", uprobe_insn_class_name(u->insn.cls), "-", name,
					u->insn.why);
			else if (calib)
				fprintf(f, "  %-14s %6.2f us  %s (%s)\n", uprobe_insn_class_name(u->insn.cls),
					uprobe_call_cost_ns(u, calib, 0) / 1e3, name, u->insn.why);
			else
				fprintf(f, "  %-14s %9s  %s (%s)\n", uprobe_insn_class_name(u->insn.cls), "?", name,
					u->insn.why);
		}
		if (n > shown)
			fprintf(f, "  ... %d more\n", n - shown);
	}
}

void uprobe_guard_warn(const struct uprobe_func *f, double rate, double cost_ns, double target_cpus)
{
	warn_add("uprobe: %s: %.0f calls/s x %.1f us per probed call (%s entry) = %.0f %% of the target's CPU time: the "
		 "probe slows it and inflates the function's own time; --max-rate %.0f detaches a function past the "
		 "rate that costs %.0f %% (or probe a less frequent caller)", f->symbol, rate, cost_ns / 1e3,
		 uprobe_insn_class_name(f->insn.cls), 100.0 * rate * cost_ns / 1e9 / target_cpus,
		 UPROBE_GUARD_SHARE * target_cpus * 1e9 / cost_ns, 100.0 * UPROBE_GUARD_SHARE);
}
