// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Dry-run and encoding tests, no hardware needed: for every CPU recipe and
 * level, plan the events as --cpu NAME --tma=N would, print them with
 * dryrun_print(), and check every printed config against the reference
 * event JSON (EventCode/UMask/CounterMask/Invert/EdgeDetect/AnyThread) in
 * ../shared/pmu-reference; check groups, leaders, the counter budget and
 * per-counter constraints (SPR counter 0), and the exclude flags.
 */
#include <inttypes.h>
#include <strings.h>
#include "test_tma_refjson.h"
#include "dryrun.h"
#include "tma.h"
#include "tma_recipes.h"

static const char *const evfiles[][8] = {
	{ "skylake", "skylake/pipeline.json", "skylake/frontend.json", "skylake/memory.json", "skylake/cache.json" },
	{ "skylakex", "skylakex/pipeline.json", "skylakex/frontend.json", "skylakex/memory.json", "skylakex/cache.json" },
	{ "cascadelakex", "cascadelakex/pipeline.json", "cascadelakex/frontend.json", "cascadelakex/memory.json", "cascadelakex/cache.json" },
	{ "icelakex", "icelakex/pipeline.json", "icelakex/frontend.json", "icelakex/memory.json", "icelakex/cache.json" },
	{ "sapphirerapids", "sapphirerapids/pipeline.json", "sapphirerapids/frontend.json", "sapphirerapids/memory.json", "sapphirerapids/cache.json" },
	{ "amdzen4", "amdzen4/pipeline.json", "amdzen4/core.json", "amdzen4/branch.json", "amdzen4/other.json" },
	{ "amdzen5", "amdzen5/pipeline.json", "amdzen5/decode.json", "amdzen5/execution.json", "amdzen5/branch-prediction.json", "amdzen5/load-store.json" },
	{ "neoverse-v1", "arm64-common/common-and-microarch.json" },
	{ "neoverse-n2", "arm64-common/common-and-microarch.json" },
	{ "neoverse-v2", "arm64-common/common-and-microarch.json" },
};

static unsigned long long jnum(const struct rj_obj *o, const char *k)
{
	const char *v = rj_get(o, k);
	return v ? strtoull(v, NULL, 0) : 0;
}

/* expected config from the JSON event + the key's modifiers */
static int expected(const struct tma_cpu *c, struct rj_file *rf, int nrf, const char *key, uint64_t *cfg, char *why, size_t wl)
{
	const struct tma_event_enc *enc = NULL;
	for (int i = 0; i < c->nev; i++)
		if (!strcmp(c->ev[i].key, key))
			enc = &c->ev[i];
	char base[128];
	snprintf(base, sizeof(base), "%.*s", (int)strcspn(key, ":"), key);
	const char *jn = enc && enc->json ? enc->json : base;
	const struct rj_obj *o = NULL;
	for (int i = 0; i < nrf && !o; i++)
		o = rj_find(&rf[i], "EventName", jn);
	if (!o) {
		snprintf(why, wl, "no JSON event %s", jn);
		return -1;
	}
	unsigned long long ev = jnum(o, "EventCode"), um = jnum(o, "UMask"), cm = jnum(o, "CounterMask");
	unsigned long long inv = jnum(o, "Invert"), edge = jnum(o, "EdgeDetect"), any = jnum(o, "AnyThread");
	for (const char *m = strchr(key, ':'); m; m = strchr(m + 1, ':')) {
		unsigned long long v = strtoull(m + 2, NULL, 0);
		if (m[1] == 'c') cm = v;
		else if (m[1] == 'e') edge = v;
		else if (m[1] == 'i') inv = v;
		else if (m[1] == 'u') um = v;
	}
	if (c->vendor == TMA_ARM)
		*cfg = ev;
	else if (c->vendor == TMA_AMD)
		*cfg = (ev & 0xff) | ((ev >> 8) & 0xf) << 32 | um << 8 | edge << 18 | inv << 23 | cm << 24;
	else
		*cfg = (ev & 0xff) | um << 8 | edge << 18 | any << 21 | inv << 23 | cm << 24;
	snprintf(why, wl, "JSON %s EventCode=0x%llx UMask=0x%llx CMask=%llu Inv=%llu Edge=%llu", jn, ev, um, cm, inv, edge);
	return 0;
}

int main(void)
{
	char path[512], err[256];
	struct tma_env env;
	int checked = 0;

	tma_env_host(&env);
	for (size_t fi = 0; fi < sizeof(evfiles) / sizeof(evfiles[0]); fi++) {
		const struct tma_cpu *c = tma_cpu_by_name(evfiles[fi][0]);
		struct rj_file rf[8];
		int nrf = 0;
		CHECK(c != NULL, "recipe %s", evfiles[fi][0]);
		if (!c)
			continue;
		for (int i = 1; i < 8 && evfiles[fi][i]; i++) {
			snprintf(path, sizeof(path), "%s/%s", refdir(), evfiles[fi][i]);
			if (rj_load(path, &rf[nrf]) == 0)
				nrf++;
			else
				CHECK(0, "read %s", path);
		}
		for (int combo = 0; combo < 8; combo++) {
			env.smt_on = combo & 1;
			env.core_wide = combo >> 1 & 1;
			env.nmi_watchdog = combo >> 2 & 1;
			tma_set_env(&env);
			for (int lvl = 1; lvl <= c->max_level; lvl++) {
				static struct event_list el;
				el.n = 0;
				int r = tma_plan_events(c, lvl, &el, err, sizeof(err));
				if (r) {
					CHECK(0, "%s level %d plan: %s", c->name, lvl, err);
					continue;
				}
				char buf[32768];
				FILE *f = fmemopen(buf, sizeof(buf), "w");
				dryrun_print(c, lvl, &el, f);
				fclose(f);
				/* every printed line vs the JSON */
				int bad = 0, lines = 0;
				char first[400] = "";
				for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
					if (line[0] != '[')
						continue;
					char name[128];
					uint64_t cfg;
					unsigned type;
					char *sp = strchr(line, ' ');
					snprintf(name, sizeof(name), "%.*s", (int)strcspn(sp + 1, " "), sp + 1);
					char *pc = strstr(line, " config=0x"), *pt = strstr(line, " type=");
					cfg = strtoull(pc + 8, NULL, 16);
					type = (unsigned)strtoul(pt + 6, NULL, 10);
					uint64_t want;
					char why[200];
					lines++;
					bool ok = expected(c, rf, nrf, name, &want, why, sizeof(why)) == 0 && want == cfg && type == 4 &&
						  strstr(line, "exclude_user=0 exclude_kernel=0 exclude_hv=0 exclude_guest=1") &&
						  !strstr(line, "need=-");
					if (!ok) {
						bad++;
						if (!first[0])
							snprintf(first, sizeof(first), "%s: printed 0x%" PRIx64 ", %s", name, cfg, why);
					}
				}
				checked += lines;
				CHECK(bad == 0 && lines == el.n, "%s --tma=%d smt=%d core_wide=%d watchdog=%d: %d configs equal the JSON encoding%s%s",
				      c->name, lvl, env.smt_on, env.core_wide, env.nmi_watchdog, lines, first[0] ? "; " : "", first);
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
						for (int k = 0; k < c->nev; k++)
							if (!strcmp(c->ev[k].key, el.ev[i].name) && c->ev[k].counters == 1)
								ctr0++;
					}
					if (n && (leaders != 1 || n > gp + c->fixed_counters || ctr0 > 1))
						gok = false;
				}
				CHECK(gok, "%s --tma=%d smt=%d watchdog=%d: groups have one leader, fit %d general + %d fixed counters, one counter-0-only event",
				      c->name, lvl, env.smt_on, env.nmi_watchdog, gp, c->fixed_counters);
			}
		}
	}
	CHECK(checked > 300, "%d printed encodings checked against the reference JSON", checked);
	/* the level-3 plan fits TMABPF_MAX_EVENTS by leaving out other level-2 branches, and says so */
	{
		static struct event_list el;
		env.smt_on = 0;
		env.core_wide = 0;
		env.nmi_watchdog = 0;
		tma_set_env(&env);
		el.n = 0;
		int r = tma_plan_events(tma_cpu_by_name("skylakex"), 3, &el, err, sizeof(err));
		CHECK(r == 0 && el.n <= TMABPF_MAX_EVENTS && strstr(tma_plan_note(), "leaves out tma_fetch_latency"),
		      "SKX --tma=3 fits %d counters: %s", TMABPF_MAX_EVENTS, tma_plan_note());
		r = tma_plan_events(tma_cpu_by_name("amdzen4"), 3, &el, err, sizeof(err));
		CHECK(r != 0 && strstr(err, "levels 1..2"), "Zen 4 --tma=3: plain error: %s", err);
		el.n = 0;
		r = tma_plan_events(tma_cpu_by_name("sapphirerapids"), 1, &el, err, sizeof(err));
		bool no_pseudo = true;
		for (int i = 0; i < el.n; i++)
			if (!strncasecmp(el.ev[i].name, "TOPDOWN-", 8) || !strcmp(el.ev[i].name, "TOPDOWN.SLOTS"))
				no_pseudo = false;
		CHECK(r == 0 && no_pseudo, "SPR BPF plan uses no slots/topdown-* pseudo events");
		/* user events first, then the recipe's in new groups */
		el.n = 0;
		events_set_target_cpu(tma_cpu_by_name("skylakex"));
		r = events_parse_list("page-faults,cpu/event=0xc0,umask=0x0/", &el, err, sizeof(err));
		int n0 = el.n;
		r |= tma_plan_events(tma_cpu_by_name("skylakex"), 1, &el, err, sizeof(err));
		char buf[8192];
		FILE *f = fmemopen(buf, sizeof(buf), "w");
		dryrun_print(tma_cpu_by_name("skylakex"), 1, &el, f);
		fclose(f);
		CHECK(r == 0 && n0 == 2 && el.n > n0 && strstr(buf, "[1] cpu/event=0xc0,umask=0x0/ pmu=cpu type=4(raw) config=0xc0") &&
		      strstr(buf, "need=(-e)"), "dry run with -e events and the recipe");
	}
	return t_done();
}
