// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * TMA engine tests with counts alone (the formulas themselves are compared
 * with perf 6.12 by tests/test_tma_perf.py, the evaluator by test_tma_expr):
 *  - profiles with hand-computed expected values: memory-bound LLM decode,
 *    compute-bound GEMM, frontend-bound, mispredict-heavy, zero cycles,
 *    slightly negative nodes, SMT on/off, core-wide; bottleneck paths;
 *  - perf 6.12 rules end to end: an all-zero CSV gives tma_l1_bound = 0
 *    (max(NaN, 0)), null nodes say why; every level-3 node perf has (Heavy
 *    Operations' microcode sequencer and few-uops instructions included);
 *  - plan(recipe, level, budget, host facts) -> events and groups, then
 *    compute(plan, counts) on the BPF path, with left-out nodes and
 *    multiplexing marks; two plans side by side (no shared state);
 *  - event-name canonicalisation (CPU detection is pmu/'s: test_events).
 *  Links without pmu/ and libpfm4: plans are encoded by hash_encoder.h.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include "check.h"
#include "lib/json.h"
#include "tma/tma.h"
#include "output/tma_output.h"
#include "tma/tma_recipes.h"
#include "hash_encoder.h"
#include "skx_profile.h"

#define CHECK(cond, ...) check((cond), __VA_ARGS__)

static struct tma_env env;	/* the literals the tests set, per case */

/* ---------- 3. profiles ---------- */

/* analyze-style: perf's tree to level, from named counts */
static void run(const char *cpu, int level, const struct kv *kv, struct tma_result *r)
{
	static struct tma_plan p;
	const char *names[96];
	double vals[96], pct[96];
	char err[256];
	int n = 0;
	for (; kv[n].k; n++) {
		names[n] = kv[n].k;
		vals[n] = kv[n].v;
		pct[n] = 100;
	}
	if (tma_plan_init(&p, tma_cpu_by_name(cpu), level, false, &env, err, sizeof(err)))
		CHECK(0, "plan %s level %d: %s", cpu, level, err);
	tma_compute_named(&p, n, names, vals, pct, r);
}

/* the BPF path's node set (levels 1..run_max_level, the Memory_Bound drill-down at 3) */
static void run_bpf_nodes(const char *cpu, int level, const struct kv *kv, struct tma_result *r)
{
	static struct tma_plan p;
	const char *names[96];
	double vals[96];
	char err[256];
	int n = 0;
	for (; kv[n].k; n++) {
		names[n] = kv[n].k;
		vals[n] = kv[n].v;
	}
	if (tma_plan_init(&p, tma_cpu_by_name(cpu), level, true, &env, err, sizeof(err)))
		CHECK(0, "plan %s level %d: %s", cpu, level, err);
	tma_compute_named(&p, n, names, vals, NULL, r);
}

static bool near(double a, double b)
{
	return fabs(a - b) < 1e-6 * fmax(1, fabs(b));
}


static void test_skx_profiles(void)
{
	struct tma_env e;
	struct tma_result r;
	char path[256];

	memset(&e, 0, sizeof(e));
	e.smt_on = 0;
	e.core_wide = 1;
	env = e;

	run("skylakex", 4, skx_llm_decode, &r);	/* MEM_Bandwidth is perf's level 4 */
	double slots = 4 * CLK;
	double fe = 4e8 / slots, bad = (8e8 - 7e8 + 4 * 1e7) / slots, ret = 7e8 / slots;
	double be = 1 - fe - (8e8 + 4 * 1e7) / slots;
	double mem = (7e8 + 2e7) / (8e8 + (5e7 + ret * 4e7) + 2e7) * be;
	double fbf = 1 + 2e5 / 5e6;
	double l2 = 1e6 * fbf / (1e6 * fbf + 1e7) * ((6.5e8 - 5.6e8) / CLK);
	double dram = 5e8 / CLK + (6.5e8 - 5.6e8) / CLK - l2;
	CHECK(near(tma_result_get(&r, "tma_frontend_bound"), 100 * fe), "SKX LLM decode: Frontend_Bound %.3f%%", 100 * fe);
	CHECK(near(tma_result_get(&r, "tma_bad_speculation"), 100 * bad), "SKX LLM decode: Bad_Speculation %.3f%%", 100 * bad);
	CHECK(near(tma_result_get(&r, "tma_retiring"), 100 * ret), "SKX LLM decode: Retiring %.3f%%", 100 * ret);
	CHECK(near(tma_result_get(&r, "tma_backend_bound"), 100 * be), "SKX LLM decode: Backend_Bound %.3f%%", 100 * be);
	CHECK(near(tma_result_get(&r, "tma_memory_bound"), 100 * mem), "SKX LLM decode: Memory_Bound %.3f%%", 100 * mem);
	CHECK(near(tma_result_get(&r, "tma_core_bound"), 100 * (be - mem)), "SKX LLM decode: Core_Bound");
	CHECK(near(tma_result_get(&r, "tma_l2_bound"), 100 * l2), "SKX LLM decode: L2_Bound %.4f%%", 100 * l2);
	CHECK(near(tma_result_get(&r, "tma_dram_bound"), 100 * dram), "SKX LLM decode: DRAM_Bound %.3f%%", 100 * dram);
	CHECK(near(tma_result_get(&r, "tma_mem_bandwidth"), 60) && near(tma_result_get(&r, "tma_mem_latency"), 20),
	      "SKX LLM decode: MEM_Bandwidth 60%%, MEM_Latency 20%%");
	CHECK(near(tma_result_get(&r, "tma_l3_bound"), 100 * (5.6e8 - 5e8) / CLK), "SKX LLM decode: L3_Bound");
	CHECK(near(tma_result_get(&r, "tma_l1_bound"), 100 * (7e8 - 6.5e8) / CLK), "SKX LLM decode: L1_Bound");
	CHECK(near(tma_result_get(&r, "tma_store_bound"), 100 * 2e7 / CLK), "SKX LLM decode: Store_Bound");
	tma_bottleneck_path(&r, path, sizeof(path));
	CHECK(!strncmp(path, "Backend_Bound ", 14) && strstr(path, " \xe2\x80\xba Memory_Bound ") &&
	      strstr(path, "\xe2\x80\xba DRAM_Bound ") && strstr(path, "\xe2\x80\xba MEM_Bandwidth 60.0%"),
	      "SKX LLM decode bottleneck path: %s", path);
	run_bpf_nodes("skylakex", 3, skx_llm_decode, &r);
	CHECK(r.n == 4 + 8 + 7, "SKX --tma=3 on the BPF path: L1, L2 and the Memory_Bound drill-down, 19 nodes (got %d)", r.n);
	CHECK(near(tma_result_get(&r, "tma_mem_bandwidth"), 60) && tma_result_node(&r, "tma_mem_bandwidth")->tma == 3 &&
	      tma_result_node(&r, "tma_mem_bandwidth")->level == 4, "MEM_Bandwidth: perf's level 4, shown at --tma=3");
	run("skylakex", 1, skx_llm_decode, &r);
	CHECK(r.n == 4, "SKX --tma=1 gives the 4 level-1 nodes");
	run("skylakex", 6, skx_llm_decode, &r);
	int computable = 0;
	for (int i = 0; i < r.n; i++)
		computable += r.node[i].computable;
	CHECK(computable == 22 && tma_result_node(&r, "tma_ports_utilized_2") &&
	      isnan(tma_result_get(&r, "tma_ports_utilization")) && strstr(tma_result_node(&r, "tma_ports_utilization")->why,
									"missing: ARITH.DIVIDER_ACTIVE"),
	      "analyze shows every node the counts make computable (%d), with their ancestors (null: what they lack)",
	      computable);

	/* compute-bound GEMM: high retiring, core-bound backend */
	struct kv gemm[64];
	int n = 0;
	for (; skx_llm_decode[n].k; n++)
		gemm[n] = skx_llm_decode[n];
	gemm[n] = (struct kv){ NULL, 0 };
#define SET(K_, V_) for (int i_ = 0; gemm[i_].k; i_++) if (!strcmp(gemm[i_].k, K_)) gemm[i_].v = V_
	SET("IDQ_UOPS_NOT_DELIVERED.CORE", 1e8);
	SET("UOPS_ISSUED.ANY", 2.7e9); SET("UOPS_RETIRED.RETIRE_SLOTS", 2.6e9);
	SET("CYCLE_ACTIVITY.STALLS_MEM_ANY", 5e7); SET("CYCLE_ACTIVITY.STALLS_TOTAL", 2e8);
	SET("EXE_ACTIVITY.1_PORTS_UTIL", 3e8); SET("EXE_ACTIVITY.2_PORTS_UTIL", 3e8);
	SET("CYCLE_ACTIVITY.STALLS_L1D_MISS", 3e7); SET("CYCLE_ACTIVITY.STALLS_L2_MISS", 1e7); SET("CYCLE_ACTIVITY.STALLS_L3_MISS", 2e6);
	run("skylakex", 2, gemm, &r);
	tma_bottleneck_path(&r, path, sizeof(path));
	CHECK(!strncmp(path, "Retiring ", 9), "GEMM profile: Retiring leads: %s", path);
	CHECK(tma_result_get(&r, "tma_core_bound") > tma_result_get(&r, "tma_memory_bound"), "GEMM profile: Core_Bound > Memory_Bound");

	/* frontend-bound */
	SET("IDQ_UOPS_NOT_DELIVERED.CORE", 2.4e9); SET("IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE", 5e8);
	SET("UOPS_ISSUED.ANY", 9e8); SET("UOPS_RETIRED.RETIRE_SLOTS", 8.5e8);
	run("skylakex", 2, gemm, &r);
	tma_bottleneck_path(&r, path, sizeof(path));
	CHECK(!strncmp(path, "Frontend_Bound 60.0% \xe2\x80\xba Fetch_Latency 50.0%", 40), "frontend-bound profile: %s", path);

	/* mispredict-heavy: wasted issue */
	SET("IDQ_UOPS_NOT_DELIVERED.CORE", 2e8);
	SET("UOPS_ISSUED.ANY", 2.6e9); SET("UOPS_RETIRED.RETIRE_SLOTS", 1.2e9); SET("INT_MISC.RECOVERY_CYCLES", 1.5e8);
	SET("BR_MISP_RETIRED.ALL_BRANCHES", 4e7); SET("MACHINE_CLEARS.COUNT", 1e5);
	run("skylakex", 2, gemm, &r);
	tma_bottleneck_path(&r, path, sizeof(path));
	double badm = (2.6e9 - 1.2e9 + 4 * 1.5e8) / slots;
	CHECK(near(tma_result_get(&r, "tma_bad_speculation"), 100 * badm) && strstr(path, "Bad_Speculation") == path &&
	      strstr(path, "Branch_Mispredicts"), "mispredict-heavy profile: %s", path);

	/* slightly negative node: perf prints it as is (no clamping on SKX) */
	SET("BR_MISP_RETIRED.ALL_BRANCHES", 4e7); SET("MACHINE_CLEARS.COUNT", -1e4);
	run("skylakex", 2, gemm, &r);
	CHECK(tma_result_get(&r, "tma_machine_clears") < 0 && tma_result_get(&r, "tma_machine_clears") > -0.1,
	      "slightly negative Machine_Clears kept as perf computes it (%.4f%%)", tma_result_get(&r, "tma_machine_clears"));
	{
		/* ICX clamps with max(0, ...) where perf does */
		struct tma_env e2 = e;
		env = e2;
	}

	/* zero cycles: x/0 is NaN (null), but max(x/0, 0) is 0, as perf 6.12 prints them */
	SET("CPU_CLK_UNHALTED.THREAD", 0);
	run("skylakex", 3, gemm, &r);
	int nn = 0;
	for (int i = 0; i < r.n; i++)
		nn += isnan(r.node[i].value) && strstr(r.node[i].why, "division by zero (zero: CPU_CLK_UNHALTED.THREAD");
	CHECK(nn == r.n - 1 && tma_result_get(&r, "tma_l1_bound") == 0,
	      "zero cycles: %d of %d nodes null by division by zero; L1_Bound = max(NaN, 0) = 0", nn, r.n);
	CHECK(tma_bottleneck_path(&r, path, sizeof(path)) < 0, "zero cycles: no bottleneck path");
	{
		char buf[8192];
		FILE *f = fmemopen(buf, sizeof(buf), "w");
		struct json j;
		json_init(&j, f, false);
		json_obj_begin(&j, NULL);
		tma_result_json(&r, &j, "tma");
		tma_result_json_why(&r, &j, "why_null");
		json_obj_end(&j);
		fclose(f);
		CHECK(strstr(buf, "\"tma_frontend_bound\":null") && strstr(buf, "\"tma_l1_bound\":0") &&
		      strstr(buf, "\"why_null\":{\"tma_frontend_bound\":\"division by zero"),
		      "JSON gives null for x/0, with the reason: %.120s", buf);
	}
	SET("CPU_CLK_UNHALTED.THREAD", CLK);

	/* SMT on, core-wide: perf uses THREAD_ANY/2 and RECOVERY_CYCLES_ANY/2 */
	e.smt_on = 1;
	e.core_wide = 1;
	env = e;
	struct kv smt[64];
	n = 0;
	for (; skx_llm_decode[n].k; n++)
		smt[n] = skx_llm_decode[n];
	smt[n++] = (struct kv){ "CPU_CLK_UNHALTED.THREAD_ANY", 1.6e9 };
	smt[n++] = (struct kv){ "INT_MISC.RECOVERY_CYCLES_ANY", 3e7 };
	smt[n] = (struct kv){ NULL, 0 };
	run("skylakex", 1, smt, &r);
	double sslots = 4 * (1.6e9 / 2);
	CHECK(near(tma_result_get(&r, "tma_frontend_bound"), 100 * 4e8 / sslots) &&
	      near(tma_result_get(&r, "tma_bad_speculation"), 100 * (8e8 - 7e8 + 4 * (3e7 / 2)) / sslots),
	      "SMT on + core-wide: slots from THREAD_ANY/2, recovery from RECOVERY_CYCLES_ANY/2");
	/* SMT on, per-thread (core_wide 0): THREAD/2*(1+ONE_THREAD_ACTIVE/REF_XCLK) */
	e.core_wide = 0;
	env = e;
	for (int i = 0; smt[i].k; i++)
		if (!strcmp(smt[i].k, "CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE"))
			smt[i].v = 1e7;
	run("skylakex", 1, smt, &r);
	double cc = CLK / 2 * (1 + 1e7 / 2.5e7);
	CHECK(near(tma_result_get(&r, "tma_retiring"), 100 * 7e8 / (4 * cc)), "SMT on, not core-wide: core clocks from ONE_THREAD_ACTIVE/REF_XCLK");
	e.smt_on = 0;
	e.core_wide = 1;
	env = e;
}

static void test_spr(void)
{
	struct tma_result r;
	char path[256];
	/* perf's own topdown events, as perf stat -M TopdownL2 prints them */
	static const struct kv td[] = {
		{ "slots", 6e9 }, { "topdown-retiring", 1.2e9 }, { "topdown-bad-spec", 3e8 }, { "topdown-fe-bound", 6e8 },
		{ "topdown-be-bound", 3.9e9 }, { "topdown-heavy-ops", 2e8 }, { "topdown-br-mispredict", 2.4e8 },
		{ "topdown-fetch-lat", 4e8 }, { "topdown-mem-bound", 3.3e9 }, { "INT_MISC.UOP_DROPPING", 6e7 },
		{ "CPU_CLK_UNHALTED.THREAD", CLK }, { NULL, 0 },
	};
	run("sapphirerapids", 2, td, &r);
	double sum = 6e8 + 3e8 + 1.2e9 + 3.9e9;
	CHECK(!strcmp(r.formulation, "perf"), "SPR analyze with topdown-* events uses perf's formulation");
	CHECK(near(tma_result_get(&r, "tma_frontend_bound"), 100 * (6e8 / sum - 6e7 / 6e9)), "SPR perf: Frontend_Bound");
	CHECK(near(tma_result_get(&r, "tma_backend_bound"), 100 * 3.9e9 / sum), "SPR perf: Backend_Bound");
	CHECK(near(tma_result_get(&r, "tma_memory_bound"), 100 * 3.3e9 / sum), "SPR perf: Memory_Bound");
	double fe = 6e8 / sum - 6e7 / 6e9, be = 3.9e9 / sum, ret = 1.2e9 / sum;
	CHECK(near(tma_result_get(&r, "tma_bad_speculation"), 100 * fmax(1 - (fe + be + ret), 0)), "SPR perf: Bad_Speculation = max(1 - others, 0)");
	double bad = fmax(1 - (fe + be + ret), 0), br = 2.4e8 / sum;
	CHECK(near(tma_result_get(&r, "tma_machine_clears"), 100 * fmax(0, bad - br)), "SPR perf: Machine_Clears clamps at 0 like perf");
	tma_bottleneck_path(&r, path, sizeof(path));
	CHECK(!strncmp(path, "Backend_Bound 65.0% \xe2\x80\xba Memory_Bound 55.0%", 40), "SPR perf path: %s", path);

	/* general-counter formulation (BPF path) */
	static const struct kv gc[] = {
		{ "TOPDOWN.SLOTS_P", 6e9 }, { "TOPDOWN.BACKEND_BOUND_SLOTS", 3.9e9 }, { "TOPDOWN.MEMORY_BOUND_SLOTS", 3.3e9 },
		{ "IDQ_BUBBLES.CORE", 6e8 }, { "INT_MISC.UOP_DROPPING", 6e7 }, { "UOPS_RETIRED.SLOTS", 1.2e9 },
		{ "UOPS_RETIRED.HEAVY", 2e8 }, { "TOPDOWN.BR_MISPREDICT_SLOTS", 2.4e8 },
		{ "IDQ_BUBBLES.CYCLES_0_UOPS_DELIV.CORE", 6e7 }, { "CPU_CLK_UNHALTED.THREAD", CLK },
		{ "MEMORY_ACTIVITY.STALLS_L1D_MISS", 6e8 }, { "MEMORY_ACTIVITY.STALLS_L2_MISS", 5.5e8 },
		{ "MEMORY_ACTIVITY.STALLS_L3_MISS", 5e8 }, { "EXE_ACTIVITY.BOUND_ON_LOADS", 6.5e8 },
		{ "EXE_ACTIVITY.BOUND_ON_STORES", 1e7 }, { "OFFCORE_REQUESTS_OUTSTANDING.ALL_DATA_RD:c4", 7e8 },
		{ "OFFCORE_REQUESTS_OUTSTANDING.CYCLES_WITH_DATA_RD", 9e8 }, { NULL, 0 },
	};
	run("sapphirerapids", 4, gc, &r);
	CHECK(!strcmp(r.formulation, "gc"), "SPR with general counters uses the gc formulation");
	CHECK(near(tma_result_get(&r, "tma_frontend_bound"), 100 * (6e8 - 6e7) / 6e9) &&
	      near(tma_result_get(&r, "tma_backend_bound"), 65) && near(tma_result_get(&r, "tma_retiring"), 20) &&
	      near(tma_result_get(&r, "tma_memory_bound"), 55) && near(tma_result_get(&r, "tma_heavy_operations"), 100 * 2e8 / 6e9),
	      "SPR gc: L1/L2 from TOPDOWN.*_SLOTS over TOPDOWN.SLOTS_P");
	CHECK(near(tma_result_get(&r, "tma_dram_bound"), 50) && near(tma_result_get(&r, "tma_mem_bandwidth"), 70),
	      "SPR gc: DRAM_Bound 50%%, MEM_Bandwidth 70%%");
	tma_bottleneck_path(&r, path, sizeof(path));
	CHECK(strstr(path, "DRAM_Bound 50.0% \xe2\x80\xba MEM_Bandwidth 70.0%") != NULL, "SPR gc path: %s", path);
}

static void test_amd_arm(void)
{
	struct tma_result r;
	char path[256];
	static const struct kv z4[] = {
		{ "ls_not_halted_cyc", 1e9 }, { "de_no_dispatch_per_slot.no_ops_from_frontend", 6e8 },
		{ "cpu/de_no_dispatch_per_slot.no_ops_from_frontend,cmask=0x6/", 5e7 },
		{ "de_src_op_disp.all", 2.2e9 }, { "ex_ret_ops", 2e9 }, { "de_no_dispatch_per_slot.backend_stalls", 3e9 },
		{ "de_no_dispatch_per_slot.smt_contention", 2e8 }, { "ex_ret_brn_misp", 1e6 }, { "resyncs_or_nc_redirects", 1e5 },
		{ "ex_no_retire.load_not_complete", 4e8 }, { "ex_no_retire.not_complete", 5e8 }, { "ex_ret_ucode_ops", 1e7 },
		{ NULL, 0 },
	};
	run("amdzen4", 2, z4, &r);
	CHECK(near(tma_result_get(&r, "backend_bound"), 50) && near(tma_result_get(&r, "backend_bound_memory"), 40) &&
	      near(tma_result_get(&r, "smt_contention"), 100 * 2e8 / 6e9), "Zen 4: backend_bound 50%%, memory 40%%, smt_contention");
	tma_bottleneck_path(&r, path, sizeof(path));
	CHECK(!strcmp(path, "Backend_Bound 50.0% \xe2\x80\xba Memory 40.0%"), "Zen 4 path: %s", path);
	static const struct kv zero[] = { { "ls_not_halted_cyc", 0 }, { "ex_ret_ops", 0 }, { NULL, 0 } };
	run("amdzen4", 1, zero, &r);
	CHECK(tma_result_get(&r, "retiring") == 0, "Zen 4 zero cycles: d_ratio gives 0, not null (perf's d_ratio)");

	static const struct kv v1[] = {
		{ "CPU_CYCLES", 1e9 }, { "STALL_SLOT_FRONTEND", 8e8 }, { "STALL_SLOT_BACKEND", 4e9 }, { "STALL_SLOT", 4.8e9 },
		{ "BR_MIS_PRED", 1e6 }, { "OP_RETIRED", 2.9e9 }, { "OP_SPEC", 3.1e9 }, { NULL, 0 },
	};
	run("neoverse-v1", 1, v1, &r);
	CHECK(near(tma_result_get(&r, "backend_bound"), 50) && near(tma_result_get(&r, "frontend_bound"), 100 * (8e8 / 8e9 - 4e6 / 1e9)),
	      "Neoverse V1: backend_bound 50%%, frontend_bound");
	run("neoverse-n2", 1, v1, &r);
	CHECK(near(tma_result_get(&r, "backend_bound"), 100 * (4e9 / 5e9 - 3e6 / 1e9)), "Neoverse N2: #slots = 5");
}

/* the plan's events as counts, values from kv (-1: none), percent running 100 in group 0, else 50 */
static void fill(const struct tma_plan *p, const struct kv *kv, struct tma_count *c)
{
	for (int i = 0; i < p->nev; i++) {
		c[i] = (struct tma_count){ .name = p->ev[i].name, .attr = &p->ev[i].attr, .group = p->ev[i].group,
					   .value = -1, .pct = p->ev[i].group == 0 ? 100 : 50 };
		for (int k = 0; kv[k].k; k++) {
			char a[TMA_KEY_LEN], b[TMA_KEY_LEN];
			tma_event_key(kv[k].k, a, sizeof(a));
			tma_event_key(p->ev[i].name, b, sizeof(b));
			if (!strcmp(a, b))
				c[i].value = kv[k].v;
		}
	}
}

/* the BPF path: plan(recipe, level, budget, host facts), then compute(plan, counts) */
static void test_plan_compute(void)
{
	static struct tma_plan skx, icx;
	static struct tma_result r, r2, alone;
	struct tma_count c[TMABPF_MAX_EVENTS], c2[TMABPF_MAX_EVENTS];
	char err[256], path[256];
	struct tma_env e = { .smt_on = 0, .core_wide = 0, .nmi_watchdog = 0 };

	int rc = tma_plan(&skx, tma_cpu_by_name("skylakex"), 3, TMABPF_MAX_EVENTS, &e, hash_encoder, err, sizeof(err));
	CHECK(rc == 0 && skx.nev > 0 && strstr(skx.note, "leaves out tma_fetch_latency"),
	      "plan skylakex --tma=3: %d events; %s", skx.nev, rc ? err : skx.note);
	fill(&skx, skx_llm_decode, c);
	bool allset = true;
	for (int i = 0; i < skx.nev; i++)
		allset &= c[i].value >= 0;
	CHECK(allset, "every planned event has a profile value");
	tma_compute(&skx, skx.nev, c, &r);
	CHECK(!tma_result_node(&r, "tma_fetch_latency") && r.n == 4 + 2 + 7,
	      "nodes the level-3 plan left out are not reported (%d nodes)", r.n);
	tma_bottleneck_path(&r, path, sizeof(path));
	CHECK(strstr(path, "MEM_Bandwidth 60.0%") != NULL, "BPF-path bottleneck path: %s", path);
	const struct tma_node *dram = tma_result_node(&r, "tma_dram_bound");
	CHECK(dram && dram->scaled && dram->ungrouped && dram->min_running == 50,
	      "DRAM_Bound from multiplexed counters of two groups is marked scaled+ungrouped");
	alone = r;

	/* ICX general-counter L1, planned and computed between two SKX computes: no shared state */
	rc = tma_plan(&icx, tma_cpu_by_name("icelakex"), 1, TMABPF_MAX_EVENTS, &e, hash_encoder, err, sizeof(err));
	static const struct kv icxv[] = {
		{ "TOPDOWN.SLOTS_P", 5e9 }, { "IDQ_UOPS_NOT_DELIVERED.CORE", 1e9 }, { "INT_MISC.UOP_DROPPING", 5e7 },
		{ "TOPDOWN.BACKEND_BOUND_SLOTS", 2e9 }, { "INT_MISC.CLEARS_COUNT", 1e7 }, { "UOPS_RETIRED.SLOTS", 1.5e9 },
		{ NULL, 0 },
	};
	fill(&icx, icxv, c2);
	for (int i = 0; i < icx.nev; i++)
		c2[i].pct = 100;
	tma_compute(&icx, icx.nev, c2, &r2);
	tma_compute(&skx, skx.nev, c, &r);
	double fe = (1e9 - 5e7) / 5e9, be = 2e9 / 5e9 + 5 * 1e7 / 5e9, ret = 1.5e9 / 5e9;
	CHECK(rc == 0 && !strcmp(r2.formulation, "gc") && near(tma_result_get(&r2, "tma_frontend_bound"), 100 * fe) &&
	      near(tma_result_get(&r2, "tma_backend_bound"), 100 * be) &&
	      near(tma_result_get(&r2, "tma_bad_speculation"), 100 * fmax(1 - fe - be - ret, 0)) && !r2.node[0].scaled,
	      "ICX general-counter L1 from the planned events (%d events)", icx.nev);
	bool same = r.n == alone.n;
	for (int i = 0; same && i < r.n; i++)
		same = !strcmp(r.node[i].name, alone.node[i].name) &&
		       !memcmp(&r.node[i].value, &alone.node[i].value, sizeof(double));
	CHECK(same, "two plans side by side: the SKX tree is the same before and after an ICX compute");

	/* a count given under another name (-e rXXXX) matches its key by the encoding the plan resolved */
	static struct tma_result raw;
	char rname[32];
	snprintf(rname, sizeof(rname), "r%llx", (unsigned long long)c2[0].attr->config);
	c2[0].name = rname;
	tma_compute(&icx, icx.nev, c2, &raw);
	CHECK(icx.nalias >= icx.nev && near(tma_result_get(&raw, "tma_frontend_bound"), 100 * fe) &&
	      near(tma_result_get(&raw, "tma_backend_bound"), 100 * be) && !raw.missing[0],
	      "an event renamed to its raw encoding still counts for its key (%d aliases)", icx.nalias);
	c2[0].attr = NULL;
	tma_compute(&icx, icx.nev, c2, &raw);
	CHECK(raw.missing[0], "without its encoding the renamed event is missing: %s", raw.missing);

	/* the budget: 2 user events leave 22 counters; the plan says what it left out */
	static struct tma_plan p;
	rc = tma_plan(&p, tma_cpu_by_name("skylakex"), 2, 5, &e, hash_encoder, err, sizeof(err));
	CHECK(rc == -E2BIG && strstr(err, "needs") && strstr(err, "try --tma=1"), "a level over the budget: %s", err);
	rc = tma_plan(&p, tma_cpu_by_name("amdzen4"), 3, TMABPF_MAX_EVENTS, &e, hash_encoder, err, sizeof(err));
	CHECK(rc != 0 && strstr(err, "levels 1..2"), "Zen 4 --tma=3 on the BPF path: plain error: %s", err);
	e.nmi_watchdog = 1;
	rc = tma_plan(&p, tma_cpu_by_name("amdzen4"), 1, TMABPF_MAX_EVENTS, &e, hash_encoder, err, sizeof(err));
	CHECK(rc == 0 && strstr(p.note, "5 general counters (NMI watchdog holds one)"),
	      "host facts are arguments: the watchdog takes a general counter on AMD: %s", p.note);
}

static void test_keys(void)
{
	char k[TMA_KEY_LEN];
	tma_event_key("cpu/L1D_PEND_MISS.FB_FULL,cmask=1/", k, sizeof(k));
	CHECK(!strcmp(k, "L1D_PEND_MISS.FB_FULL:c1"), "key of cpu/EV,cmask=1/: %s", k);
	tma_event_key("cpu@ICACHE_16B.IFDATA_STALL,cmask=1,edge@", k, sizeof(k));
	CHECK(!strcmp(k, "ICACHE_16B.IFDATA_STALL:c1:e1"), "key of cpu@..,edge@: %s", k);
	tma_event_key("cpu_core/TOPDOWN.SLOTS/", k, sizeof(k));
	CHECK(!strcmp(k, "TOPDOWN.SLOTS"), "hybrid pmu prefix stripped");
	tma_event_key("slots", k, sizeof(k));
	CHECK(!strcmp(k, "TOPDOWN.SLOTS"), "slots alias");
	tma_event_key("TOPDOWN.SLOTS:perf_metrics", k, sizeof(k));
	CHECK(!strcmp(k, "TOPDOWN.SLOTS"), "perf modifier dropped");
	tma_event_key("exe_activity.2_ports_util:u0xc", k, sizeof(k));
	CHECK(!strcmp(k, "EXE_ACTIVITY.2_PORTS_UTIL:u0xc"), "lower case + umask override: %s", k);
	CHECK(tma_event_key("cpu/event=0x3c,umask=0x0/", k, sizeof(k)) != 0, "raw term spec is not a name");
	tma_event_key("inst_retired.any [cpu]", k, sizeof(k));
	CHECK(!strcmp(k, "INST_RETIRED.ANY"), "perf stat -A's 'NAME [pmu]' suffix dropped: %s", k);
	tma_event_perf_name("L1D_PEND_MISS.FB_FULL:c1", k, sizeof(k));
	CHECK(!strcmp(k, "cpu/l1d_pend_miss.fb_full,cmask=1/"), "key back to perf's -e spelling: %s", k);
	tma_event_perf_name("EXE_ACTIVITY.2_PORTS_UTIL:u0xc", k, sizeof(k));
	CHECK(!strcmp(k, "cpu/exe_activity.2_ports_util,umask=0xc/"), "umask override in perf's spelling: %s", k);
}

int main(void)
{
	test_keys();
	test_skx_profiles();
	test_spr();
	test_amd_arm();
	test_plan_compute();
	return check_exit();
}
