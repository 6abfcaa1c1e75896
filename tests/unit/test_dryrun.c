// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Dry-run plans, no hardware needed: for every CPU recipe, level, SMT and
 * watchdog setting, plan the events as --cpu NAME --tma=N would and print them
 * with dryrun_print(); check groups, leaders, the counter budget, per-counter
 * constraints (SPR counter 0), the exclude flags and that every event says
 * which node needs it.  The encodings themselves are checked against perf's
 * and libpfm4's event tables by tests/test_tma_perf.py.
 */
#include <inttypes.h>
#include <string.h>
#include <strings.h>
#include "check.h"
#include "output/dryrun.h"
#include "tma/tma.h"
#include "tma/tma_recipes.h"
#include "pmu/key_encode.h"

#define CHECK(cond, ...) check((cond), __VA_ARGS__)

int main(void)
{
	static struct tma_plan plan;
	static struct event_list el;
	char err[256];
	struct tma_env env;
	int printed = 0;

	for (int ci = 0; ci < tma_ncpus; ci++) {
		const struct tma_cpu *c = tma_cpus[ci];
		for (int combo = 0; combo < 8; combo++) {
			memset(&env, 0, sizeof(env));
			env.smt_on = combo & 1;
			env.core_wide = combo >> 1 & 1;
			env.nmi_watchdog = combo >> 2 & 1;
			for (int lvl = 1; lvl <= c->run_max_level; lvl++) {
				el.n = 0;
				int r = tma_plan(&plan, c, lvl, TMABPF_MAX_EVENTS, &env, tma_encode_key, err, sizeof(err));
				r = r ? r : tma_plan_append(&plan, &el, err, sizeof(err));
				if (r) {
					CHECK(0, "%s level %d plan: %s", c->name, lvl, err);
					continue;
				}
				char buf[32768];
				FILE *f = fmemopen(buf, sizeof(buf), "w");
				dryrun_print(c, lvl, plan.note, &el, f);
				fclose(f);
				int bad = 0, lines = 0;
				char first[400] = "";
				for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
					if (line[0] != '[')
						continue;
					lines++;
					bool ok = strstr(line, " type=4(raw) ") &&
						  strstr(line, "exclude_user=0 exclude_kernel=0 exclude_hv=0 exclude_guest=1") &&
						  !strstr(line, "need=-") && strstr(line, " need=");
					if (!ok && !bad++)
						snprintf(first, sizeof(first), "%s", line);
				}
				printed += lines;
				CHECK(bad == 0 && lines == el.n, "%s --tma=%d smt=%d core_wide=%d watchdog=%d: %d raw attrs, counting "
				      "user+kernel, each naming the nodes that need it%s%s", c->name, lvl, env.smt_on,
				      env.core_wide, env.nmi_watchdog, lines, first[0] ? "; " : "", first);
				/* groups: one leader each, within the budget, constraints honoured */
				int gp = env.smt_on ? c->gp_counters : c->gp_counters_smt_off;
				if (env.nmi_watchdog && c->vendor != TMA_INTEL)
					gp--;
				bool gok = true;
				for (int g = 0; g <= 64; g++) {
					int n = 0, leaders = 0, ctr0 = 0;
					for (int i = 0; i < el.n; i++) {
						if (el.ev[i].group != g)
							continue;
						n++;
						leaders += el.ev[i].leader;
						const struct tma_event_enc *e = tma_event_enc(c, el.ev[i].name);
						ctr0 += e && e->counters == 1;
					}
					if (n && (leaders != 1 || n > gp + c->fixed_counters || ctr0 > 1))
						gok = false;
				}
				CHECK(gok, "%s --tma=%d smt=%d watchdog=%d: groups have one leader, fit %d general + %d fixed counters, one counter-0-only event",
				      c->name, lvl, env.smt_on, env.nmi_watchdog, gp, c->fixed_counters);
			}
		}
	}
	CHECK(printed > 300, "%d planned attrs printed", printed);
	/* the level-3 plan fits TMABPF_MAX_EVENTS by leaving out other level-2 branches, and says so */
	memset(&env, 0, sizeof(env));
	el.n = 0;
	int r = tma_plan(&plan, tma_cpu_by_name("skylakex"), 3, TMABPF_MAX_EVENTS, &env, tma_encode_key, err, sizeof(err));
	CHECK(r == 0 && plan.nev <= TMABPF_MAX_EVENTS && strstr(plan.note, "leaves out tma_fetch_latency"),
	      "SKX --tma=3 fits %d counters: %s", TMABPF_MAX_EVENTS, plan.note);
	r = tma_plan(&plan, tma_cpu_by_name("amdzen4"), 3, TMABPF_MAX_EVENTS, &env, tma_encode_key, err, sizeof(err));
	CHECK(r != 0 && strstr(err, "levels 1..2"), "Zen 4 --tma=3: plain error: %s", err);
	for (int lvl = 1; lvl <= 2; lvl++)
		for (const char *const *n = (const char *const[]){ "sapphirerapids", "emeraldrapids", NULL }; *n; n++) {
			el.n = 0;
			r = tma_plan(&plan, tma_cpu_by_name(*n), lvl, TMABPF_MAX_EVENTS, &env, tma_encode_key, err, sizeof(err));
			r = r ? r : tma_plan_append(&plan, &el, err, sizeof(err));
			bool no_pseudo = true;
			for (int i = 0; i < el.n; i++)
				if (!strncasecmp(el.ev[i].name, "TOPDOWN-", 8) || !strcmp(el.ev[i].name, "TOPDOWN.SLOTS"))
					no_pseudo = false;
			CHECK(r == 0 && el.n > 0 && no_pseudo, "%s --tma=%d: the BPF plan (%d events) uses no slots/topdown-* "
			      "pseudo events", *n, lvl, el.n);
		}
	/* user events first, then the recipe's in new groups */
	el.n = 0;
	r = events_parse_list("page-faults,cpu/event=0xc0,umask=0x0/", tma_cpu_by_name("skylakex"), &el, err, sizeof(err));
	int n0 = el.n;
	r |= tma_plan(&plan, tma_cpu_by_name("skylakex"), 1, TMABPF_MAX_EVENTS - el.n, &env, tma_encode_key, err, sizeof(err));
	r |= tma_plan_append(&plan, &el, err, sizeof(err));
	char buf[8192];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	dryrun_print(tma_cpu_by_name("skylakex"), 1, plan.note, &el, f);
	fclose(f);
	CHECK(r == 0 && n0 == 2 && el.n > n0 && strstr(buf, "[1] cpu/event=0xc0,umask=0x0/ pmu=cpu type=4(raw) config=0xc0") &&
	      strstr(buf, "need=(-e)") && strstr(buf, "plan: skylakex TMA level 1"), "dry run with -e events and the recipe");
	bool later = true;
	for (int i = n0; i < el.n; i++)
		later &= el.ev[i].group > el.ev[0].group && el.ev[i].group > el.ev[1].group;
	CHECK(later, "the recipe's groups come after the -e events' groups");
	return check_exit();
}
