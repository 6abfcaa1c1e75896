// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * TMA recipes: for each CPU, perf's tree (user/pmu/tma_perf_tables.c, generated
 * from perf 6.12 itself), the general-counter formulation the BPF path uses on
 * Ice Lake-X / Sapphire Rapids / Emerald Rapids, the Arm Neoverse level-1 tables, the event
 * encodings and the counter budget.  docs/tma.md says where each formula comes
 * from and how it is checked against perf (tests/test_tma_perf.py).
 *
 * Two formulations per Ice Lake-X / Sapphire Rapids / Emerald Rapids:
 *   "perf": perf's own formulas using the slots + topdown-* perf-metrics
 *           pseudo events (what `perf stat -M` prints; used by analyze);
 *   "gc":   the same tree from general-counter events only (TOPDOWN.SLOTS_P,
 *           TOPDOWN.*_SLOTS, IDQ_BUBBLES.CORE, UOPS_RETIRED.SLOTS, ...) for the
 *           BPF per-thread path, where bpf_perf_event_read_value() reads plain
 *           counters; metrics not redefined fall back to "perf".
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "tma/tma_recipes.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---------------- Intel Ice Lake-X, Sapphire/Emerald Rapids: general counters for the BPF path ---------------- */
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
static const struct tma_formulation icx_gc = { "gc", "general counters (TOPDOWN.SLOTS_P, TOPDOWN.BACKEND_BOUND_SLOTS, ...)", icx_gc_metrics, N(icx_gc_metrics), &tma_perf_icx, NULL };

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
#define SPR_GC_DESC "general counters (TOPDOWN.SLOTS_P, TOPDOWN.*_SLOTS, IDQ_BUBBLES.CORE, UOPS_RETIRED.SLOTS)"
static const struct tma_formulation spr_gc = { "gc", SPR_GC_DESC, spr_gc_metrics, N(spr_gc_metrics), &tma_perf_spr, NULL };
/* Emerald Rapids: perf 6.12's L1/L2 formulas and events are Sapphire Rapids' (its tree
 * differs only below Memory_Bound: no PMM_Bound), so the same general-counter nodes */
static const struct tma_formulation emr_gc = { "gc", SPR_GC_DESC, spr_gc_metrics, N(spr_gc_metrics), &tma_perf_emr, NULL };

/* ---------------- Arm Neoverse (perf sbsa.json + per-core overrides, L1) ---------------- */
static const struct tma_metric v1_metrics[] = {
	{ "frontend_bound", "Frontend_Bound", NULL, 1, 1,
	  "(100 * ((STALL_SLOT_FRONTEND / (CPU_CYCLES * 8)) - ((BR_MIS_PRED * 4) / CPU_CYCLES)))" },
	{ "bad_speculation", "Bad_Speculation", NULL, 1, 1,
	  "(100 * (((1 - (OP_RETIRED / OP_SPEC)) * (1 - (STALL_SLOT / (CPU_CYCLES * 8)))) + ((BR_MIS_PRED * 4) / CPU_CYCLES)))" },
	{ "backend_bound", "Backend_Bound", NULL, 1, 1, "100 * (stall_slot_backend / (#slots * cpu_cycles))" },
	{ "retiring", "Retiring", NULL, 1, 1, "100 * ((op_retired / op_spec) * (1 - stall_slot / (#slots * cpu_cycles)))" },
};
static const struct tma_formulation v1_perf = { "perf", "perf topdown L1 (sbsa + Neoverse V1)", v1_metrics, N(v1_metrics), NULL, NULL };

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
static const struct tma_formulation n2_perf = { "perf", "perf topdown L1 (sbsa + Neoverse N2/V2)", n2_metrics, N(n2_metrics), NULL, NULL };

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
	/* --roofline's measured FLOPs (perf's tma_info_system_gflops): libpfm4 4.13 has only the single
	 * umasks, perf's combined ones raw (tests/test_tma_perf.py checks them against perf's table) */
	{ "FP_ARITH_INST_RETIRED.SCALAR", NULL, 0x03c7, NULL, 0, -1, 0 },
	{ "FP_ARITH_INST_RETIRED.4_FLOPS", NULL, 0x18c7, NULL, 0, -1, 0 },
	{ "FP_ARITH_INST_RETIRED.8_FLOPS", NULL, 0x60c7, NULL, 0, -1, 0 },
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
static const int emr_models[] = { 0xcf, -1 };
static const int zen4_models[] = { -2, -1 };	/* -2: any model of the family */
static const int v1_parts[] = { 0xd40, -1 };
static const int n2_parts[] = { 0xd49, -1 };
static const int v2_parts[] = { 0xd4f, -1 };

/* The BPF path's --tma=3: Memory_Bound's children, and DRAM_Bound's bandwidth/latency split */
#define RUN_MEM "tma_l1_bound", "tma_l2_bound", "tma_l3_bound", "tma_dram_bound", "tma_mem_bandwidth", \
	"tma_mem_latency", "tma_store_bound"
static const char *const skl_run_deep[] = { RUN_MEM, NULL };
static const char *const pmm_run_deep[] = { RUN_MEM, "tma_pmm_bound", NULL };

#define SKL_COUNTERS .fixed_counters = 3, .gp_counters = 4, .gp_counters_smt_off = 8, .slots = 4, \
	.notes = "4 general counters per thread with SMT on, 8 with SMT off"
static const struct tma_cpu cpu_skl = {
	.name = "skylake", .desc = "Intel Skylake (client)", .vendor = TMA_INTEL, .family = 6, .models = skl_models,
	.stepping_min = -1, .stepping_max = -1, .pfm_pmu = "skl", SKL_COUNTERS, .max_level = 6, .run_max_level = 3,
	.run_deep = skl_run_deep, .perf = &tma_perf_skl, .ev = skl_ev, .nev = N(skl_ev),
};
static const struct tma_cpu cpu_skx = {
	.name = "skylakex", .desc = "Intel Skylake-X", .vendor = TMA_INTEL, .family = 6, .models = skx_models,
	.stepping_min = 0, .stepping_max = 4, .pfm_pmu = "skx", SKL_COUNTERS, .max_level = 6, .run_max_level = 3,
	.run_deep = skl_run_deep, .perf = &tma_perf_skx, .ev = skl_ev, .nev = N(skl_ev),
};
static const struct tma_cpu cpu_clx = {
	.name = "cascadelakex", .desc = "Intel Cascade Lake", .vendor = TMA_INTEL, .family = 6, .models = skx_models,
	.stepping_min = 5, .stepping_max = 15, .pfm_pmu = "clx", SKL_COUNTERS, .max_level = 6, .run_max_level = 3,
	.run_deep = pmm_run_deep, .perf = &tma_perf_clx, .ev = skl_ev, .nev = N(skl_ev),
};
static const struct tma_cpu cpu_icx = {
	.name = "icelakex", .desc = "Intel Ice Lake-X", .vendor = TMA_INTEL, .family = 6, .models = icx_models,
	.stepping_min = -1, .stepping_max = -1, .pfm_pmu = "icx", .fixed_counters = 4, .gp_counters = 8,
	.gp_counters_smt_off = 8, .slots = 5, .max_level = 6, .run_max_level = 3, .run_deep = pmm_run_deep,
	.perf = &tma_perf_icx, .gc = &icx_gc, .ev = icx_ev, .nev = N(icx_ev),
	.notes = "8 general counters; perf-metrics (slots/topdown-*) used only by analyze",
};
/* Sapphire Rapids and Emerald Rapids (Golden Cove and Raptor Cove: the same counters, and the
 * kernel drives both alike; perf 6.12's EMR event table is SPR's less the PMM events, so SPR's
 * events and libpfm4 4.13's spr table serve both: tests/test_tma_perf.py checks them against EMR's) */
#define SPR_CORE .vendor = TMA_INTEL, .family = 6, .stepping_min = -1, .stepping_max = -1, .pfm_pmu = "spr", \
	.fixed_counters = 4, .gp_counters = 8, .gp_counters_smt_off = 8, .slots = 6, .max_level = 6, \
	.run_max_level = 3, .ev = spr_ev, .nev = N(spr_ev), .mem_loads_aux = 1
#define SPR_NOTES "8 general counters; TOPDOWN.BAD_SPEC_SLOTS/BR_MISPREDICT_SLOTS only on counter 0"
static const struct tma_cpu cpu_spr = {
	.name = "sapphirerapids", .desc = "Intel Sapphire Rapids", .models = spr_models, SPR_CORE,
	.run_deep = pmm_run_deep, .perf = &tma_perf_spr, .gc = &spr_gc, .notes = SPR_NOTES,
};
static const struct tma_cpu cpu_emr = {
	.name = "emeraldrapids", .desc = "Intel Emerald Rapids", .models = emr_models, SPR_CORE,
	.run_deep = skl_run_deep, .perf = &tma_perf_emr, .gc = &emr_gc,
	.notes = SPR_NOTES "; encodings from libpfm4's spr table (4.13 has no Emerald Rapids PMU)",
};
static const struct tma_cpu cpu_zen4 = {
	.name = "amdzen4", .desc = "AMD Zen 4", .vendor = TMA_AMD, .family = 0x19, .models = zen4_models,
	.stepping_min = -1, .stepping_max = -1, .pfm_pmu = "amd64_fam19h_zen4", .fixed_counters = 0,
	.gp_counters = 6, .gp_counters_smt_off = 6, .slots = 6, .max_level = 2, .run_max_level = 2,
	.perf = &tma_perf_zen4, .ev = zen4_ev, .nev = N(zen4_ev), .notes = "6 general counters, no fixed counters",
};
static const struct tma_cpu cpu_zen5 = {
	.name = "amdzen5", .desc = "AMD Zen 5", .vendor = TMA_AMD, .family = 0x1a, .models = zen4_models,
	.stepping_min = -1, .stepping_max = -1, .fixed_counters = 0, .gp_counters = 6, .gp_counters_smt_off = 6,
	.slots = 8, .max_level = 2, .run_max_level = 2, .perf = &tma_perf_zen5, .ev = zen5_ev, .nev = N(zen5_ev),
	.notes = "6 general counters; libpfm4 4.13 has no Zen 5 table, encodings are raw",
};
#define ARM_CPU .vendor = TMA_ARM, .family = 0x41, .stepping_min = -1, .stepping_max = -1, .fixed_counters = 1, \
	.gp_counters = 6, .gp_counters_smt_off = 6, .max_level = 1, .run_max_level = 1, .ev = arm_ev, \
	.nev = N(arm_ev), .notes = "6 general counters + cycle counter; architected event numbers"
static const struct tma_cpu cpu_v1 = {
	.name = "neoverse-v1", .desc = "Arm Neoverse V1", .models = v1_parts, .slots = 8, .perf = &v1_perf, ARM_CPU,
};
static const struct tma_cpu cpu_n2 = {
	.name = "neoverse-n2", .desc = "Arm Neoverse N2", .models = n2_parts, .slots = 5, .perf = &n2_perf, ARM_CPU,
};
static const struct tma_cpu cpu_v2 = {
	.name = "neoverse-v2", .desc = "Arm Neoverse V2", .models = v2_parts, .slots = 8, .perf = &n2_perf, ARM_CPU,
};

const struct tma_cpu *const tma_cpus[] = {
	&cpu_skl, &cpu_skx, &cpu_clx, &cpu_icx, &cpu_spr, &cpu_emr, &cpu_zen4, &cpu_zen5, &cpu_v1, &cpu_n2,
	&cpu_v2,
};
const int tma_ncpus = N(tma_cpus);

const struct tma_cpu *tma_cpu_by_name(const char *name)
{
	if (!name)
		return NULL;
	for (int i = 0; i < tma_ncpus; i++)
		if (!strcasecmp(tma_cpus[i]->name, name))
			return tma_cpus[i];
	return NULL;
}

const char *tma_cpu_name(const struct tma_cpu *c)
{
	return c ? c->name : "none";
}

const char *tma_cpu_names(void)
{
	static char buf[256];

	if (!buf[0])
		for (int i = 0; i < tma_ncpus; i++)
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", i ? ", " : "", tma_cpus[i]->name);
	return buf;
}
