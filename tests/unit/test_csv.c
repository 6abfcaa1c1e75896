// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* perf stat -x, CSV parser and `tmabpf analyze` on fixtures in tests/data
 * (written as perf 6.x prints them). Run from the repository root. */
#include <math.h>
#include <unistd.h>
#include <fcntl.h>
#include "test_tma_refjson.h"
#include "perf_csv.h"
#include "cmd_analyze.h"
#include "tma.h"

static struct perf_csv csv;

/* run cmd_analyze with stdout/stderr captured */
static int analyze(char *out, size_t outlen, char *errout, size_t errlen, const char *a1, const char *a2,
		   const char *a3, const char *a4, const char *a5, const char *a6)
{
	char *argv[8] = { "analyze" };
	int argc = 1;
	const char *a[] = { a1, a2, a3, a4, a5, a6 };
	for (int i = 0; i < 6 && a[i]; i++)
		argv[argc++] = (char *)a[i];
	char o[] = "/tmp/tmabpf_test_csv_outXXXXXX", e[] = "/tmp/tmabpf_test_csv_errXXXXXX";
	int fo = mkstemp(o), fe = mkstemp(e);
	fflush(stdout);
	fflush(stderr);
	int so = dup(1), se = dup(2);
	dup2(fo, 1);
	dup2(fe, 2);
	int rc = cmd_analyze(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	lseek(fo, 0, SEEK_SET);
	lseek(fe, 0, SEEK_SET);
	ssize_t n = read(fo, out, outlen - 1);
	out[n > 0 ? n : 0] = 0;
	n = read(fe, errout, errlen - 1);
	errout[n > 0 ? n : 0] = 0;
	close(fo);
	close(fe);
	unlink(o);
	unlink(e);
	return rc;
}

static double jget(const char *json, const char *key)
{
	char pat[128];
	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	const char *p = strstr(json, pat);
	if (!p) {
		snprintf(pat, sizeof(pat), "\"%s\":", key);
		p = strstr(json, pat);
	}
	if (!p)
		return -12345;
	p += strlen(pat);
	while (*p == ' ')
		p++;
	if (!strncmp(p, "null", 4))
		return NAN;
	return atof(p);
}

int main(void)
{
	char err[512], out[16384], eo[2048];
	int r, i;

	/* fixtures are relative to the repository root; allow running from build/tests */
	if (access("tests/data/skx_llm_decode.csv", R_OK) != 0 && chdir("../..") != 0)
		return 1;

	r = perf_csv_load("tests/data/skx_llm_decode.csv", &csv, err, sizeof(err));
	CHECK(r == 0 && csv.n == 26, "skx fixture: 26 events (%d) %s", csv.n, r ? err : "");
	i = perf_csv_find(&csv, "cpu/L1D_PEND_MISS.FB_FULL,cmask=1/");
	CHECK(i >= 0 && csv.ev[i].value == 1e7 && csv.ev[i].pct == 50 && csv.ev[i].run_ns == 1000256174,
	      "event name with an unquoted comma kept whole, value/run-time/percent-running read");
	i = perf_csv_find(&csv, "INST_RETIRED.ANY");
	CHECK(i >= 0 && csv.ev[i].value == 6e8 && csv.nmetric == 0, "metric columns on an event line ('insn per cycle' is not a TMA metric)");

	r = perf_csv_load("tests/data/spr_topdown_l2.csv", &csv, err, sizeof(err));
	CHECK(r == 0 && csv.n == 11 && csv.nmetric == 12, "perf -M TopdownL2 CSV: 11 events, 12 metric values (%d, %d)", csv.n, csv.nmetric);
	CHECK(csv.nmetric && !strcmp(csv.metric[0].name, "tma_backend_bound") && csv.metric[0].value == 65.0,
	      "metric from the event line's metric columns");
	CHECK(csv.nmetric > 1 && !strcmp(csv.metric[1].name, "tma_frontend_bound"), "metric-only continuation line ,,,,,V,UNIT");

	r = perf_csv_load("tests/data/zen4_not_counted.csv", &csv, err, sizeof(err));
	i = perf_csv_find(&csv, "ex_ret_brn_misp");
	CHECK(r == 0 && i >= 0 && csv.ev[i].not_counted && csv.ev[i].value == 0, "<not counted> (interval -I prefix)");
	i = perf_csv_find(&csv, "resyncs_or_nc_redirects");
	CHECK(i >= 0 && csv.ev[i].not_supported, "<not supported>");
	i = perf_csv_find(&csv, "cpu/de_no_dispatch_per_slot.no_ops_from_frontend,cmask=0x6/");
	CHECK(i >= 0 && csv.ev[i].value == 5e7, "interval prefix + comma in event name");

	r = perf_csv_load("tests/data/per_cpu_raw.csv", &csv, err, sizeof(err));
	i = perf_csv_find(&csv, "cycles");
	CHECK(r == 0 && i >= 0 && csv.ev[i].value == 1e9 && csv.ev[i].lines == 2, "-A per-CPU lines summed");
	i = perf_csv_find(&csv, "cpu/event=0x3c,umask=0x0,cmask=1,inv/");
	CHECK(i >= 0 && csv.ev[i].value == 200, "raw pmu/event=..,umask=..,cmask=..,inv/ name with 3 commas");
	i = perf_csv_find(&csv, "page-faults");
	CHECK(i >= 0 && csv.ev[i].value == 76, "'K/sec' metric unit with a slash does not confuse the parser");
	i = perf_csv_find(&csv, "task-clock");
	CHECK(i >= 0 && csv.ev[i].value == 1.0, "msec unit, fractional count");

	r = perf_csv_load("tests/data/bad_line.csv", &csv, err, sizeof(err));
	CHECK(r != 0 && strstr(err, "bad_line.csv: line 3, column 1:"), "bad line: position in message: %s", err);
	r = perf_csv_parse("1,,a,1,100.00,,\n5,,b,abc,100,,\n", 31, &csv, err, sizeof(err));
	CHECK(r != 0 && strstr(err, "line 2"), "non-numeric run-time column rejected: %s", err);
	r = perf_csv_parse("\n\n# comment\n", 12, &csv, err, sizeof(err));
	CHECK(r == 0 && csv.n == 0, "blank and # lines ignored");
	r = perf_csv_parse("12,,cpu/event=0x3c,umask=1\n", 27, &csv, err, sizeof(err));
	CHECK(r != 0, "unterminated pmu/ name rejected: %s", err);

	/* analyze end to end */
	r = analyze(out, sizeof(out), eo, sizeof(eo), "tests/data/skx_llm_decode.csv", "--cpu", "skylakex", "--json", NULL, NULL);
	CHECK(r == 0, "analyze skx --json exit 0 %s", eo);
	CHECK(fabs(jget(out, "tma_mem_bandwidth") - 60) < 1e-9 && fabs(jget(out, "tma_mem_latency") - 20) < 1e-9 &&
	      fabs(jget(out, "tma_frontend_bound") - 10) < 1e-9, "analyze skx --json values (level 3 detected)");
	r = analyze(out, sizeof(out), eo, sizeof(eo), "tests/data/skx_llm_decode.csv", "--cpu=skylakex", "--tma=1", NULL, NULL, NULL);
	CHECK(r == 0 && strstr(out, "Backend_Bound") && strstr(out, "Bottleneck: Backend_Bound 69.0%") &&
	      strstr(out, "[multiplexed"), "analyze text: tree, bottleneck path, multiplexed marks");
	r = analyze(out, sizeof(out), eo, sizeof(eo), "tests/data/spr_topdown_l2.csv", "--cpu", "sapphirerapids", NULL, NULL, NULL);
	CHECK(r == 0 && strstr(out, "12 agree, 0 differ") && strstr(out, "Bottleneck: Backend_Bound 65.0% \xe2\x80\xba Memory_Bound 55.0%"),
	      "analyze perf's own topdown CSV: all 12 printed metrics agree");
	r = analyze(out, sizeof(out), eo, sizeof(eo), "tests/data/spr_topdown_l2.csv", "--cpu", "sapphirerapids", "--json", NULL, NULL);
	CHECK(r == 0 && isnan(jget(out, "tma_l1_bound") + 0) == 0 && jget(out, "tma_l1_bound") == -12345 &&
	      fabs(jget(out, "tma_backend_bound") - 65) < 1e-9, "analyze --json only has the level the CSV supports");
	r = analyze(out, sizeof(out), eo, sizeof(eo), "tests/data/zen4_not_counted.csv", "--cpu", "amdzen4", "--json", NULL, NULL);
	CHECK(r == 0 && fabs(jget(out, "backend_bound") - 50) < 1e-9 && isnan(jget(out, "bad_speculation_mispredicts")),
	      "analyze zen4: <not supported> gives null, values in percent");
	r = analyze(out, sizeof(out), eo, sizeof(eo), "tests/data/skx_llm_decode.csv", "--cpu", "skylakex", "--smt", "on", "--json");
	CHECK(r == 0 && isnan(jget(out, "tma_frontend_bound")), "--smt on with --core-wide yes needs THREAD_ANY: null without it");
	r = analyze(out, sizeof(out), eo, sizeof(eo), "tests/data/skx_llm_decode.csv", "--cpu", "skylakex", "--core-wide", "no", NULL);
	CHECK(r == 0 && strstr(out, "#core_wide=0"), "--core-wide no");

	/* errors: one line, exit 2 */
	r = analyze(out, sizeof(out), eo, sizeof(eo), "tests/data/bad_line.csv", "--cpu", "skylakex", NULL, NULL, NULL);
	CHECK(r == 2 && strstr(eo, "line 3, column 1") && strchr(eo, '\n') == eo + strlen(eo) - 1, "bad CSV line: exit 2, one line: %s", eo);
	r = analyze(out, sizeof(out), eo, sizeof(eo), "tests/data/skx_llm_decode.csv", "--cpu", "pentium", NULL, NULL, NULL);
	CHECK(r == 2 && strstr(eo, "unknown CPU name 'pentium'"), "unknown CPU name: exit 2: %s", eo);
	r = analyze(out, sizeof(out), eo, sizeof(eo), "tests/data/nope.csv", "--cpu", "skylakex", NULL, NULL, NULL);
	CHECK(r == 2 && strstr(eo, "nope.csv"), "missing file: exit 2");
	r = analyze(out, sizeof(out), eo, sizeof(eo), "tests/data/per_cpu_raw.csv", "--cpu", "skylakex", NULL, NULL, NULL);
	CHECK(r == 2 && strstr(eo, "none of the events"), "CSV without TMA events: exit 2: %s", eo);
	r = analyze(out, sizeof(out), eo, sizeof(eo), "tests/data/skx_llm_decode.csv", "--bogus", NULL, NULL, NULL, NULL);
	CHECK(r == 2 && strstr(eo, "unknown option"), "unknown option: exit 2");
	r = analyze(out, sizeof(out), eo, sizeof(eo), "tests/data/skx_llm_decode.csv", "--smt", "maybe", NULL, NULL, NULL);
	CHECK(r == 2 && strstr(eo, "--smt"), "bad --smt value: exit 2");
	return t_done();
}
