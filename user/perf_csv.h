/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Parser for `perf stat -x,` output (CSV), as perf 6.x prints it. */
#ifndef TMABPF_PERF_CSV_H
#define TMABPF_PERF_CSV_H
#include <stdbool.h>
#include <stddef.h>

#define PERF_CSV_MAX_EVENTS 256
#define PERF_CSV_MAX_METRICS 128

struct perf_csv_event {
	char name[160];		/* as perf printed it (cpu/EV,cmask=1/ kept whole) */
	double value;		/* summed over lines with this name (per-CPU, per-thread, intervals) */
	double run_ns;		/* run-time column, summed */
	double pct;		/* percent-running column (lowest seen); 100 when absent */
	int lines;
	bool not_counted;	/* "<not counted>" on some line: perf uses 0 for it in metrics */
	bool not_supported;	/* "<not supported>": perf cannot use it (NaN) */
	int line;		/* first line */
};

struct perf_csv_metric {
	char name[96];		/* e.g. tma_backend_bound, from perf's metric-unit column */
	double value;
};

struct perf_csv {
	int n;
	struct perf_csv_event ev[PERF_CSV_MAX_EVENTS];
	int nmetric;
	struct perf_csv_metric metric[PERF_CSV_MAX_METRICS];
	int lines;
};

/* Parse text (need not be NUL-terminated). 0, or -EINVAL with err =
 * "line L, column C: what" for the first malformed line. */
int perf_csv_parse(const char *text, size_t len, struct perf_csv *out, char *err, size_t errlen);
/* Read and parse a file; err is prefixed with the file name. */
int perf_csv_load(const char *path, struct perf_csv *out, char *err, size_t errlen);
/* Index of event name, or -1. */
int perf_csv_find(const struct perf_csv *c, const char *name);

#endif
