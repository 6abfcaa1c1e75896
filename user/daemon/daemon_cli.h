/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Options of 'tmabpf daemon': flags, and an optional --config FILE of
 * "key = value" lines whose keys are the long option names. */
#ifndef TMABPF_DAEMON_CLI_H
#define TMABPF_DAEMON_CLI_H
#include <stdio.h>
#include "run/options.h"

#define DAEMON_MAX_CONFIG_ARGS 256

enum daemon_accounting {
	DAEMON_ACCT_AUTO = 0,	/* tasks when every event is derivable and no --uprobe, else switch */
	DAEMON_ACCT_TASKS,	/* task iterator + exit hook: nothing per context switch */
	DAEMON_ACCT_SWITCH,	/* the spine at sched_switch */
	DAEMON_ACCT_SAMPLED,	/* tasks + every event sampled (daemon_evsampled.h) */
};

struct daemon_opts {
	struct options run;		/* what profiling runs share: -e, --uprobe, map sizes, --cpu, --tma, -d */
	const char *listen;		/* --listen ADDR:PORT */
	int interval_ms;		/* refresh (drain) period */
	double max_overhead_pct;	/* % of one CPU */
	double sample_hz;		/* requested sampling rate; 0: no sampling */
	double min_sample_hz;		/* lowest rate the budget may choose */
	int top_functions;		/* sampled (series, leaf function) slots */
	int top_procs, top_threads, max_cgroups;
	double min_share_pct;		/* --min-share */
	double expire_s;
	enum daemon_accounting accounting;	/* --accounting */
	int events_hz;			/* --events-hz: sampled accounting's samples/s per CPU, all events */
	const char *jsonl_path;
	const char *config_path;
	char *config_args[DAEMON_MAX_CONFIG_ARGS];	/* strings from the config file (owned) */
	int nr_config_args;
};

/* 0, EXIT_USAGE after one line on stderr, or -1 after --help. */
int daemon_cli_parse(int argc, char **argv, struct daemon_opts *d);
void daemon_cli_free(struct daemon_opts *d);
void daemon_cli_usage(FILE *f);

#endif
