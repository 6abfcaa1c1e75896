// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * --roofline's measured FLOPs with a PMU, which this host has not: a report built here as a
 * Sapphire Rapids run would hand it (the events tma_flops_append plans, a probed cblas_sgemm's
 * counter deltas, one of them multiplexed, its roofline row) gives, in JSON and text, the FLOPs of
 * perf's tma_info_system_gflops (FP_ARITH_INST_RETIRED.SCALAR x 1, 512B_PACKED_SINGLE x 16 lanes,
 * scaled by enabled/running) beside the analytic ones; without a PMU, on a CPU perf has no FLOPs
 * metric for (Zen 4), with an event not counted and with no --uprobe'd known entry, no figure and
 * the reason, never a 0.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "section_render.h"
#include "output/report_sections.h"
#include "pmu/key_encode.h"
#include "tma/tma.h"

static struct event_list evs;
static struct host_info host = { .cpu = "Test CPU", .ncpus = 2, .ncpus_online = 2, .pmu = true };
static struct report rep;
static struct uprobe_set uset;
static struct roofline_result rl;
static struct roofline_row row = { .func = "cblas_sgemm", .pid = 7, .m = 8, .n = 8, .k = 16, .elem = 4,
				   .calls = 3, .wall_ns = 2000000000ULL, .flops = 2048, .bytes = 1536 };
static struct func_row frow = { .key = { .fn = 0, .tid = 7 },
				.s = { .pid = 7, .calls = 3, .returns = 3, .wall_ns = 2000000000ULL } };

static int event_index(const char *name)
{
	for (int e = 0; e < evs.n; e++)
		if (!strcmp(evs.ev[e].name, name))
			return e;
	return -1;
}

static void roofline_text(const struct report *r, FILE *f, int width)
{
	report_roofline_text(r, f, 10, width);
}

static char *render(bool json)
{
	return section_render(&rep, json ? report_roofline_json : NULL, roofline_text, 1000);
}

static void missing(const char *what, const char *want)
{
	char *js = render(true), *tx = render(false);
	const char *p = strstr(js, "\"measured_flops_missing\":\"");

	check(strstr(js, "\"measured_flops\":[]") && p && !strncmp(p + 26, want, strlen(want)),
	      "%s: no measured FLOPs, the reason '%s...' in the JSON", what, want);
	check(host.pmu ? strstr(tx, "measured FLOPs: ") && strstr(tx, want) : !strstr(tx, "measured FLOPs"),
	      "%s: the text %s", what, host.pmu ? "says why in one line" : "claims nothing (the host's line says why)");
	free(js);
	free(tx);
}

int main(void)
{
	const struct tma_cpu *spr = tma_cpu_by_name("sapphirerapids");
	char err[256];
	int n = spr ? tma_flops_append(spr, &evs, err, sizeof(err)) : -1;
	int scalar = event_index("FP_ARITH_INST_RETIRED.SCALAR"), p512 = event_index("FP_ARITH_INST_RETIRED.512B_PACKED_SINGLE");

	check(n == 10 && scalar >= 0 && p512 >= 0, "sapphirerapids: the 10 events of perf's FLOPs metric planned (%d)", n);
	if (n != 10 || scalar < 0 || p512 < 0)
		return check_exit();
	for (int e = 0; e < evs.n; e++)
		frow.s.c[e] = (struct counter_val){ .value = 0, .enabled = 1000, .running = 1000 };
	/* 1000 scalar ops over half the time (2000 scaled), 10 512-bit single-precision ops (x16 lanes) */
	frow.s.c[scalar] = (struct counter_val){ .value = 1000, .enabled = 2000, .running = 1000 };
	frow.s.c[p512] = (struct counter_val){ .value = 10, .enabled = 1000, .running = 1000 };
	uset.nr_libs = 1;
	uset.libs[0].module = "/usr/lib/libopenblas.so.0";
	uset.nr_funcs = 1;
	uset.funcs = calloc(1, sizeof(*uset.funcs));
	uset.funcs[0].symbol = "cblas_sgemm";
	rl.rows = &row;
	rl.nrows = 1;
	rl.calls = 3;
	snprintf(rl.roofs_note, sizeof(rl.roofs_note), "no roofs");
	roofline_judge(&rl);
	rep = (struct report){ .host = &host, .recipe = "sapphirerapids", .evs = &evs, .uset = &uset, .frows = &frow,
			       .nfrows = 1, .roofline = &rl };

	char *js = render(true), *tx = render(false);
	const char *m = strstr(js, "\"measured_flops\":[{");
	check(m && strstr(m, "\"function\":\"cblas_sgemm\"") && num_after(m, "pid") == 7 && num_after(m, "calls") == 3,
	      "JSON: one measured row, cblas_sgemm pid 7, 3 calls");
	check(num_after(m, "analytic_flops") == 2048 && fabs(num_after(m, "flops") - 2160) < 1e-6 &&
	      fabs(num_after(m, "gflop_per_s") - 2160 / 1e9 / 2) < 1e-15,
	      "JSON: 2048 analytic FLOPs; measured 2000 x 1 + 10 x 16 = 2160 (%g), %g GFLOP/s over 2 s",
	      num_after(m, "flops"), num_after(m, "gflop_per_s"));
	check(strstr(js, "\"measured_flops_formula\":\"perf's tma_info_system_gflops") && strstr(js, "FMA counts twice") &&
	      strstr(js, "masked-out lane"), "JSON: the formula and its caveats");
	check(strstr(tx, "measured FLOPs of cblas_sgemm (pid 7): 2.16 KFLOP counted, 2.05 KFLOP from its arguments (1.05 x)") &&
	      strstr(tx, "FMA counts twice"), "text: the measured FLOPs beside the analytic ones, the caveats");
	free(js);
	free(tx);

	evs.n--;	/* the last FLOPs event not counted */
	missing("an event not counted", "FP_ARITH_INST_RETIRED2.512B_PACKED_HALF was not counted");
	evs.n++;
	rep.recipe = "amdzen4";
	missing("Zen 4", "no FLOPs metric of perf 6.12 for amdzen4");
	rep.recipe = "sapphirerapids";
	rep.nfrows = 0;
	missing("--roofline without --uprobe", "no --uprobe'd known entry was called");
	rep.nfrows = 1;
	host.pmu = false;
	missing("no PMU", "no hardware PMU on this host");
	free(uset.funcs);
	return check_exit();
}
