/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Command-line options of the profiling run. */
#ifndef TMABPF_CLI_H
#define TMABPF_CLI_H
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include "target.h"

#define EXIT_USAGE 2

struct options {
	struct target target;
	bool system_wide;
	double duration_s;		/* -d; 0 = until target exit / Ctrl-C */
	const char *events;		/* -e */
	int interval_ms;		/* -I; 0 = only the final report (live view: 1000) */
	bool batch;			/* --batch: plain-text summaries even on a terminal */
	const char *json_path;		/* --json */
	int max_threads;
	int max_exited;			/* exited threads kept one by one (older: folded per process) */
	int max_pids;
	bool follow_fork;
	int top;
	bool quiet;			/* no final text report */
	bool dry_run;
	const char *cpu_name;		/* --cpu */
	int tma_level;			/* --tma=N (default 1 when a PMU exists) */
	bool verbose;			/* libbpf's own log */
	const char *uprobe_specs[16];	/* --uprobe LIB:GLOB */
	int nr_uprobe_specs;
	double max_rate;		/* --max-rate: calls/s above which a function is detached; 0 = off */
	int max_stacks;
	int max_funcs;
	const char *trace_path;		/* --trace: Perfetto/Chrome trace-event JSON */
	int sample_hz;			/* --sample[=HZ]; 0 = off */
	const char *folded_path;	/* --folded FILE */
	int max_sample_stacks;		/* sample rows and stored stacks */
	bool offcpu_stacks;		/* --offcpu-stacks */
	const char *mem_source;		/* --mem-samples[=pmu|page-faults]; NULL = off */
	mode_t out_mode;		/* --mode: permission bits of the files written (default 0600) */
};

/* Parse argv. 0 on success, EXIT_USAGE after printing one line on error,
 * or -1 when --help/--version was handled (exit 0). */
int cli_parse(int argc, char **argv, struct options *o);
/* After getopt_long (optstring starting "+:") returned ':' or '?': one line naming the
 * option (missing value, unknown, or a value it does not take), EXIT_USAGE. */
int cli_getopt_error(int c, char **argv, const char *where, const char *help);
void cli_usage(FILE *f);

/* Parse an integer in [lo, hi] into *out, or print one line (prefixed by where, e.g. a config
 * file's "FILE:LINE: ") and return EXIT_USAGE. */
int parse_int_at(const char *where, const char *s, const char *what, long lo, long hi, int *out);

#endif
