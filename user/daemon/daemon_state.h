/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The daemon's state, shared by its files: daemon.c (the loop), daemon_collectors.c (its own
 * collectors), daemon_overhead.c (the budget), daemon_publish.c (metrics, JSON lines) and
 * daemon_profile.c (/debug/pprof/profile). */
#ifndef TMABPF_DAEMON_STATE_H
#define TMABPF_DAEMON_STATE_H
#include <stdbool.h>
#include <stdint.h>
#include "daemon/budget.h"
#include "daemon/daemon_accounting.h"
#include "daemon/daemon_agg.h"
#include "daemon/daemon_cli.h"
#include "daemon/daemon_evsampled.h"
#include "daemon/daemon_http.h"
#include "daemon/daemon_metrics.h"
#include "daemon/daemon_sampling.h"
#include "lib/outfile.h"
#include "run/prepare.h"
#include "collect/collector.h"


struct daemon {
	struct daemon_opts *d;
	struct run_ctx c;		/* the collectors' context: the daemon's own collectors find the daemon from it */
	struct run_prep prep;
	const struct collector *table[5];	/* accounting (spine or tasks), event sampling, uprobes, the sampler,
						 * the aggregation's exits */
	int ncollectors;
	struct devs devs;		/* sampled accounting: the events' estimates */
	struct agg agg;
	bool agg_ready;
	struct agg_funcs funcs;
	struct budget budget;
	const struct daemon_sampler *sampler;	/* NULL: not sampling */
	struct dsamp samp;			/* the sampler (daemon_sampling.c) */
	struct daemon_http *http;
	struct outfile jsonl;		/* --jsonl */
	bool jsonl_failed;		/* said once */
	struct daemon_self self;
	unsigned long long last_bpf_ns, last_up_ns, last_sample_ns, last_t, last_self_ns;
	bool cpu_over;			/* BPF + user CPU over --max-overhead: said once */
	double cpu_smooth;		/* BPF + user CPU, smoothed over ~10 intervals */
	uint32_t *drop_tids;	/* threads that exited one refresh ago: their function rows go */
	size_t n_drop_tids;
	int shed_streak;
	struct accounting_choice acct;	/* --accounting */
	bool tma_zero;			/* an event the recipe needs never counted: no TMA exported (zero_counts) */
	unsigned long long start_ns;
	unsigned long long profile_end_ns[HTTP_PROFILES_AT_ONCE];	/* each slot's /debug/pprof/profile is being
									 * taken until then (0: none) */
};

#endif
