/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Parser for `perf stat -x,` output (CSV), as perf 3.x to 6.x print it:
 * aggregated, or one row per thread/CPU/core/die/socket/node/cache (-A,
 * --per-thread, --per-core, ...), with or without -I intervals. */
#ifndef TMABPF_PERF_CSV_H
#define TMABPF_PERF_CSV_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PERF_CSV_MAX_EVENTS 256
#define PERF_CSV_MAX_METRICS 512
#define PERF_CSV_MAX_ROWS 4096

/* An event over the whole file: every row and interval summed. */
struct perf_csv_event {
	char name[160];		/* as perf printed it (cpu/EV,cmask=1/ kept whole) */
	double value;		/* summed over lines with this name (rows, intervals) */
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
	int row;		/* index in row[], -1 in an aggregated file */
};

/* What the first columns say a line counts. */
enum perf_csv_aggr {
	PERF_CSV_GLOBAL,	/* no prefix: the whole run */
	PERF_CSV_THREAD,	/* --per-thread: COMM-PID */
	PERF_CSV_CPU,		/* -A / --no-aggr: CPU<n> */
	PERF_CSV_CORE,		/* --per-core: S<n>-D<n>-C<n> */
	PERF_CSV_DIE,		/* --per-die: S<n>-D<n> */
	PERF_CSV_SOCKET,	/* --per-socket: S<n> */
	PERF_CSV_NODE,		/* --per-node: N<n> */
	PERF_CSV_CACHE,		/* --per-cache: S<n>-D<n>-L<n>-ID<n> */
	PERF_CSV_CLUSTER,	/* --per-cluster: S<n>-D<n>-CLS<n> */
};

#define PERF_CSV_SEEN 1
#define PERF_CSV_NOT_COUNTED 2
#define PERF_CSV_NOT_SUPPORTED 4

/* One row key (a thread, CPU, core, ...): its counts per event (index in ev[]). */
struct perf_csv_row {
	char key[80];
	double value[PERF_CSV_MAX_EVENTS];
	double pct[PERF_CSV_MAX_EVENTS];
	uint8_t flags[PERF_CSV_MAX_EVENTS];	/* PERF_CSV_SEEN | NOT_COUNTED | NOT_SUPPORTED */
};

struct perf_csv {
	int n;
	struct perf_csv_event ev[PERF_CSV_MAX_EVENTS];
	int nmetric;
	struct perf_csv_metric metric[PERF_CSV_MAX_METRICS];
	int lines;
	enum perf_csv_aggr aggr;
	int nrow;		/* 0 in an aggregated file */
	struct perf_csv_row *row;
	int intervals;		/* distinct -I timestamps (0: none) */
	char sep;		/* the field separator found: ',' (perf -x,), ';' or TAB */
};

/* Parse text (need not be NUL-terminated).  out must be zeroed, or a result
 * of an earlier parse (its rows are freed).  0, or -EINVAL/-E2BIG with err =
 * "line L[, column C]: what; fix" for the first line that is not perf stat
 * -x output: a bad field, a negative or non-finite count, an aggregated line
 * among per-thread/CPU lines (or the reverse), binary data, an empty file,
 * --metric-only output, a last line cut short. */
int perf_csv_parse(const char *text, size_t len, struct perf_csv *out, char *err, size_t errlen);
/* Read and parse a file (a directory or an oversized file is an error); err is prefixed with the file name. */
int perf_csv_load(const char *path, struct perf_csv *out, char *err, size_t errlen);
void perf_csv_free(struct perf_csv *c);
/* Index of event name, or -1. */
int perf_csv_find(const struct perf_csv *c, const char *name);
/* "thread", "CPU", "core", ...; "" for an aggregated file. */
const char *perf_csv_aggr_name(enum perf_csv_aggr a);

#endif
