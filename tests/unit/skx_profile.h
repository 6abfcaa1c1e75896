/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Unit tests' reference counts: a Skylake-X memory-bound LLM decode profile
 * (Backend_Bound > Memory_Bound > DRAM_Bound > MEM_Bandwidth), made up to
 * exercise the formulas, never a hardware reading.  NULL-terminated. */
#ifndef TMABPF_TEST_SKX_PROFILE_H
#define TMABPF_TEST_SKX_PROFILE_H

struct kv { const char *k; double v; };

#define CLK 1e9
/* Skylake-X, SMT off, core-wide (perf stat -a): slots = 4 * clk */
static const struct kv skx_llm_decode[] = {
	{ "CPU_CLK_UNHALTED.THREAD", CLK }, { "CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE", 2.5e7 }, { "CPU_CLK_UNHALTED.REF_XCLK", 2.5e7 },
	{ "INST_RETIRED.ANY", 6e8 }, { "IDQ_UOPS_NOT_DELIVERED.CORE", 4e8 }, { "IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE", 6e7 },
	{ "UOPS_ISSUED.ANY", 8e8 }, { "UOPS_RETIRED.RETIRE_SLOTS", 7e8 }, { "UOPS_RETIRED.MACRO_FUSED", 5e7 },
	{ "INT_MISC.RECOVERY_CYCLES", 1e7 }, { "BR_MISP_RETIRED.ALL_BRANCHES", 1e6 }, { "MACHINE_CLEARS.COUNT", 1e5 },
	{ "CYCLE_ACTIVITY.STALLS_MEM_ANY", 7e8 }, { "EXE_ACTIVITY.BOUND_ON_STORES", 2e7 }, { "CYCLE_ACTIVITY.STALLS_TOTAL", 8e8 },
	{ "EXE_ACTIVITY.1_PORTS_UTIL", 5e7 }, { "EXE_ACTIVITY.2_PORTS_UTIL", 4e7 },
	{ "CYCLE_ACTIVITY.STALLS_L1D_MISS", 6.5e8 }, { "CYCLE_ACTIVITY.STALLS_L2_MISS", 5.6e8 }, { "CYCLE_ACTIVITY.STALLS_L3_MISS", 5e8 },
	{ "MEM_LOAD_RETIRED.L2_HIT", 1e6 }, { "MEM_LOAD_RETIRED.FB_HIT", 2e5 }, { "MEM_LOAD_RETIRED.L1_MISS", 5e6 },
	{ "cpu/L1D_PEND_MISS.FB_FULL,cmask=1/", 1e7 },
	{ "cpu/OFFCORE_REQUESTS_OUTSTANDING.ALL_DATA_RD,cmask=4/", 6e8 }, { "OFFCORE_REQUESTS_OUTSTANDING.CYCLES_WITH_DATA_RD", 8e8 },
	{ NULL, 0 },
};

#endif
