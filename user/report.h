/* SPDX-License-Identifier: MIT */
/* What a run hands to its outputs (JSON file, text summaries). */
#ifndef TMABPF_REPORT_H
#define TMABPF_REPORT_H
#include <stdio.h>
#include "events.h"
#include "host.h"
#include "json.h"
#include "thread_table.h"
#include "threads_loader.h"

#define TMABPF_VERSION "0.1.0"
#define TMABPF_SCHEMA 1

struct report;
/* Writes the TMA object (key "tma") for one set of sums; NULL when TMA is off. */
typedef void (*report_tma_fn)(const struct report *r, const struct thread_stats *s, struct json *j);

struct report {
	const struct host_info *host;
	const char *recipe;		/* TMA recipe, NULL when none */
	const struct event_list *evs;
	const struct thread_table *tt;
	struct self_stats self;
	unsigned long long duration_ns;
	char target[256];
	const char *stop_reason;	/* "target exited", "duration", "SIGINT", ... */
	report_tma_fn tma_json;
	void *tma_ctx;
};

/* The --json report (schema 1, see README "Report contract"). */
int report_json_write(const struct report *r, const char *path, char *err, size_t errlen);
/* Any event multiplexed (running < enabled) in any thread. */
void report_events_scaled(const struct report *r, bool *scaled);

#endif
