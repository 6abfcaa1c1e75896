/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * diff_report: the rows 'tmabpf diff' compares, read from two JSON reports
 * (schema 1; they may come from another machine, so nothing in them is
 * trusted).
 *
 * Pids and tids differ between runs, so rows are matched by name:
 *   process   its comm, and its rank among processes of that comm ordered by
 *             first sight (the earliest first_seen_ns of its threads, then pid):
 *             "decoder", "worker#2"
 *   thread    its process's key, its own comm, and its rank among that
 *             process's threads of that comm by first_seen_ns (then tid):
 *             "decoder/worker#3"
 *   function  its process's key, the module's file name and the symbol (the
 *             per-process rows of the report, tid null):
 *             "decoder/libopenblas.so.0:cblas_sgemm"
 *   run       wall_ns (duration_ns) and the sums over the processes.
 * A row's metrics: its numeric fields (oncpu_ns, offcpu_*_ns, switches,
 * migrations, calls, returns, unmatched, wall_ns, self_oncpu_ns), its
 * counters by event name and its TMA nodes (percent).
 *
 * Reading checks every value it uses: the schema, the type of each array,
 * object, string and number, numbers finite (no NaN) and counts not
 * negative, strings of bounded length, pids unique.  Anything else is one
 * line in err naming the file and the value ("b.json: threads[3].oncpu_ns is
 * a string, expected a number").  Rows are found through a hash of their
 * key: reading and matching are linear in the size of the reports.
 */
#ifndef TMABPF_DIFF_REPORT_H
#define TMABPF_DIFF_REPORT_H
#include <stdbool.h>
#include <stddef.h>
#include "cmd/diff_rules.h"
#include "lib/strmap.h"

#define DIFF_REPORT_MAX_BYTES (4ll << 30)	/* a report file larger than this is refused */

struct diff_metric {
	const char *name;	/* interned in diff_rows.names: compare pointers */
	double v;
};

struct diff_side {
	struct diff_metric *m;	/* fields, then counters, then TMA nodes */
	unsigned int n;
	unsigned int n_sums;	/* the fields and counters (m[0..n_sums)): what the run row adds up */
	bool present;
};

struct drow {
	enum drow_kind kind;
	char *key;		/* what matches rows of the two reports */
	char *name;		/* shown */
	struct diff_side side[2];	/* base, new */
};

struct diff_rows {
	struct drow *v;
	size_t n, cap;
	struct strmap by_key;	/* kind + key -> index + 1 */
	struct strmap names;	/* metric names */
};

/* Read the report at path (a regular file or a pipe) as side (0 base, 1 new). */
int diff_report_load(struct diff_rows *rows, int side, const char *path, char *err, size_t errlen);
/* The same from text; what names it in messages. */
int diff_report_parse(struct diff_rows *rows, int side, const char *text, size_t len, const char *what, char *err,
		      size_t errlen);
/* The interned name of metric, or NULL when no row has it. */
const char *diff_metric_name(const struct diff_rows *rows, const char *metric);
/* The metric some row has nearest to a mistyped one (suggest.h), or NULL. */
const char *diff_metric_near(const struct diff_rows *rows, const char *metric);
/* Value of the metric (interned name) in one side of a row. */
bool drow_metric(const struct drow *r, int side, const char *name, double *out);
/* Last component of a row's name (comm, thread comm or symbol), for GLOBs. */
const char *drow_leaf(const struct drow *r);
void diff_rows_free(struct diff_rows *rows);

#endif
