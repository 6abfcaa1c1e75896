// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* perf stat -x, CSV parser and `tmabpf analyze` on fixtures in tests/data
 * (written as perf 6.x prints them). Run from the repository root. */
#include <math.h>
#include <unistd.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "cmd/perf_csv.h"
#include "cmd/cmd_analyze.h"
#include "tma/tma.h"
#include "skx_profile.h"

#define CHECK(cond, ...) check((cond), __VA_ARGS__)

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

/* exit status of 'analyze PATH --cpu skylakex', stderr in err without its newline */
static int analyze_status(const char *path, char *err, size_t errlen)
{
	static char out[65536];
	int r = analyze(out, sizeof(out), err, errlen, path, "--cpu", "skylakex", NULL, NULL, NULL);
	size_t l = strlen(err);
	if (l && err[l - 1] == '\n')
		err[l - 1] = 0;
	return r;
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

/* parse text; 0 when it parses, else err must hold every needle */
static bool refused(const char *text, size_t len, const char *n1, const char *n2)
{
	char err[512] = "";
	int r = perf_csv_parse(text, len, &csv, err, sizeof(err));
	bool ok = r != 0 && strstr(err, n1) && (!n2 || strstr(err, n2));
	if (!ok)
		printf("# parse gave %d: %s\n", r, err);
	return ok;
}

#define TXT(s) s, sizeof(s) - 1

/* issue 15's bad-input list (and issue 22's analyze cases): read correctly or refused naming line and fix */
static void bad_inputs(void)
{
	char err[512];
	int r, i;

	CHECK(refused(TXT(""), "line 1", "empty file: no counter lines; record with: perf stat -x, -o FILE"), "empty file refused with the fix");
	CHECK(refused(TXT("# started on Mon\n\n"), "line 2", "only comments and blank lines"), "a file of comments only refused");
	CHECK(refused(TXT("1000,,cycles,5,100.00,,\n\x7f" "ELF\x02\x01\x01\x00\x00\n"), "line 2, column 5", "binary data"),
	      "binary garbage (an ELF header, a NUL byte) refused at its line and column");
	CHECK(refused(TXT("%  tma_frontend_bound,%  tma_backend_bound,insn per cycle,\n12.0,60.0,1.5,\n"), "line 1",
		      "--metric-only output has no counts"), "perf stat --metric-only output refused with the fix");
	CHECK(refused(TXT("1000,,cycles,5,100.00,,\n-10,,instructions,5,100.00,,\n"), "line 2, column 1",
		      "count '-10' is negative"), "negative count refused (issue 22: analyze printed Frontend_Bound -10%%)");
	CHECK(refused(TXT("-nan,,cycles,5,100.00,,\n"), "line 1", "not a finite number"), "non-finite count refused");
	CHECK(refused(TXT("1000,,cycles,5,100.00,,\nCPU1,1000,,cycles,5,100.00,,\n"), "line 2", "aggregated and the per-CPU"),
	      "a per-CPU line among aggregated lines refused, naming both lines");
	CHECK(refused(TXT("app-12,1000,,cycles,5,100.00,,\n1000,,cycles,5,100.00,,\n"), "line 2", "among thread lines (line 1"),
	      "an aggregated line among per-thread lines refused");
	CHECK(refused(TXT("1000,,cycles,5,100.00,,\n2000,,instructions,5,100.00,,\n30"), "line 3",
		      "ends in the middle of this line"), "a file cut short (no newline, missing fields) refused: copy it again");
	/* read correctly: other perf versions' columns */
	r = perf_csv_parse(TXT("1000,,cycles\n2000,,instructions\n"), &csv, err, sizeof(err));
	CHECK(r == 0 && csv.n == 2 && csv.ev[1].value == 2000 && csv.ev[1].pct == 100,
	      "old perf without run-time/percent columns read");
	r = perf_csv_parse(TXT("1000,,cycles,1.25%,500,50.00,,\n"), &csv, err, sizeof(err));
	CHECK(r == 0 && csv.n == 1 && csv.ev[0].pct == 50 && csv.ev[0].run_ns == 500, "perf stat -r: the noise column skipped");
	r = perf_csv_parse(TXT("1000,,cycles,/user.slice,500,100.00,,\n3000,,cycles,/system.slice,500,100.00,,\n"), &csv,
			   err, sizeof(err));
	CHECK(r == 0 && csv.nrow == 2 && !strcmp(csv.row[1].key, "/system.slice") && csv.ev[0].value == 4000,
	      "perf stat -G: the cgroup column becomes the row key");
	r = perf_csv_parse(TXT("1000;;cpu/event=0x3c,umask=0x0/;500;100.00;;\n"), &csv, err, sizeof(err));
	CHECK(r == 0 && csv.sep == ';' && !strcmp(csv.ev[0].name, "cpu/event=0x3c,umask=0x0/"),
	      "perf stat -x';' read, commas inside the event name kept");
	r = perf_csv_parse(TXT("1000,,cycles,5,100.00,,\n2000,,instructions,5,100.00,,"), &csv, err, sizeof(err));
	CHECK(r == 0 && csv.n == 2, "a complete last line without its newline is read");
	r = perf_csv_parse(TXT("S0-D0-C0,2,1000,,cycles,5,100.00,,\nS0-D0-C0,2,,,,,1.50,insn per cycle\n"
			       "S0-D0-C0,2,,,,,,\n"), &csv, err, sizeof(err));
	CHECK(r == 0 && csv.aggr == PERF_CSV_CORE && csv.nrow == 1, "per-core metric continuation lines (with and without a value)");
	i = analyze_status("tests", err, sizeof(err));
	CHECK(i == 2 && strstr(err, "tests: is a directory; give the CSV file") && !strchr(err, '\n'),
	      "analyze DIR: one line, exit 2 (issue 22): %s", err);
}

/* perf stat --per-core, --per-thread, --per-socket -I, -A: one tree per row key, and the total */
static void per_row_files(void)
{
	static const struct { const char *file, *kind, *key0, *key1; enum perf_csv_aggr aggr; int intervals; } f[] = {
		{ "tests/data/skx_per_core.csv", "core", "S0-D0-C0", "S0-D0-C1", PERF_CSV_CORE, 0 },
		{ "tests/data/skx_per_thread.csv", "thread", "decoder-1234", "gemm,w-1-1240", PERF_CSV_THREAD, 0 },
		{ "tests/data/skx_per_socket_interval.csv", "socket", "S0", "S1", PERF_CSV_SOCKET, 2 },
		{ "tests/data/skx_per_cpu.csv", "CPU", "CPU0", "CPU1", PERF_CSV_CPU, 0 },
	};
	char err[512], out[65536], eo[4096];

	for (size_t k = 0; k < sizeof(f) / sizeof(f[0]); k++) {
		int r = perf_csv_load(f[k].file, &csv, err, sizeof(err));
		bool ok = r == 0 && csv.aggr == f[k].aggr && csv.nrow == 2 && !strcmp(csv.row[0].key, f[k].key0) &&
			  !strcmp(csv.row[1].key, f[k].key1) && csv.intervals == f[k].intervals && csv.n == 26;
		/* row 0 holds skx_llm_decode's counts (intervals summed), the total both rows' */
		for (int i = 0; ok && skx_llm_decode[i].k; i++) {
			char a[TMA_KEY_LEN], b[TMA_KEY_LEN];
			int e = -1;
			tma_event_key(skx_llm_decode[i].k, a, sizeof(a));
			for (int j = 0; j < csv.n && e < 0; j++)
				if (!tma_event_key(csv.ev[j].name, b, sizeof(b)) && !strcmp(a, b))
					e = j;
			ok = e >= 0 && csv.row[0].value[e] == skx_llm_decode[i].v &&
			     csv.ev[e].value == csv.row[0].value[e] + csv.row[1].value[e];
		}
		CHECK(ok, "%s: %d %s rows '%s', '%s', counts exact%s %s", f[k].file, csv.nrow, f[k].kind, f[k].key0, f[k].key1,
		      f[k].intervals ? ", intervals summed" : "", r ? err : "");
		r = analyze(out, sizeof(out), eo, sizeof(eo), f[k].file, "--cpu", "skylakex", "--json", NULL, NULL);
		char *r1 = strstr(out, f[k].key1), *tot = strstr(out, "\"key\": \"total\"");
		CHECK(r == 0 && out[0] == '[' && strstr(out, f[k].key0) && r1 && tot &&
		      fabs(jget(strstr(out, f[k].key0), "tma_backend_bound") - 69) < 1e-9 &&
		      jget(r1, "tma_retiring") > 60 && jget(tot, "tma_backend_bound") > 30 && jget(tot, "tma_backend_bound") < 69,
		      "%s --json: a list, one tree per %s (the decode row Backend_Bound 69%%, the GEMM row Retiring-bound) "
		      "plus the total", f[k].file, f[k].kind);
		r = analyze(out, sizeof(out), eo, sizeof(eo), f[k].file, "--cpu", "skylakex", NULL, NULL, NULL);
		CHECK(r == 0 && strstr(out, "Frontend_Bound Bad_Speculation Backend_Bound Retiring  bottleneck") &&
		      strstr(out, f[k].key0) && strstr(out, "\ntotal ") && strstr(out, "17.5%  Backend_Bound 69.0% \xe2\x80\xba Memory_Bound"),
		      "%s text: a row per %s with the level-1 columns and the bottleneck path, then the total's tree", f[k].file,
		      f[k].kind);
	}
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
	r = perf_csv_parse("\n# comment\n\n1,,a,1,100.00,,\n", 23, &csv, err, sizeof(err));
	CHECK(r == 0 && csv.n == 1 && csv.ev[0].line == 4, "blank and # lines ignored");
	bad_inputs();
	per_row_files();
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
	/* Emerald Rapids: perf 6.12 gives it Sapphire Rapids' level 1/2 formulas and events */
	for (const char *const *n = (const char *const[]){ "sapphirerapids", "emeraldrapids", NULL }; *n; n++) {
		r = analyze(out, sizeof(out), eo, sizeof(eo), "tests/data/spr_topdown_l2.csv", "--cpu", *n, NULL, NULL, NULL);
		CHECK(r == 0 && strstr(out, "12 agree, 0 differ") && strstr(out, "Bottleneck: Backend_Bound 65.0% \xe2\x80\xba Memory_Bound 55.0%"),
		      "analyze perf's own topdown CSV as %s: all 12 printed metrics agree", *n);
	}
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
	return check_exit();
}
