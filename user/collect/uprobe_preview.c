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

/* The listing's order: what the user must know first (unprobeable, then endbr64 kept at the symbol). */
static int preview_rank(const struct uprobe_func *u)
{
	return u->insn.cls == UINSN_REFUSED ? 0 : !u->place.moved && u->place.why[0] ? 1 : 2;
}

static void preview_func(const struct uprobe_func *u, const struct probe_calib *calib, FILE *f)
{
	char cost[16] = "?", place[128] = "", sym[512];

	if (u->insn.cls == UINSN_REFUSED) {
		fprintf(f, "  %-14s %9s  %s (%s: skipped)\n", uprobe_insn_class_name(u->insn.cls), "-",
			text_safe(u->symbol, sym, sizeof(sym)), u->insn.why);
		return;
	}
	if (calib)
		snprintf(cost, sizeof(cost), "%6.2f us", uprobe_call_cost_ns(u, calib, 0) / 1e3);
	if (u->place.moved)
		snprintf(place, sizeof(place), "; probed at +0x%lx, %s", u->place.offset - u->offset, u->place.why);
	else if (u->place.why[0])
		snprintf(place, sizeof(place), "; at the symbol: %s", u->place.why);
	fprintf(f, "  %-14s %9s  %s (%s%s)\n", uprobe_insn_class_name(u->insn.cls), cost,
		text_safe(u->symbol, sym, sizeof(sym)) /* a library's symbols are its author's */, u->insn.why, place);
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
		int cnt[3] = { 0 }, n = 0, shown = 0, moved = 0, kept = 0;

		for (int i = 0; i < s->nr_funcs; i++)
			if (s->funcs[i].lib == lib) {
				cnt[s->funcs[i].insn.cls]++;
				moved += s->funcs[i].place.moved;
				kept += preview_rank(&s->funcs[i]) == 1;
				n++;
			}
		fprintf(f, "uprobe %s: %d functions match (%d emulated, %d single-stepped, %d unprobeable)  [%s]\n",
			s->libs[lib].module, n, cnt[UINSN_EMULATED], cnt[UINSN_SSTEP], cnt[UINSN_REFUSED], s->libs[lib].note);
		if (s->probe_at == PROBE_AT_SYMBOL)
			fprintf(f, "  placement: every probe at the symbol (--probe-at=symbol)\n");
		else
			fprintf(f, "  placement: %d probed past endbr64 (emulated: one trap), %d endbr64 kept at the symbol\n",
				moved, kept);
		for (int rank = 0; rank < 3; rank++)
			for (int i = 0; i < s->nr_funcs && shown < UPROBE_PREVIEW_NAMES; i++) {
				const struct uprobe_func *u = &s->funcs[i];

				if (u->lib != lib || preview_rank(u) != rank)
					continue;
				shown++;
				preview_func(u, calib, f);
			}
		if (n > shown)
			fprintf(f, "  ... %d more\n", n - shown);
	}
}

void uprobe_guard_warn(const struct uprobe_func *f, double rate, double cost_ns, double target_cpus)
{
	if (f->itt) {	/* a span is not detached alone: the library emits fewer (docs/itt.md) */
		warn_add("itt: %s: %.0f spans/s x %.1f us per span = %.0f %% of the target's CPU time: the probes slow it "
			 "and inflate the spans' own time; fewer spans: DNNL_ITT_TASK_LEVEL=1 (oneDNN: the calling "
			 "thread's only), KMP_ITT_PREPARE_DELAY (OpenMP: short barrier waits left out)", f->symbol, rate,
			 cost_ns / 1e3, 100.0 * rate * cost_ns / 1e9 / target_cpus);
		return;
	}
	warn_add("uprobe: %s: %.0f calls/s x %.1f us per probed call (%s entry) = %.0f %% of the target's CPU time: the "
		 "probe slows it and inflates the function's own time; --max-rate %.0f detaches a function past the "
		 "rate that costs %.0f %% (or probe a less frequent caller)", f->symbol, rate, cost_ns / 1e3,
		 uprobe_insn_class_name(f->insn.cls), 100.0 * rate * cost_ns / 1e9 / target_cpus,
		 UPROBE_GUARD_SHARE * target_cpus * 1e9 / cost_ns, 100.0 * UPROBE_GUARD_SHARE);
}
