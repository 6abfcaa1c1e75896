/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What a profiling run (and the daemon, which shares most) is asked to do:
 * the options cli.c and daemon_cli.c parse. */
#ifndef TMABPF_OPTIONS_H
#define TMABPF_OPTIONS_H
#include <stdbool.h>
#include <sys/types.h>
#include "lib/warn.h"	/* EXIT_USAGE */
#include "run/target.h"

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
	int width;			/* --width: text columns; 0: the terminal's, else 80 */
	bool quiet;			/* no final text report */
	bool dry_run;
	const char *cpu_name;		/* --cpu */
	int tma_level;			/* --tma=N (default 1 when a PMU exists) */
	bool verbose;			/* -v: libbpf's own log; the text report's overhead line always */
	const char *uprobe_specs[16];	/* --uprobe LIB:GLOB */
	int nr_uprobe_specs;
	bool itt;			/* --itt: the ITT API's spans (collect/itt_run.h) */
	double max_rate;		/* --max-rate: calls/s above which a function is detached; 0 = off */
	bool probe_at_symbol;		/* --probe-at=symbol: no entry probe moved past endbr64 */
	int max_stacks;
	int max_funcs;
	const char *trace_path;		/* --trace: Perfetto/Chrome trace-event JSON */
	int sample_hz;			/* --sample[=HZ]; 0 = off */
	int sample_events_hz;		/* --sample-events[=HZ]: every event sampled, HZ in all per CPU; 0 = off */
	const char *pprof_path;		/* --pprof FILE: the samples as a pprof profile */
	const char *folded_path;	/* --folded FILE */
	const char *flamegraph_path;	/* --flamegraph FILE.svg */
	int max_sample_stacks;		/* sample rows and stored stacks */
	bool offcpu_stacks;		/* --offcpu-stacks */
	const char *mem_source;		/* --mem-samples[=pmu|page-faults]; NULL = off */
	const char *per_call;		/* --per-call LIB:FUNC: the marker; NULL = off */
	bool roofline;			/* --roofline: the GEMM/GEMV calls' work from their arguments */
	const char *roofline_svg;	/* --roofline=FILE.svg: and the chart; NULL = none */
	const char *roofs_path;		/* --roofs FILE: the measured roofs (default pmu/roofs.h's) */
	const char *spin_specs[16];	/* --spin LIB:GLOB */
	int nr_spin_specs;
	mode_t out_mode;		/* --mode: permission bits of the files written (default 0600) */
};

#endif
