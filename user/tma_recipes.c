// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * TMA recipes, written for tmabpf from the reference facts in
 * ../shared/pmu-reference (Linux perf pmu-events metric JSON v6.12 and Intel
 * perfmon TMA metrics; see docs/tma.md).  Each formula keeps perf's
 * arithmetic; events are spelled NAME[:uHEX][:cN][:e1][:i1].
 *
 * Two formulations per Ice Lake-X / Sapphire Rapids:
 *   "perf": perf's own formulas using the slots + topdown-* perf-metrics
 *           pseudo events (what `perf stat -M` prints; used by analyze);
 *   "gc":   the same tree from general-counter events only (TOPDOWN.SLOTS_P,
 *           TOPDOWN.*_SLOTS, IDQ_BUBBLES.CORE, UOPS_RETIRED.SLOTS, ...) for the
 *           BPF per-thread path, where bpf_perf_event_read_value() reads plain
 *           counters; metrics not redefined fall back to "perf".
 */
#include <stddef.h>
#include "tma_recipes.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---------------- Intel Skylake family (SKL, SKX, CLX): perf's TMA 4.8 tables ---------------- */
#define SKL_COMMON \
	{ "tma_info_thread_clks", NULL, NULL, 0, 1, "CPU_CLK_UNHALTED.THREAD" }, \
	{ "tma_info_core_core_clks", NULL, NULL, 0, 1, \
	  "(CPU_CLK_UNHALTED.THREAD / 2 * (1 + CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE / CPU_CLK_UNHALTED.REF_XCLK) " \
	  "if #core_wide < 1 else (CPU_CLK_UNHALTED.THREAD_ANY / 2 if #SMT_on else tma_info_thread_clks))" }, \
	{ "tma_info_thread_slots", NULL, NULL, 0, 1, "4 * tma_info_core_core_clks" }, \
	{ "tma_frontend_bound", "Frontend_Bound", NULL, 1, 100, "IDQ_UOPS_NOT_DELIVERED.CORE / tma_info_thread_slots" }, \
	{ "tma_fetch_latency", "Fetch_Latency", "tma_frontend_bound", 2, 100, \
	  "4 * IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE / tma_info_thread_slots" }, \
	{ "tma_fetch_bandwidth", "Fetch_Bandwidth", "tma_frontend_bound", 2, 100, \
	  "tma_frontend_bound - tma_fetch_latency" }, \
	{ "tma_bad_speculation", "Bad_Speculation", NULL, 1, 100, \
	  "(UOPS_ISSUED.ANY - UOPS_RETIRED.RETIRE_SLOTS + 4 * (INT_MISC.RECOVERY_CYCLES_ANY / 2 if #SMT_on " \
	  "else INT_MISC.RECOVERY_CYCLES)) / tma_info_thread_slots" }, \
	{ "tma_branch_mispredicts", "Branch_Mispredicts", "tma_bad_speculation", 2, 100, \
	  "BR_MISP_RETIRED.ALL_BRANCHES / (BR_MISP_RETIRED.ALL_BRANCHES + MACHINE_CLEARS.COUNT) * tma_bad_speculation" }, \
	{ "tma_machine_clears", "Machine_Clears", "tma_bad_speculation", 2, 100, \
	  "tma_bad_speculation - tma_branch_mispredicts" }, \
	{ "tma_backend_bound", "Backend_Bound", NULL, 1, 100, \
	  "1 - tma_frontend_bound - (UOPS_ISSUED.ANY + 4 * (INT_MISC.RECOVERY_CYCLES_ANY / 2 if #SMT_on " \
	  "else INT_MISC.RECOVERY_CYCLES)) / tma_info_thread_slots" }, \
	{ "tma_memory_bound", "Memory_Bound", "tma_backend_bound", 2, 100, \
	  "(CYCLE_ACTIVITY.STALLS_MEM_ANY + EXE_ACTIVITY.BOUND_ON_STORES) / (CYCLE_ACTIVITY.STALLS_TOTAL + " \
	  "(EXE_ACTIVITY.1_PORTS_UTIL + tma_retiring * EXE_ACTIVITY.2_PORTS_UTIL) + EXE_ACTIVITY.BOUND_ON_STORES) " \
	  "* tma_backend_bound" }, \
	{ "tma_l1_bound", "L1_Bound", "tma_memory_bound", 3, 100, \
	  "max((CYCLE_ACTIVITY.STALLS_MEM_ANY - CYCLE_ACTIVITY.STALLS_L1D_MISS) / tma_info_thread_clks, 0)" }, \
	{ "tma_l2_bound", "L2_Bound", "tma_memory_bound", 3, 100, \
	  "MEM_LOAD_RETIRED.L2_HIT * (1 + MEM_LOAD_RETIRED.FB_HIT / MEM_LOAD_RETIRED.L1_MISS) / " \
	  "(MEM_LOAD_RETIRED.L2_HIT * (1 + MEM_LOAD_RETIRED.FB_HIT / MEM_LOAD_RETIRED.L1_MISS) + " \
	  "L1D_PEND_MISS.FB_FULL:c1) * ((CYCLE_ACTIVITY.STALLS_L1D_MISS - CYCLE_ACTIVITY.STALLS_L2_MISS) / " \
	  "tma_info_thread_clks)" }, \
	{ "tma_l3_bound", "L3_Bound", "tma_memory_bound", 3, 100, \
	  "(CYCLE_ACTIVITY.STALLS_L2_MISS - CYCLE_ACTIVITY.STALLS_L3_MISS) / tma_info_thread_clks" }, \
	{ "tma_dram_bound", "DRAM_Bound", "tma_memory_bound", 3, 100, SKL_DRAM }, \
	{ "tma_mem_bandwidth", "MEM_Bandwidth", "tma_dram_bound", 3, 100, \
	  "min(CPU_CLK_UNHALTED.THREAD, OFFCORE_REQUESTS_OUTSTANDING.ALL_DATA_RD:c4) / tma_info_thread_clks" }, \
	{ "tma_mem_latency", "MEM_Latency", "tma_dram_bound", 3, 100, \
	  "min(CPU_CLK_UNHALTED.THREAD, OFFCORE_REQUESTS_OUTSTANDING.CYCLES_WITH_DATA_RD) / " \
	  "tma_info_thread_clks - tma_mem_bandwidth" }, \
	{ "tma_store_bound", "Store_Bound", "tma_memory_bound", 3, 100, \
	  "EXE_ACTIVITY.BOUND_ON_STORES / tma_info_thread_clks" }, \
	{ "tma_core_bound", "Core_Bound", "tma_backend_bound", 2, 100, "tma_backend_bound - tma_memory_bound" }, \
	{ "tma_retiring", "Retiring", NULL, 1, 100, "UOPS_RETIRED.RETIRE_SLOTS / tma_info_thread_slots" }, \
	{ "tma_light_operations", "Light_Operations", "tma_retiring", 2, 100, \
	  "tma_retiring - tma_heavy_operations" }, \
	{ "tma_heavy_operations", "Heavy_Operations", "tma_retiring", 2, 100, \
	  "(UOPS_RETIRED.RETIRE_SLOTS + UOPS_RETIRED.MACRO_FUSED - INST_RETIRED.ANY) / tma_info_thread_slots" }

/* Persistent-memory split (Cascade Lake and later servers); #has_pmem is 0 unless set. */
#define FBF "(1 + MEM_LOAD_RETIRED.FB_HIT / MEM_LOAD_RETIRED.L1_MISS)"
#define PMM_SHARE(DRAM_STALLS) \
	"(((1 - (19 * (MEM_LOAD_L3_MISS_RETIRED.REMOTE_DRAM * " FBF ") + 10 * (MEM_LOAD_L3_MISS_RETIRED.LOCAL_DRAM * " FBF \
	" + MEM_LOAD_L3_MISS_RETIRED.REMOTE_FWD * " FBF " + MEM_LOAD_L3_MISS_RETIRED.REMOTE_HITM * " FBF ")) / " \
	"(19 * (MEM_LOAD_L3_MISS_RETIRED.REMOTE_DRAM * " FBF ") + 10 * (MEM_LOAD_L3_MISS_RETIRED.LOCAL_DRAM * " FBF \
	" + MEM_LOAD_L3_MISS_RETIRED.REMOTE_FWD * " FBF " + MEM_LOAD_L3_MISS_RETIRED.REMOTE_HITM * " FBF ") + " \
	"(25 * (MEM_LOAD_RETIRED.LOCAL_PMM * " FBF ") + 33 * (MEM_LOAD_L3_MISS_RETIRED.REMOTE_PMM * " FBF ")))) * " \
	DRAM_STALLS " if 1e6 * (MEM_LOAD_L3_MISS_RETIRED.REMOTE_PMM + MEM_LOAD_RETIRED.LOCAL_PMM) > " \
	"MEM_LOAD_RETIRED.L1_MISS else 0) if #has_pmem > 0 else 0)"

#define SKL_DRAM_STALLS "CYCLE_ACTIVITY.STALLS_L3_MISS / tma_info_thread_clks + (CYCLE_ACTIVITY.STALLS_L1D_MISS - " \
	"CYCLE_ACTIVITY.STALLS_L2_MISS) / tma_info_thread_clks - tma_l2_bound"

#define SKL_DRAM SKL_DRAM_STALLS
static const struct tma_metric skl_metrics[] = { SKL_COMMON };
#undef SKL_DRAM

#define SKL_DRAM "(" SKL_DRAM_STALLS " - tma_pmm_bound if #has_pmem > 0 else " SKL_DRAM_STALLS ")"
static const struct tma_metric clx_metrics[] = {
	SKL_COMMON,
	{ "tma_pmm_bound", "PMM_Bound", "tma_memory_bound", 3, 100, PMM_SHARE("(" SKL_DRAM_STALLS ")") },
};
#undef SKL_DRAM

static const struct tma_formulation skl_perf = { "perf", "perf TMA metrics (general counters)", skl_metrics, N(skl_metrics), NULL };
static const struct tma_formulation clx_perf = { "perf", "perf TMA metrics (general counters)", clx_metrics, N(clx_metrics), NULL };

/* ---------------- Intel Ice Lake-X ---------------- */
#define TD_SUM "(topdown\\-fe\\-bound + topdown\\-bad\\-spec + topdown\\-retiring + topdown\\-be\\-bound)"
#define ICX_DRAM_STALLS SKL_DRAM_STALLS
static const struct tma_metric icx_metrics[] = {
	{ "tma_info_thread_clks", NULL, NULL, 0, 1, "CPU_CLK_UNHALTED.THREAD" },
	{ "tma_info_core_core_clks", NULL, NULL, 0, 1, "(CPU_CLK_UNHALTED.DISTRIBUTED if #SMT_on else tma_info_thread_clks)" },
	{ "tma_info_thread_slots", NULL, NULL, 0, 1, "TOPDOWN.SLOTS" },
	{ "tma_frontend_bound", "Frontend_Bound", NULL, 1, 100,
	  "topdown\\-fe\\-bound / " TD_SUM " - INT_MISC.UOP_DROPPING / tma_info_thread_slots" },
	{ "tma_fetch_latency", "Fetch_Latency", "tma_frontend_bound", 2, 100,
	  "(5 * IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE - INT_MISC.UOP_DROPPING) / tma_info_thread_slots" },
	{ "tma_fetch_bandwidth", "Fetch_Bandwidth", "tma_frontend_bound", 2, 100,
	  "max(0, tma_frontend_bound - tma_fetch_latency)" },
	{ "tma_bad_speculation", "Bad_Speculation", NULL, 1, 100,
	  "max(1 - (tma_frontend_bound + tma_backend_bound + tma_retiring), 0)" },
	{ "tma_branch_mispredicts", "Branch_Mispredicts", "tma_bad_speculation", 2, 100,
	  "BR_MISP_RETIRED.ALL_BRANCHES / (BR_MISP_RETIRED.ALL_BRANCHES + MACHINE_CLEARS.COUNT) * tma_bad_speculation" },
	{ "tma_machine_clears", "Machine_Clears", "tma_bad_speculation", 2, 100,
	  "max(0, tma_bad_speculation - tma_branch_mispredicts)" },
	{ "tma_backend_bound", "Backend_Bound", NULL, 1, 100,
	  "topdown\\-be\\-bound / " TD_SUM " + 5 * INT_MISC.CLEARS_COUNT / tma_info_thread_slots" },
	{ "tma_memory_bound", "Memory_Bound", "tma_backend_bound", 2, 100,
	  "(CYCLE_ACTIVITY.STALLS_MEM_ANY + EXE_ACTIVITY.BOUND_ON_STORES) / (CYCLE_ACTIVITY.STALLS_TOTAL + "
	  "(EXE_ACTIVITY.1_PORTS_UTIL + tma_retiring * EXE_ACTIVITY.2_PORTS_UTIL) + EXE_ACTIVITY.BOUND_ON_STORES) "
	  "* tma_backend_bound" },
	{ "tma_l1_bound", "L1_Bound", "tma_memory_bound", 3, 100,
	  "max((CYCLE_ACTIVITY.STALLS_MEM_ANY - CYCLE_ACTIVITY.STALLS_L1D_MISS) / tma_info_thread_clks, 0)" },
	{ "tma_l2_bound", "L2_Bound", "tma_memory_bound", 3, 100,
	  "MEM_LOAD_RETIRED.L2_HIT * " FBF " / (MEM_LOAD_RETIRED.L2_HIT * " FBF " + L1D_PEND_MISS.FB_FULL_PERIODS) * "
	  "((CYCLE_ACTIVITY.STALLS_L1D_MISS - CYCLE_ACTIVITY.STALLS_L2_MISS) / tma_info_thread_clks)" },
	{ "tma_l3_bound", "L3_Bound", "tma_memory_bound", 3, 100,
	  "(CYCLE_ACTIVITY.STALLS_L2_MISS - CYCLE_ACTIVITY.STALLS_L3_MISS) / tma_info_thread_clks" },
	{ "tma_dram_bound", "DRAM_Bound", "tma_memory_bound", 3, 100,
	  "(" ICX_DRAM_STALLS " - tma_pmm_bound if #has_pmem > 0 else " ICX_DRAM_STALLS ")" },
	{ "tma_mem_bandwidth", "MEM_Bandwidth", "tma_dram_bound", 3, 100,
	  "min(CPU_CLK_UNHALTED.THREAD, OFFCORE_REQUESTS_OUTSTANDING.ALL_DATA_RD:c4) / tma_info_thread_clks" },
	{ "tma_mem_latency", "MEM_Latency", "tma_dram_bound", 3, 100,
	  "min(CPU_CLK_UNHALTED.THREAD, OFFCORE_REQUESTS_OUTSTANDING.CYCLES_WITH_DATA_RD) / tma_info_thread_clks - tma_mem_bandwidth" },
	{ "tma_pmm_bound", "PMM_Bound", "tma_memory_bound", 3, 100, PMM_SHARE("(" ICX_DRAM_STALLS ")") },
	{ "tma_store_bound", "Store_Bound", "tma_memory_bound", 3, 100, "EXE_ACTIVITY.BOUND_ON_STORES / tma_info_thread_clks" },
	{ "tma_core_bound", "Core_Bound", "tma_backend_bound", 2, 100, "max(0, tma_backend_bound - tma_memory_bound)" },
	{ "tma_retiring", "Retiring", NULL, 1, 100, "topdown\\-retiring / " TD_SUM " + 0 * tma_info_thread_slots" },
	{ "tma_light_operations", "Light_Operations", "tma_retiring", 2, 100, "max(0, tma_retiring - tma_heavy_operations)" },
	{ "tma_heavy_operations", "Heavy_Operations", "tma_retiring", 2, 100,
	  "tma_microcode_sequencer + tma_retiring * (UOPS_DECODED.DEC0 - UOPS_DECODED.DEC0:c1) / IDQ.MITE_UOPS" },
	{ "tma_microcode_sequencer", NULL, NULL, 0, 100,
	  "UOPS_RETIRED.SLOTS / UOPS_ISSUED.ANY * IDQ.MS_UOPS / tma_info_thread_slots" },
};
static const struct tma_formulation icx_perf = { "perf", "perf TMA metrics (slots + topdown-* perf-metrics events)", icx_metrics, N(icx_metrics), NULL };

/* General-counter L1 for Ice Lake-X: each perf-metrics fraction is replaced by
 * its general-counter numerator over TOPDOWN.SLOTS_P (same slot accounting). */
static const struct tma_metric icx_gc_metrics[] = {
	{ "tma_info_thread_slots", NULL, NULL, 0, 1, "TOPDOWN.SLOTS_P" },
	{ "tma_frontend_bound", "Frontend_Bound", NULL, 1, 100,
	  "(IDQ_UOPS_NOT_DELIVERED.CORE - INT_MISC.UOP_DROPPING) / tma_info_thread_slots" },
	{ "tma_backend_bound", "Backend_Bound", NULL, 1, 100,
	  "TOPDOWN.BACKEND_BOUND_SLOTS / tma_info_thread_slots + 5 * INT_MISC.CLEARS_COUNT / tma_info_thread_slots" },
	{ "tma_retiring", "Retiring", NULL, 1, 100, "UOPS_RETIRED.SLOTS / tma_info_thread_slots" },
};
static const struct tma_formulation icx_gc = { "gc", "general counters (TOPDOWN.SLOTS_P, TOPDOWN.BACKEND_BOUND_SLOTS, ...)", icx_gc_metrics, N(icx_gc_metrics), &icx_perf };

/* ---------------- Intel Sapphire Rapids ---------------- */
#define SPR_DRAM_STALLS "MEMORY_ACTIVITY.STALLS_L3_MISS / tma_info_thread_clks"
static const struct tma_metric spr_metrics[] = {
	{ "tma_info_thread_clks", NULL, NULL, 0, 1, "CPU_CLK_UNHALTED.THREAD" },
	{ "tma_info_core_core_clks", NULL, NULL, 0, 1, "(CPU_CLK_UNHALTED.DISTRIBUTED if #SMT_on else tma_info_thread_clks)" },
	{ "tma_info_thread_slots", NULL, NULL, 0, 1, "TOPDOWN.SLOTS" },
	{ "tma_frontend_bound", "Frontend_Bound", NULL, 1, 100,
	  "topdown\\-fe\\-bound / " TD_SUM " - INT_MISC.UOP_DROPPING / tma_info_thread_slots" },
	{ "tma_fetch_latency", "Fetch_Latency", "tma_frontend_bound", 2, 100,
	  "topdown\\-fetch\\-lat / " TD_SUM " - INT_MISC.UOP_DROPPING / tma_info_thread_slots" },
	{ "tma_fetch_bandwidth", "Fetch_Bandwidth", "tma_frontend_bound", 2, 100,
	  "max(0, tma_frontend_bound - tma_fetch_latency)" },
	{ "tma_bad_speculation", "Bad_Speculation", NULL, 1, 100,
	  "max(1 - (tma_frontend_bound + tma_backend_bound + tma_retiring), 0)" },
	{ "tma_branch_mispredicts", "Branch_Mispredicts", "tma_bad_speculation", 2, 100,
	  "topdown\\-br\\-mispredict / " TD_SUM " + 0 * tma_info_thread_slots" },
	{ "tma_machine_clears", "Machine_Clears", "tma_bad_speculation", 2, 100,
	  "max(0, tma_bad_speculation - tma_branch_mispredicts)" },
	{ "tma_backend_bound", "Backend_Bound", NULL, 1, 100,
	  "topdown\\-be\\-bound / " TD_SUM " + 0 * tma_info_thread_slots" },
	{ "tma_memory_bound", "Memory_Bound", "tma_backend_bound", 2, 100,
	  "topdown\\-mem\\-bound / " TD_SUM " + 0 * tma_info_thread_slots" },
	{ "tma_l1_bound", "L1_Bound", "tma_memory_bound", 3, 100,
	  "max((EXE_ACTIVITY.BOUND_ON_LOADS - MEMORY_ACTIVITY.STALLS_L1D_MISS) / tma_info_thread_clks, 0)" },
	{ "tma_l2_bound", "L2_Bound", "tma_memory_bound", 3, 100,
	  "(MEMORY_ACTIVITY.STALLS_L1D_MISS - MEMORY_ACTIVITY.STALLS_L2_MISS) / tma_info_thread_clks" },
	{ "tma_l3_bound", "L3_Bound", "tma_memory_bound", 3, 100,
	  "(MEMORY_ACTIVITY.STALLS_L2_MISS - MEMORY_ACTIVITY.STALLS_L3_MISS) / tma_info_thread_clks" },
	{ "tma_dram_bound", "DRAM_Bound", "tma_memory_bound", 3, 100,
	  "(" SPR_DRAM_STALLS " - tma_pmm_bound if #has_pmem > 0 else " SPR_DRAM_STALLS ")" },
	{ "tma_mem_bandwidth", "MEM_Bandwidth", "tma_dram_bound", 3, 100,
	  "min(CPU_CLK_UNHALTED.THREAD, OFFCORE_REQUESTS_OUTSTANDING.ALL_DATA_RD:c4) / tma_info_thread_clks" },
	{ "tma_mem_latency", "MEM_Latency", "tma_dram_bound", 3, 100,
	  "min(CPU_CLK_UNHALTED.THREAD, OFFCORE_REQUESTS_OUTSTANDING.CYCLES_WITH_DATA_RD) / tma_info_thread_clks - tma_mem_bandwidth" },
	{ "tma_pmm_bound", "PMM_Bound", "tma_memory_bound", 3, 100, PMM_SHARE("(" SPR_DRAM_STALLS ")") },
	{ "tma_store_bound", "Store_Bound", "tma_memory_bound", 3, 100, "EXE_ACTIVITY.BOUND_ON_STORES / tma_info_thread_clks" },
	{ "tma_core_bound", "Core_Bound", "tma_backend_bound", 2, 100, "max(0, tma_backend_bound - tma_memory_bound)" },
	{ "tma_retiring", "Retiring", NULL, 1, 100, "topdown\\-retiring / " TD_SUM " + 0 * tma_info_thread_slots" },
	{ "tma_light_operations", "Light_Operations", "tma_retiring", 2, 100, "max(0, tma_retiring - tma_heavy_operations)" },
	{ "tma_heavy_operations", "Heavy_Operations", "tma_retiring", 2, 100,
	  "topdown\\-heavy\\-ops / " TD_SUM " + 0 * tma_info_thread_slots" },
};
static const struct tma_formulation spr_perf = { "perf", "perf TMA metrics (slots + topdown-* perf-metrics events)", spr_metrics, N(spr_metrics), NULL };

/* General-counter SPR tree: TOPDOWN.*_SLOTS count the same slots as the
 * perf-metrics fractions; Fetch_Latency uses the Ice Lake general form with
 * SPR's width 6 (IDQ_BUBBLES.CYCLES_0_UOPS_DELIV.CORE has cmask 6). */
static const struct tma_metric spr_gc_metrics[] = {
	{ "tma_info_thread_slots", NULL, NULL, 0, 1, "TOPDOWN.SLOTS_P" },
	{ "tma_frontend_bound", "Frontend_Bound", NULL, 1, 100,
	  "(IDQ_BUBBLES.CORE - INT_MISC.UOP_DROPPING) / tma_info_thread_slots" },
	{ "tma_fetch_latency", "Fetch_Latency", "tma_frontend_bound", 2, 100,
	  "(6 * IDQ_BUBBLES.CYCLES_0_UOPS_DELIV.CORE - INT_MISC.UOP_DROPPING) / tma_info_thread_slots" },
	{ "tma_branch_mispredicts", "Branch_Mispredicts", "tma_bad_speculation", 2, 100,
	  "TOPDOWN.BR_MISPREDICT_SLOTS / tma_info_thread_slots" },
	{ "tma_backend_bound", "Backend_Bound", NULL, 1, 100, "TOPDOWN.BACKEND_BOUND_SLOTS / tma_info_thread_slots" },
	{ "tma_memory_bound", "Memory_Bound", "tma_backend_bound", 2, 100, "TOPDOWN.MEMORY_BOUND_SLOTS / tma_info_thread_slots" },
	{ "tma_retiring", "Retiring", NULL, 1, 100, "UOPS_RETIRED.SLOTS / tma_info_thread_slots" },
	{ "tma_heavy_operations", "Heavy_Operations", "tma_retiring", 2, 100, "UOPS_RETIRED.HEAVY / tma_info_thread_slots" },
};
static const struct tma_formulation spr_gc = { "gc", "general counters (TOPDOWN.SLOTS_P, TOPDOWN.*_SLOTS, IDQ_BUBBLES.CORE, UOPS_RETIRED.SLOTS)", spr_gc_metrics, N(spr_gc_metrics), &spr_perf };

/* ---------------- AMD Zen 4 / Zen 5 (perf pipeline.json, L1 + L2) ---------------- */
static const struct tma_metric zen4_metrics[] = {
	{ "total_dispatch_slots", NULL, NULL, 0, 1, "6 * ls_not_halted_cyc" },
	{ "frontend_bound", "Frontend_Bound", NULL, 1, 100,
	  "d_ratio(de_no_dispatch_per_slot.no_ops_from_frontend, total_dispatch_slots)" },
	{ "frontend_bound_latency", "Latency", "frontend_bound", 2, 100,
	  "d_ratio((6 * de_no_dispatch_per_slot.no_ops_from_frontend:c6), total_dispatch_slots)" },
	{ "frontend_bound_bandwidth", "Bandwidth", "frontend_bound", 2, 100,
	  "d_ratio(de_no_dispatch_per_slot.no_ops_from_frontend - (6 * de_no_dispatch_per_slot.no_ops_from_frontend:c6), total_dispatch_slots)" },
	{ "bad_speculation", "Bad_Speculation", NULL, 1, 100, "d_ratio(de_src_op_disp.all - ex_ret_ops, total_dispatch_slots)" },
	{ "bad_speculation_mispredicts", "Mispredicts", "bad_speculation", 2, 100,
	  "d_ratio(bad_speculation * ex_ret_brn_misp, ex_ret_brn_misp + resyncs_or_nc_redirects)" },
	{ "bad_speculation_pipeline_restarts", "Pipeline_Restarts", "bad_speculation", 2, 100,
	  "d_ratio(bad_speculation * resyncs_or_nc_redirects, ex_ret_brn_misp + resyncs_or_nc_redirects)" },
	{ "backend_bound", "Backend_Bound", NULL, 1, 100, "d_ratio(de_no_dispatch_per_slot.backend_stalls, total_dispatch_slots)" },
	{ "backend_bound_memory", "Memory", "backend_bound", 2, 100,
	  "backend_bound * d_ratio(ex_no_retire.load_not_complete, ex_no_retire.not_complete)" },
	{ "backend_bound_cpu", "CPU", "backend_bound", 2, 100,
	  "backend_bound * (1 - d_ratio(ex_no_retire.load_not_complete, ex_no_retire.not_complete))" },
	{ "smt_contention", "SMT_Contention", NULL, 1, 100, "d_ratio(de_no_dispatch_per_slot.smt_contention, total_dispatch_slots)" },
	{ "retiring", "Retiring", NULL, 1, 100, "d_ratio(ex_ret_ops, total_dispatch_slots)" },
	{ "retiring_fastpath", "Fastpath", "retiring", 2, 100, "retiring * (1 - d_ratio(ex_ret_ucode_ops, ex_ret_ops))" },
	{ "retiring_microcode", "Microcode", "retiring", 2, 100, "retiring * d_ratio(ex_ret_ucode_ops, ex_ret_ops)" },
};
static const struct tma_formulation zen4_perf = { "perf", "perf pipeline metrics (Zen 4)", zen4_metrics, N(zen4_metrics), NULL };

static const struct tma_metric zen5_metrics[] = {
	{ "total_dispatch_slots", NULL, NULL, 0, 1, "8 * ls_not_halted_cyc" },
	{ "frontend_bound", "Frontend_Bound", NULL, 1, 100,
	  "d_ratio(de_no_dispatch_per_slot.no_ops_from_frontend, total_dispatch_slots)" },
	{ "frontend_bound_by_latency", "Latency", "frontend_bound", 2, 100,
	  "d_ratio((8 * de_no_dispatch_per_slot.no_ops_from_frontend:c8), total_dispatch_slots)" },
	{ "frontend_bound_by_bandwidth", "Bandwidth", "frontend_bound", 2, 100,
	  "d_ratio(de_no_dispatch_per_slot.no_ops_from_frontend - (8 * de_no_dispatch_per_slot.no_ops_from_frontend:c8), total_dispatch_slots)" },
	{ "bad_speculation", "Bad_Speculation", NULL, 1, 100, "d_ratio(de_src_op_disp.all - ex_ret_ops, total_dispatch_slots)" },
	{ "bad_speculation_from_mispredicts", "Mispredicts", "bad_speculation", 2, 100,
	  "d_ratio(bad_speculation * ex_ret_brn_misp, ex_ret_brn_misp + bp_redirects.resync)" },
	{ "bad_speculation_from_pipeline_restarts", "Pipeline_Restarts", "bad_speculation", 2, 100,
	  "d_ratio(bad_speculation * bp_redirects.resync, ex_ret_brn_misp + bp_redirects.resync)" },
	{ "backend_bound", "Backend_Bound", NULL, 1, 100, "d_ratio(de_no_dispatch_per_slot.backend_stalls, total_dispatch_slots)" },
	{ "backend_bound_by_memory", "Memory", "backend_bound", 2, 100,
	  "backend_bound * d_ratio(ex_no_retire.load_not_complete, ex_no_retire.not_complete)" },
	{ "backend_bound_by_cpu", "CPU", "backend_bound", 2, 100,
	  "backend_bound * (1 - d_ratio(ex_no_retire.load_not_complete, ex_no_retire.not_complete))" },
	{ "smt_contention", "SMT_Contention", NULL, 1, 100, "d_ratio(de_no_dispatch_per_slot.smt_contention, total_dispatch_slots)" },
	{ "retiring", "Retiring", NULL, 1, 100, "d_ratio(ex_ret_ops, total_dispatch_slots)" },
	{ "retiring_from_fastpath", "Fastpath", "retiring", 2, 100, "retiring * (1 - d_ratio(ex_ret_ucode_ops, ex_ret_ops))" },
	{ "retiring_from_microcode", "Microcode", "retiring", 2, 100, "retiring * d_ratio(ex_ret_ucode_ops, ex_ret_ops)" },
};
static const struct tma_formulation zen5_perf = { "perf", "perf pipeline metrics (Zen 5)", zen5_metrics, N(zen5_metrics), NULL };

/* ---------------- Arm Neoverse (perf sbsa.json + per-core overrides, L1) ---------------- */
static const struct tma_metric v1_metrics[] = {
	{ "frontend_bound", "Frontend_Bound", NULL, 1, 1,
	  "(100 * ((STALL_SLOT_FRONTEND / (CPU_CYCLES * 8)) - ((BR_MIS_PRED * 4) / CPU_CYCLES)))" },
	{ "bad_speculation", "Bad_Speculation", NULL, 1, 1,
	  "(100 * (((1 - (OP_RETIRED / OP_SPEC)) * (1 - (STALL_SLOT / (CPU_CYCLES * 8)))) + ((BR_MIS_PRED * 4) / CPU_CYCLES)))" },
	{ "backend_bound", "Backend_Bound", NULL, 1, 1, "100 * (stall_slot_backend / (#slots * cpu_cycles))" },
	{ "retiring", "Retiring", NULL, 1, 1, "100 * ((op_retired / op_spec) * (1 - stall_slot / (#slots * cpu_cycles)))" },
};
static const struct tma_formulation v1_perf = { "perf", "perf topdown L1 (sbsa + Neoverse V1)", v1_metrics, N(v1_metrics), NULL };

#define N2_SLOT(EV) "((" EV ") if (strcmp_cpuid_str(0x410fd493) | strcmp_cpuid_str(0x410fd490) ^ 1) else (" EV " - CPU_CYCLES))"
static const struct tma_metric n2_metrics[] = {
	{ "frontend_bound", "Frontend_Bound", NULL, 1, 1,
	  "(100 * ((" N2_SLOT("STALL_SLOT_FRONTEND") " / (CPU_CYCLES * #slots)) - (BR_MIS_PRED / CPU_CYCLES)))" },
	{ "bad_speculation", "Bad_Speculation", NULL, 1, 1,
	  "(100 * (((1 - (OP_RETIRED / OP_SPEC)) * (1 - (" N2_SLOT("STALL_SLOT") " / (CPU_CYCLES * #slots)))) + ((BR_MIS_PRED * 4) / CPU_CYCLES)))" },
	{ "backend_bound", "Backend_Bound", NULL, 1, 1,
	  "(100 * ((STALL_SLOT_BACKEND / (CPU_CYCLES * #slots)) - ((BR_MIS_PRED * 3) / CPU_CYCLES)))" },
	{ "retiring", "Retiring", NULL, 1, 1,
	  "(100 * ((OP_RETIRED / OP_SPEC) * (1 - (" N2_SLOT("STALL_SLOT") " / (CPU_CYCLES * #slots)))))" },
};
static const struct tma_formulation n2_perf = { "perf", "perf topdown L1 (sbsa + Neoverse N2/V2)", n2_metrics, N(n2_metrics), NULL };

/* ---------------- event encodings: only exceptions to the default rule ----------------
 * Intel default: key "A.B:c1:e1" -> libpfm4 "A:B:c=1:e=1", checked against JSON "A.B". */
#define ICLK(fx) { "CPU_CLK_UNHALTED.THREAD", "CPU_CLK_UNHALTED:THREAD_P", 0, "CPU_CLK_UNHALTED.THREAD_P", 0, fx, 0 }
#define IINST { "INST_RETIRED.ANY", "INST_RETIRED:ANY_P", 0, "INST_RETIRED.ANY_P", 0, 0, 0 }
#define TDPSEUDO \
	{ "TOPDOWN.SLOTS", NULL, 0x0400, "TOPDOWN.SLOTS", 0, 3, 1 }, \
	{ "TOPDOWN-FE-BOUND", NULL, 0x8200, NULL, 0, -1, 1 }, \
	{ "TOPDOWN-BAD-SPEC", NULL, 0x8100, NULL, 0, -1, 1 }, \
	{ "TOPDOWN-RETIRING", NULL, 0x8000, NULL, 0, -1, 1 }, \
	{ "TOPDOWN-BE-BOUND", NULL, 0x8300, NULL, 0, -1, 1 }, \
	{ "TOPDOWN-HEAVY-OPS", NULL, 0x8400, NULL, 0, -1, 1 }, \
	{ "TOPDOWN-BR-MISPREDICT", NULL, 0x8500, NULL, 0, -1, 1 }, \
	{ "TOPDOWN-FETCH-LAT", NULL, 0x8600, NULL, 0, -1, 1 }, \
	{ "TOPDOWN-MEM-BOUND", NULL, 0x8700, NULL, 0, -1, 1 }

static const struct tma_event_enc skl_ev[] = {
	ICLK(1), IINST,
	{ "CPU_CLK_UNHALTED.THREAD_ANY", "CPU_CLK_UNHALTED:THREAD_P:t=1", 0, "CPU_CLK_UNHALTED.THREAD_P_ANY", 0, -1, 0 },
	{ "CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE", "CPU_CLK_THREAD_UNHALTED:ONE_THREAD_ACTIVE", 0, NULL, 0, -1, 0 },
	{ "CPU_CLK_UNHALTED.REF_XCLK", "CPU_CLK_THREAD_UNHALTED:REF_XCLK", 0, NULL, 0, -1, 0 },
	{ "INT_MISC.RECOVERY_CYCLES_ANY", "INT_MISC:RECOVERY_CYCLES_ANY", 0, NULL, 0, -1, 0 },
	{ "IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE", "IDQ_UOPS_NOT_DELIVERED:CYCLES_0_UOPS_DELIV_CORE", 0, NULL, 0, -1, 0 },
	{ "L1D_PEND_MISS.FB_FULL:c1", "L1D_PEND_MISS:FB_FULL:c=1", 0, NULL, 0, -1, 0 },
	{ "OFFCORE_REQUESTS_OUTSTANDING.CYCLES_WITH_DATA_RD", "OFFCORE_REQUESTS_OUTSTANDING:ALL_DATA_RD_CYCLES", 0, NULL, 0, -1, 0 },
	/* libpfm4 4.13 skl/skx/clx tables have no UOPS_RETIRED:MACRO_FUSED: raw 0xc2/0x04 */
	{ "UOPS_RETIRED.MACRO_FUSED", NULL, 0x04c2, NULL, 0, -1, 0 },
};
/* libpfm4 4.13 encodes TOPDOWN:*_SLOTS as event 0x00 (the perf-metrics pseudo
 * space; umask 0x02 there is the fixed-counter cycles pseudo event), while
 * the JSON gives the general-counter event 0xa4: raw from the JSON. */
#define TDSLOTS(name, um, ctr) { "TOPDOWN." name, NULL, 0xa4 | ((um) << 8), NULL, ctr, -1, 0 }
static const struct tma_event_enc icx_ev[] = {
	ICLK(1), IINST, TDPSEUDO, TDSLOTS("BACKEND_BOUND_SLOTS", 0x02, 0),
	{ "IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE", "IDQ_UOPS_NOT_DELIVERED:CYCLES_0_UOPS_DELIV_CORE", 0, NULL, 0, -1, 0 },
};
static const struct tma_event_enc spr_ev[] = {
	ICLK(1), IINST, TDPSEUDO,
	/* libpfm4 names IDQ_BUBBLES (perf's SPR name) IDQ_UOPS_NOT_DELIVERED; same 0x9c/0x01 */
	{ "IDQ_BUBBLES.CORE", "IDQ_UOPS_NOT_DELIVERED:CORE", 0, NULL, 0, -1, 0 },
	{ "IDQ_BUBBLES.CYCLES_0_UOPS_DELIV.CORE", "IDQ_UOPS_NOT_DELIVERED:CYCLES_0_UOPS_DELIV_CORE", 0, NULL, 0, -1, 0 },
	TDSLOTS("BACKEND_BOUND_SLOTS", 0x02, 0), TDSLOTS("BAD_SPEC_SLOTS", 0x04, 0x01),
	TDSLOTS("BR_MISPREDICT_SLOTS", 0x08, 0x01), TDSLOTS("MEMORY_BOUND_SLOTS", 0x10, 0),
};
/* AMD: perf's names differ from libpfm4's; Zen 5 is not in libpfm4 4.13 -> raw. */
static const struct tma_event_enc zen4_ev[] = {
	{ "LS_NOT_HALTED_CYC", "CYCLES_NOT_IN_HALT", 0, "ls_not_halted_cyc", 0, -1, 0 },
	{ "EX_RET_OPS", "RETIRED_OPS", 0, "ex_ret_ops", 0, -1, 0 },
	{ "DE_SRC_OP_DISP.ALL", "OPS_SOURCE_DISPATCHED_FROM_DECODER:DECODER:OPCACHE:LOOP_BUFFER", 0, "de_src_op_disp.all", 0, -1, 0 },
	{ "DE_NO_DISPATCH_PER_SLOT.NO_OPS_FROM_FRONTEND", "DISPATCH_STALLS_1:FE_NO_OPS", 0, "de_no_dispatch_per_slot.no_ops_from_frontend", 0, -1, 0 },
	{ "DE_NO_DISPATCH_PER_SLOT.NO_OPS_FROM_FRONTEND:c6", "DISPATCH_STALLS_1:FE_NO_OPS:c=6", 0, "de_no_dispatch_per_slot.no_ops_from_frontend", 0, -1, 0 },
	{ "DE_NO_DISPATCH_PER_SLOT.BACKEND_STALLS", "DISPATCH_STALLS_1:BE_STALLS", 0, "de_no_dispatch_per_slot.backend_stalls", 0, -1, 0 },
	{ "DE_NO_DISPATCH_PER_SLOT.SMT_CONTENTION", "DISPATCH_STALLS_1:SMT_CONTENTION", 0, "de_no_dispatch_per_slot.smt_contention", 0, -1, 0 },
	{ "EX_RET_BRN_MISP", "RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED", 0, "ex_ret_brn_misp", 0, -1, 0 },
	{ "RESYNCS_OR_NC_REDIRECTS", "RESYNCS", 0, "resyncs_or_nc_redirects", 0, -1, 0 },
	{ "EX_NO_RETIRE.LOAD_NOT_COMPLETE", "CYCLES_NO_RETIRE:NOT_COMPLETE_MISSING_LOAD", 0, "ex_no_retire.load_not_complete", 0, -1, 0 },
	{ "EX_NO_RETIRE.NOT_COMPLETE", "CYCLES_NO_RETIRE:NOT_COMPLETE_LOAD_AND_ALU", 0, "ex_no_retire.not_complete", 0, -1, 0 },
	{ "EX_RET_UCODE_OPS", "RETIRED_UCODE_OPS", 0, "ex_ret_ucode_ops", 0, -1, 0 },
};
/* AMD raw config: event[7:0] | umask[15:8] | cmask[31:24] | event[11:8] << 32 */
#define AMDRAW(ev, um, cm) ((((uint64_t)(ev) & 0xff) | ((uint64_t)(um) << 8) | ((uint64_t)(cm) << 24) | ((((uint64_t)(ev) >> 8) & 0xf) << 32)))
static const struct tma_event_enc zen5_ev[] = {
	{ "LS_NOT_HALTED_CYC", NULL, AMDRAW(0x76, 0, 0), "ls_not_halted_cyc", 0, -1, 0 },
	{ "EX_RET_OPS", NULL, AMDRAW(0xc1, 0, 0), "ex_ret_ops", 0, -1, 0 },
	{ "DE_SRC_OP_DISP.ALL", NULL, AMDRAW(0xaa, 0x07, 0), "de_src_op_disp.all", 0, -1, 0 },
	{ "DE_NO_DISPATCH_PER_SLOT.NO_OPS_FROM_FRONTEND", NULL, AMDRAW(0x1a0, 0x01, 0), "de_no_dispatch_per_slot.no_ops_from_frontend", 0, -1, 0 },
	{ "DE_NO_DISPATCH_PER_SLOT.NO_OPS_FROM_FRONTEND:c8", NULL, AMDRAW(0x1a0, 0x01, 8), "de_no_dispatch_per_slot.no_ops_from_frontend", 0, -1, 0 },
	{ "DE_NO_DISPATCH_PER_SLOT.BACKEND_STALLS", NULL, AMDRAW(0x1a0, 0x1e, 0), "de_no_dispatch_per_slot.backend_stalls", 0, -1, 0 },
	{ "DE_NO_DISPATCH_PER_SLOT.SMT_CONTENTION", NULL, AMDRAW(0x1a0, 0x60, 0), "de_no_dispatch_per_slot.smt_contention", 0, -1, 0 },
	{ "EX_RET_BRN_MISP", NULL, AMDRAW(0xc3, 0, 0), "ex_ret_brn_misp", 0, -1, 0 },
	{ "BP_REDIRECTS.RESYNC", NULL, AMDRAW(0x9f, 0x01, 0), "bp_redirects.resync", 0, -1, 0 },
	{ "EX_NO_RETIRE.LOAD_NOT_COMPLETE", NULL, AMDRAW(0xd6, 0xa2, 0), "ex_no_retire.load_not_complete", 0, -1, 0 },
	{ "EX_NO_RETIRE.NOT_COMPLETE", NULL, AMDRAW(0xd6, 0x02, 0), "ex_no_retire.not_complete", 0, -1, 0 },
	{ "EX_RET_UCODE_OPS", NULL, AMDRAW(0x1c2, 0, 0), "ex_ret_ucode_ops", 0, -1, 0 },
};
/* Arm: architected common event numbers (libpfm4's x86 build has no Arm PMUs). */
static const struct tma_event_enc arm_ev[] = {
	{ "CPU_CYCLES", NULL, 0x11, "CPU_CYCLES", 0, 0, 0 },	/* PMCCNTR, the cycle counter */
	{ "BR_MIS_PRED", NULL, 0x10, "BR_MIS_PRED", 0, -1, 0 },
	{ "OP_RETIRED", NULL, 0x3a, "OP_RETIRED", 0, -1, 0 },
	{ "OP_SPEC", NULL, 0x3b, "OP_SPEC", 0, -1, 0 },
	{ "STALL_SLOT_BACKEND", NULL, 0x3d, "STALL_SLOT_BACKEND", 0, -1, 0 },
	{ "STALL_SLOT_FRONTEND", NULL, 0x3e, "STALL_SLOT_FRONTEND", 0, -1, 0 },
	{ "STALL_SLOT", NULL, 0x3f, "STALL_SLOT", 0, -1, 0 },
};

static const int skl_models[] = { 0x4e, 0x5e, 0x8e, 0x9e, 0xa5, 0xa6, -1 };
static const int skx_models[] = { 0x55, -1 };
static const int icx_models[] = { 0x6a, 0x6c, -1 };
static const int spr_models[] = { 0x8f, -1 };
static const int zen4_models[] = { -2, -1 };	/* -2: any model of the family */
static const int v1_parts[] = { 0xd40, -1 };
static const int n2_parts[] = { 0xd49, -1 };
static const int v2_parts[] = { 0xd4f, -1 };

static const struct tma_cpu cpu_skl = {
	"skylake", "Intel Skylake (client)", TMA_INTEL, 6, skl_models, -1, -1, "skl", 3, 4, 8, 4, 3,
	&skl_perf, NULL, skl_ev, N(skl_ev), "4 general counters per thread with SMT on, 8 with SMT off",
};
static const struct tma_cpu cpu_skx = {
	"skylakex", "Intel Skylake-X", TMA_INTEL, 6, skx_models, 0, 4, "skx", 3, 4, 8, 4, 3,
	&skl_perf, NULL, skl_ev, N(skl_ev), "4 general counters per thread with SMT on, 8 with SMT off",
};
static const struct tma_cpu cpu_clx = {
	"cascadelakex", "Intel Cascade Lake", TMA_INTEL, 6, skx_models, 5, 15, "clx", 3, 4, 8, 4, 3,
	&clx_perf, NULL, skl_ev, N(skl_ev), "4 general counters per thread with SMT on, 8 with SMT off",
};
static const struct tma_cpu cpu_icx = {
	"icelakex", "Intel Ice Lake-X", TMA_INTEL, 6, icx_models, -1, -1, "icx", 4, 8, 8, 5, 3,
	&icx_perf, &icx_gc, icx_ev, N(icx_ev), "8 general counters; perf-metrics (slots/topdown-*) used only by analyze",
};
static const struct tma_cpu cpu_spr = {
	"sapphirerapids", "Intel Sapphire Rapids", TMA_INTEL, 6, spr_models, -1, -1, "spr", 4, 8, 8, 6, 3,
	&spr_perf, &spr_gc, spr_ev, N(spr_ev), "8 general counters; TOPDOWN.BAD_SPEC_SLOTS/BR_MISPREDICT_SLOTS only on counter 0",
};
static const struct tma_cpu cpu_zen4 = {
	"amdzen4", "AMD Zen 4", TMA_AMD, 0x19, zen4_models, -1, -1, "amd64_fam19h_zen4", 0, 6, 6, 6, 2,
	&zen4_perf, NULL, zen4_ev, N(zen4_ev), "6 general counters, no fixed counters",
};
static const struct tma_cpu cpu_zen5 = {
	"amdzen5", "AMD Zen 5", TMA_AMD, 0x1a, zen4_models, -1, -1, NULL, 0, 6, 6, 8, 2,
	&zen5_perf, NULL, zen5_ev, N(zen5_ev), "6 general counters; libpfm4 4.13 has no Zen 5 table, encodings are raw",
};
static const struct tma_cpu cpu_v1 = {
	"neoverse-v1", "Arm Neoverse V1", TMA_ARM, 0x41, v1_parts, -1, -1, NULL, 1, 6, 6, 8, 1,
	&v1_perf, NULL, arm_ev, N(arm_ev), "6 general counters + cycle counter; architected event numbers",
};
static const struct tma_cpu cpu_n2 = {
	"neoverse-n2", "Arm Neoverse N2", TMA_ARM, 0x41, n2_parts, -1, -1, NULL, 1, 6, 6, 5, 1,
	&n2_perf, NULL, arm_ev, N(arm_ev), "6 general counters + cycle counter; architected event numbers",
};
static const struct tma_cpu cpu_v2 = {
	"neoverse-v2", "Arm Neoverse V2", TMA_ARM, 0x41, v2_parts, -1, -1, NULL, 1, 6, 6, 8, 1,
	&n2_perf, NULL, arm_ev, N(arm_ev), "6 general counters + cycle counter; architected event numbers",
};

const struct tma_cpu *const tma_cpus[] = {
	&cpu_skl, &cpu_skx, &cpu_clx, &cpu_icx, &cpu_spr, &cpu_zen4, &cpu_zen5, &cpu_v1, &cpu_n2, &cpu_v2,
};
const int tma_ncpus = N(tma_cpus);
