// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* -e parsing: software names, rHEX, sysfs pmu/terms/, libpfm4 names for a
 * chosen CPU (perf JSON dotted and libpfm4 NAME:UMASK spellings), built-in
 * cpu/ formats when the host has no cpu PMU, errors with positions. */
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

#define CHECK(cond, ...) check((cond), __VA_ARGS__)
#include "pmu/events.h"
#include "pmu/cpu_detect.h"

static struct event_desc d;
static char err[512];
static const struct tma_cpu *cpu;	/* the CPU event names are for (NULL: none) */

static int one(const char *tok)
{
	memset(&d, 0, sizeof(d));
	err[0] = 0;
	return events_parse_one(tok, cpu, &d, err, sizeof(err));
}

static void test_detect(void)
{
	char desc[256], why[256];
	const struct tma_cpu *c;
	c = tma_cpu_detect_text("vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\nmodel name\t: Intel Xeon\nstepping\t: 8\n",
				false, desc, sizeof(desc), why, sizeof(why));
	CHECK(c && !strcmp(tma_cpu_name(c), "sapphirerapids") && strstr(desc, "model 143"), "detect SPR: %s", desc);
	c = tma_cpu_detect_text("vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\nstepping\t: 7\n", false, desc, sizeof(desc), why, sizeof(why));
	CHECK(c && !strcmp(tma_cpu_name(c), "cascadelakex"), "detect CLX (model 85 stepping 7)");
	c = tma_cpu_detect_text("vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\nstepping\t: 4\n", false, desc, sizeof(desc), why, sizeof(why));
	CHECK(c && !strcmp(tma_cpu_name(c), "skylakex"), "detect SKX (model 85 stepping 4)");
	c = tma_cpu_detect_text("vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 151\nstepping\t: 2\n", false, desc, sizeof(desc), why, sizeof(why));
	CHECK(!c && strstr(why, "hybrid") && strstr(desc, "hybrid"), "detect hybrid Alder Lake: %s", why);
	c = tma_cpu_detect_text("vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\nstepping\t: 8\n", true, desc, sizeof(desc), why, sizeof(why));
	CHECK(!c && strstr(why, "hybrid"), "cpu_core/cpu_atom PMUs reported as hybrid");
	c = tma_cpu_detect_text("vendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nstepping\t: 1\n", false, desc, sizeof(desc), why, sizeof(why));
	CHECK(c && !strcmp(tma_cpu_name(c), "amdzen4"), "detect Zen 4 (family 0x19)");
	c = tma_cpu_detect_text("vendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\n", false, desc, sizeof(desc), why, sizeof(why));
	CHECK(c && !strcmp(tma_cpu_name(c), "amdzen5"), "detect Zen 5 (family 0x1a)");
	c = tma_cpu_detect_text("processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd4f\n", false, desc, sizeof(desc), why, sizeof(why));
	CHECK(c && !strcmp(tma_cpu_name(c), "neoverse-v2"), "detect Neoverse V2 from MIDR part");
	c = tma_cpu_detect_text("vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 167\nstepping\t: 1\n", false, desc, sizeof(desc), why, sizeof(why));
	CHECK(!c && strstr(why, "no TMA recipe") && strstr(desc, "model 167"), "no recipe for Rocket Lake: %s", why);
	CHECK(tma_cpu_by_name("SapphireRapids") && !tma_cpu_by_name("pentium4"), "tma_cpu_by_name");
	for (int i = 0; i < tma_ncpus; i++)
		CHECK(tma_cpu_by_name(tma_cpus[i]->name) == tma_cpus[i], "by name: %s", tma_cpus[i]->name);
}

int main(void)
{
	static struct event_list l;

	CHECK(one("page-faults") == 0 && d.attr.type == PERF_TYPE_SOFTWARE && d.attr.config == PERF_COUNT_SW_PAGE_FAULTS, "software name");
	CHECK(one("cs") == 0 && d.attr.config == PERF_COUNT_SW_CONTEXT_SWITCHES, "software alias");
	CHECK(one("r01c2") == 0 && d.attr.type == PERF_TYPE_RAW && d.attr.config == 0x1c2, "raw rUUEE");
	CHECK(one("r01zz") != 0 && strstr(err, "rHEX"), "bad raw: %s", err);
	if (access("/sys/bus/event_source/devices/msr/type", R_OK) == 0)
		CHECK(one("msr/tsc/") == 0 && !strcmp(d.pmu, "msr"), "msr/tsc/ through sysfs");

	cpu = tma_cpu_by_name("skylakex");
	CHECK(one("core_power.lvl2_turbo_license") == 0 && d.attr.type == PERF_TYPE_RAW && d.attr.config == 0x2028 &&
	      d.attr.exclude_guest && !d.attr.exclude_kernel && !d.attr.exclude_user,
	      "libpfm4: core_power.lvl2_turbo_license on skylakex = 0x2028 (%s)", err);
	CHECK(one("mem_load_l3_miss_retired.local_dram") == 0 && d.attr.config == 0x1d3, "libpfm4: perf JSON dotted name, lower case");
	CHECK(one("MEM_LOAD_L3_MISS_RETIRED:LOCAL_DRAM") == 0 && d.attr.config == 0x1d3, "libpfm4: NAME:UMASK spelling");
	CHECK(one("Mem_Load_L3_Miss_Retired.Local_Dram") == 0 && d.attr.config == 0x1d3, "case-insensitive");
	CHECK(one("UOPS_RETIRED.MACRO_FUSED") == 0 && d.attr.config == 0x4c2, "recipe table covers libpfm4 gaps (MACRO_FUSED)");
	CHECK(one("cpu/event=0x3c,umask=0x0,cmask=1,inv/") == 0 && d.attr.type == PERF_TYPE_RAW &&
	      d.attr.config == (0x3c | 1ULL << 24 | 1ULL << 23), "built-in Intel cpu/ format (--cpu set, no sysfs needed)");
	CHECK(one("cpu/event=0xd1,umask=0x1,any=1,edge/") == 0 && d.attr.config == (0x1d1 | 1ULL << 21 | 1ULL << 18), "any/edge terms");
	CHECK(one("cpu/CYCLE_ACTIVITY.STALLS_L1D_MISS,cmask=2/") == 0 && d.attr.config == (0xca3 | 2ULL << 24),
	      "cpu/NAME,cmask=N/: named event with an overriding term (0x%llx)", (unsigned long long)d.attr.config);
	CHECK(one("cpu/bogus=1/") != 0 && strstr(err, "unknown term 'bogus'"), "unknown term: %s", err);
	CHECK(one("not_an_event.at_all") != 0 && strstr(err, "unknown event 'not_an_event.at_all' for CPU skylakex"), "unknown event names the CPU: %s", err);
	l.n = 0;
	int r = events_parse_list("page-faults,bogus_ev,cycles", cpu, &l, err, sizeof(err));
	CHECK(r != 0 && strstr(err, "character 13") && strstr(err, "bogus_ev"), "-e list error gives the position: %s", err);
	l.n = 0;
	r = events_parse_list("cpu/event=0x3c,umask=0x0/,page-faults", cpu, &l, err, sizeof(err));
	CHECK(r == 0 && l.n == 2 && !strcmp(l.ev[0].name, "cpu/event=0x3c,umask=0x0/"), "commas inside cpu/../ do not split the list");

	/* perf's modifiers: privilege filters, guest/host, precision; part of the event's identity */
	CHECK(one("instructions:u") == 0 && d.attr.type == PERF_TYPE_HARDWARE && d.attr.exclude_kernel && d.attr.exclude_hv &&
	      !d.attr.exclude_user && d.attr.exclude_guest && !strcmp(d.name, "instructions:u"), ":u counts user mode only");
	CHECK(one("cycles:k") == 0 && d.attr.exclude_user && !d.attr.exclude_kernel && d.attr.exclude_hv, ":k");
	CHECK(one("cycles:uk") == 0 && !d.attr.exclude_user && !d.attr.exclude_kernel && d.attr.exclude_hv, ":uk");
	CHECK(one("cycles:h") == 0 && d.attr.exclude_user && d.attr.exclude_kernel && !d.attr.exclude_hv, ":h");
	CHECK(one("cycles:G") == 0 && d.attr.exclude_host && !d.attr.exclude_guest && !d.attr.exclude_user, ":G guest only");
	CHECK(one("cycles:H") == 0 && d.attr.exclude_guest && !d.attr.exclude_host, ":H host only");
	CHECK(one("cycles:GH") == 0 && !d.attr.exclude_guest && !d.attr.exclude_host, ":GH both");
	CHECK(one("cycles:uG") == 0 && !d.attr.exclude_guest && d.attr.exclude_host && d.attr.exclude_kernel, ":uG");
	CHECK(one("cycles:p") == 0 && d.attr.precise_ip == 1, ":p");
	CHECK(one("cycles:upp") == 0 && d.attr.precise_ip == 2 && d.attr.exclude_kernel, ":upp");
	CHECK(one("cycles:ppp") == 0 && d.attr.precise_ip == 3, ":ppp");
	CHECK(one("cycles:pppp") != 0 && strstr(err, "at most :ppp"), ":pppp refused: %s", err);
	CHECK(one("cycles:x") != 0 && strstr(err, "unknown modifier 'x'"), "unknown modifier named: %s", err);
	CHECK(one("cycles:ux") != 0 && strstr(err, "unknown modifier 'x'"), "unknown modifier after a good one: %s", err);
	CHECK(one(":u") != 0 && strstr(err, "no event before"), "modifiers alone: %s", err);
	CHECK(one("r01c2:k") == 0 && d.attr.config == 0x1c2 && d.attr.exclude_user, "raw event with a modifier");
	CHECK(one("cpu/event=0x3c/u") == 0 && d.attr.config == 0x3c && d.attr.exclude_kernel, "pmu/.../MODS");
	CHECK(one("cpu/event=0x3c/:k") == 0 && d.attr.config == 0x3c && d.attr.exclude_user, "pmu/.../:MODS");
	CHECK(one("INST_RETIRED:ANY_P:u") == 0 && d.attr.config == 0xc0 && d.attr.exclude_kernel,
	      "libpfm4 NAME:UMASK keeps its colon, then :u (0x%llx)", (unsigned long long)d.attr.config);
	l.n = 0;
	r = events_parse_list("instructions:u,instructions:k,instructions,instructions:u", cpu, &l, err, sizeof(err));
	CHECK(r == 0 && l.n == 3 && l.ev[0].attr.exclude_kernel && l.ev[1].attr.exclude_user && !l.ev[2].attr.exclude_user,
	      "events differing only in modifiers are distinct; an exact repeat is merged (%d events)", l.n);
	l.n = 0;
	r = events_parse_list("page-faults,{instructions,cycles:k}:u,branches", cpu, &l, err, sizeof(err));
	CHECK(r == 0 && l.n == 4 && l.ev[1].group == 1 && l.ev[1].leader && l.ev[2].group == 1 && !l.ev[2].leader &&
	      l.ev[0].group < 0 && l.ev[3].group < 0 && !strcmp(l.ev[1].name, "instructions:u") &&
	      !strcmp(l.ev[2].name, "cycles:ku") && l.ev[2].attr.exclude_kernel == 0 && l.ev[1].attr.exclude_kernel,
	      "{group}:u: one group, its leader first, modifiers joined to each member's (%s)", err);
	l.n = 0;
	CHECK(events_parse_list("{instructions,instructions}", cpu, &l, err, sizeof(err)) != 0 && strstr(err, "twice"),
	      "the same event twice in a group: %s", err);
	l.n = 0;
	CHECK(events_parse_list("{instructions,cycles", cpu, &l, err, sizeof(err)) != 0 && strstr(err, "malformed group"),
	      "unclosed group: %s", err);
	l.n = 0;
	CHECK(events_parse_list("{instructions,{cycles}}", cpu, &l, err, sizeof(err)) != 0, "nested groups refused: %s", err);

	cpu = tma_cpu_by_name("amdzen4");
	CHECK(one("cpu/event=0x1a0,umask=0x1/") == 0 && d.attr.config == 0x1000001a0ULL, "built-in AMD format: event bits 32-35");
	CHECK(one("ls_not_halted_cyc") == 0 && d.attr.config == 0x76, "AMD recipe name (perf spelling) -> libpfm4 CYCLES_NOT_IN_HALT");
	CHECK(one("RETIRED_OPS") == 0 && d.attr.config == 0xc1, "AMD libpfm4 name");
	cpu = tma_cpu_by_name("amdzen5");
	CHECK(one("de_no_dispatch_per_slot.backend_stalls") == 0 && d.attr.config == 0x100001ea0ULL, "Zen 5 (no libpfm4 table): recipe raw encoding");
	cpu = tma_cpu_by_name("neoverse-v2");
	CHECK(one("cpu/event=0x11/") == 0 && d.attr.config == 0x11, "built-in Arm format");
	CHECK(one("STALL_SLOT_BACKEND") == 0 && d.attr.config == 0x3d, "Arm architected name");
	cpu = tma_cpu_by_name("sapphirerapids");
	CHECK(one("topdown.backend_bound_slots") == 0 && d.attr.config == 0x2a4, "SPR TOPDOWN.BACKEND_BOUND_SLOTS = 0xa4/0x02 (JSON), not libpfm4's 0x0200");
	CHECK(one("slots") != 0, "perf-metrics pseudo event 'slots' is refused");
	test_detect();
	return check_exit();
}
