/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The daemon's always-on, low-rate sampler: bpf/samples.bpf.c on one cpu-clock
 * (cycles with a PMU) event per CPU, its rate set by the budget (budget.c)
 * through struct daemon_sampler.
 *
 * Every refresh drains the sample rows (lookup-and-delete: the rows map only
 * ever holds one interval) and multiplies each interval's counts by the weight
 * of one sample at the rate in force then (the period: 1/rate seconds of CPU),
 * so sums stay unbiased however the budget moves the rate; a rate change first
 * drains what was sampled at the old rate.  Sums are routed like the spine's
 * series (daemon_agg.c): to the process's series when it holds a slot, else
 * to its cgroup's "[other]".  The leaf function of each row is named
 * (symbolize.c) and summed into at most top_functions (series, module,
 * symbol) slots, the rest into one "[other]" row (daemon_slots.h).  Files' symbol tables (and perf
 * maps) are read on the symbolizer's own thread (symbolizer_set_async), never in the refresh, which waits
 * for them DSAMP_SYM_WAIT_NS at most (most files take milliseconds: named at once): a slower file's
 * rows are named module+0xOFF until its table is read (a user's hostile library held one refresh
 * for 3.75 s, a big C++ library's table takes 0.1-0.3 s).
 *
 * Bounded: the rows map is drained, stored stacks not used in the last
 * interval are deleted once the store is half full, the user-space
 * symbolizer (maps and ELF symbols of the processes met) forgets the processes
 * that exited once it holds DSAMP_MAX_PIDS (not the files' symbol tables, which
 * the live ones still use: under process churn, rebuilding it for the dead ones
 * read every big library's symbols again in the refresh, 0.1-0.3 s each), and
 * is rebuilt when over 3/4 of DSAMP_MAX_PIDS live ones are left, past DSAMP_MAX_FILES
 * files, after DSAMP_SYM_MAX_AGE_S seconds, or once a minute at
 * most while the daemon's RSS is over DSAMP_RSS_REBUILD (a big C++ library's
 * symbols, libLLVM's, take ~25 MB); within one symbolizer the files' symbol
 * tables are held to DSAMP_SYM_LIMIT bytes (symbolizer_set_limit: the least
 * recently used dropped, reloaded when met again); kernel symbols have a symbolizer of their
 * own that stays; per-series sums go with the spine's series.  --top-functions
 * 0 names nothing and holds no symbols.
 */
#ifndef TMABPF_DAEMON_SAMPLING_H
#define TMABPF_DAEMON_SAMPLING_H
#include <stdbool.h>
#include <stdio.h>
#include "collect/mmap_events.h"
#include "collect/samples_loader.h"
#include "daemon/budget.h"
#include "daemon/daemon_agg.h"
#include "daemon/daemon_http.h"
#include "daemon/daemon_slots.h"
#include "lib/u64map.h"
#include "sym/symbolize.h"

#define DSAMP_MAX_ROWS 8192		/* rows (and stored stacks) per interval */
#define DSAMP_MAX_PIDS 512		/* processes whose maps the symbolizer holds before the exited go */
#define DSAMP_MAX_FILES 4096		/* files it holds before it is rebuilt */
#define DSAMP_SYM_MAX_AGE_S 600
#define DSAMP_RSS_REBUILD (48.0 * 1024 * 1024)	/* ... or when the daemon's RSS is over this */
#define DSAMP_RSS_MIN_AGE_S 60			/* ... and the symbolizer is older than this */
#define DSAMP_SYM_LIMIT (16u << 20)	/* files' symbol tables held at once (least recently used dropped) */
#define DSAMP_SYM_WAIT_NS 100000000ULL	/* a drain's wait for files' symbols being read, in all */

struct json;

struct dsamp_proc {
	const struct agg_proc *owner;	/* the spine's record it belongs to (pid reuse: a new one) */
	struct dsamp_sums s;
};

struct dsamp {
	struct samples_prog prog;
	bool loaded, attached;
	struct symbolizer *usym, *ksym;
	struct u64map known;		/* pids whose maps usym holds -> 1 + the drain that last named one of theirs */
	struct mmap_events mev;		/* every process' executable mappings as they happen, into usym */
	unsigned long long sym_born_ns;
	unsigned long long sym_rebuilds;
	unsigned long long sym_forgotten;	/* exited processes the symbolizer forgot (sym_bound) */
	size_t sym_kept_exited;			/* exited ones it kept at the last time (named lately) */
	struct symbolizer_stats sym_past;	/* dropped/unnamed/deferred of the symbolizers rebuilt away */
	bool sym_sync_said;			/* no thread to read symbols on: said once */
	double hz;			/* in force now */
	struct daemon_sampler iface;
	const struct agg *agg;		/* routing (set at each drain) */
	struct u64map procs;		/* pid -> dsamp_proc */
	struct u64map cgroups;		/* cgroup id -> dsamp_sums ([other]) */
	struct dsamp_sums overflow;	/* processes unknown to the spine, cgroups past max_cgroups */
	struct dsamp_sums total;
	struct dsamp_slots slots;	/* --top-functions (series, leaf function) sums */
	struct sample_key *keys;	/* drain buffers */
	struct sample_stats *vals;
	size_t rows_cap;
	struct u64map stacks_seen;	/* stack ids rows used since the last collection */
	/* the /debug/pprof/profile being taken in each slot (NULL: none): every drained row, its stacks,
	 * into each */
	struct profile *prof[HTTP_PROFILES_AT_ONCE];
	int nprof;			/* ... those not NULL */
	int prof_nev;			/* ... with these sampled events' types after samples and cpu */
	unsigned long long unknown_leaf, stacks_gced, drains, rate_reopens;
};

/* Load and attach at hz: the sample program shares the spine's maps, or runs standalone
 * (spine NULL: task accounting); pmu: try cycles.  On failure err says why and nothing
 * stays attached. */
int daemon_sampling_start(struct dsamp *s, struct threads_prog *spine, bool pmu, double hz, int top_functions,
		unsigned long long expire_ns, char *err, size_t errlen);
struct daemon_opts;
/* daemon_sampling_start with the daemon's options (--sample-hz, clamped to the kernel's
 * maximum), saying on stderr what it samples, or why nothing (--no-sample, a
 * failure: then a warning, and the daemon carries on); the budget's handle, or NULL.
 * uprobes: --uprobe is on (the budget may detach probes). */
const struct daemon_sampler *daemon_sampling_open(struct dsamp *s, struct threads_prog *spine, bool pmu, bool uprobes,
					const struct daemon_opts *d);
/* Name new rows' processes while they live (often: every poll). */
void daemon_sampling_poll(struct dsamp *s);
/* Drain this interval's rows into the sums (after daemon_agg_end: routing follows its slots). */
void daemon_sampling_drain(struct dsamp *s, const struct agg *a, unsigned long long now_ns);
const struct daemon_sampler *daemon_sampling_sampler(struct dsamp *s);
/* Each sampled series (process, or cgroup [other]) and each function slot the spine's series still
 * show, with its labels (as daemon_metrics.c's: {cgroup, comm, pid}, then {module, symbol}). */
typedef void (*dsamp_sums_fn)(void *arg, const char *const *labels, const struct dsamp_sums *sums);
void daemon_sampling_for_each_series(const struct dsamp *s, const struct agg *a, dsamp_sums_fn fn, void *arg);
void daemon_sampling_for_each_function(const struct dsamp *s, const struct agg *a, dsamp_sums_fn fn, void *arg);
/* /debug/pprof/profile: what is sampled from now (rows so far drained first) is also added,
 * stacks and all, to the profile of slot (samples/count, cpu/nanoseconds, then one type per event
 * of evs when not NULL: the sampled accounting's, the same for every slot; labels pid, thread,
 * comm, cgroup) until daemon_sampling_profile_end(), which drains and hands it over (the caller
 * frees it: profile_free(), free()).  Each drained row goes into every profile being taken (each
 * slot its own window).  Bounded: DSAMP_PROFILE_MAX_SAMPLES distinct stacks each (profile.h).
 * 0, or -ENOMEM. */
#define DSAMP_PROFILE_MAX_SAMPLES 65536
int daemon_sampling_profile_begin(struct dsamp *s, const struct agg *a, const struct event_list *evs, int slot,
				  unsigned long long now);
/* Sampled accounting: a row of event estimates (their stacks stored in from's maps) into the
 * profile of slot (-1: every profile being taken), under the event sample types
 * daemon_sampling_profile_begin() made from evs; rows without stacks (sampled before any began)
 * are left out. */
void daemon_sampling_profile_event_row(struct dsamp *s, int slot, struct samples_prog *from,
				       const struct sample_key *k, const struct sample_stats *v);
struct profile *daemon_sampling_profile_end(struct dsamp *s, const struct agg *a, int slot, unsigned long long now);
void daemon_sampling_stop(struct dsamp *s);

#endif
