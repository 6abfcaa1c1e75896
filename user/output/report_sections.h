/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The report's outputs: the --json file, and each feature's section of it and
 * of the final text report (functions, sampled functions, off-CPU stacks,
 * memory samples) in width columns (--width: names elided in the middle, lines
 * wrapped); the TMA of a row as JSON or as a bottleneck path. */
#ifndef TMABPF_REPORT_SECTIONS_H
#define TMABPF_REPORT_SECTIONS_H
#include <stdio.h>
#include "lib/json.h"
#include "model/report.h"

/* The --json report (schema 1, see README "Report contract") to f; write errors stay in f (outfile_commit). */
void report_json_write(const struct report *r, FILE *f);

/* "pid" and "tid" of a row: tid null on a per-process row (tid < 0). */
void report_json_ids(struct json *j, unsigned int pid, long long tid);
/* {key: {event: scaled count, ...}}: counter values by event name, rounded. */
void report_counters_json(const struct report *r, struct json *j, const char *key, const struct counter_val *c);
/* {"tma": {...}} of one set of sums; an empty object when TMA is not shown or has no value. */
void report_tma_json(const struct report *r, const struct thread_stats *s, struct json *j);
/* The TMA bottleneck path of one set of sums into buf: 0, or -1 when there is none. */
int report_tma_path(const struct report *r, const struct thread_stats *s, char *buf, size_t len);

/* The functions section (--uprobe): JSON "functions"/"uprobes". */
void report_functions_json(const struct report *r, struct json *j);
/* The sampled-functions section (--sample): JSON "samples"/"sampling", text table. */
void report_samples_json(const struct report *r, struct json *j);
void report_samples_text(const struct report *r, FILE *f, int top, int width);
/* The off-CPU stacks section (--offcpu-stacks): JSON "offcpu_stacks"/"offcpu", text table. */
void report_offcpu_json(const struct report *r, struct json *j);
void report_offcpu_text(const struct report *r, FILE *f, int top, int width);
/* The memory-samples section (--mem-samples): JSON "mem_samples" (null when off), text tables. */
void report_memsamples_json(const struct report *r, struct json *j);
void report_memsamples_text(const struct report *r, FILE *f, int top, int width);

/* The roofline section (--roofline): JSON "roofline" (null when off), text table. */
void report_roofline_json(const struct report *r, struct json *j);
void report_roofline_text(const struct report *r, FILE *f, int top, int width);
/* With --per-call: one iteration's "roofline" (its work, the bandwidth bound and the share; null
 * without --roofline), and the live token view's line for the last `last` iterations (0: none). */
void report_roofline_window_json(const struct report *r, const struct iteration *it, struct json *j);
int report_roofline_live(const struct report *r, int last, char *line, size_t len);

/* The --per-call section: JSON "per_call" (null when off) and "iterations", per-token text. */
void report_iterations_json(const struct report *r, struct json *j);
void report_iterations_text(const struct report *r, FILE *f, int width);
/* The live token view: the last `last` iterations' sparkline and statistics (line1) and their
 * decomposition (line2); 0 without --per-call. */
int report_iterations_live(const struct report *r, int last, char *line1, char *line2, size_t len);

#endif
