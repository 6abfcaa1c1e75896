/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The TMA engine, pure: no I/O, no global state but the compiled-formula cache.
 *   plan:    tma_plan(recipe, level, counter budget, host facts) -> struct tma_plan
 *            (the events to open, in groups; the nodes shown; the note);
 *            tma_plan_init() for counts that come from elsewhere (analyze);
 *   compute: tma_compute(plan, counts) -> struct tma_result, the tree.
 * Formulas are evaluated with perf 6.12's expr.y rules (tma_expr.h).  Host
 * facts come from tma_env.h, output formatting is tma_output.h.
 */
#ifndef TMABPF_TMA_H
#define TMABPF_TMA_H
#include <stdbool.h>
#include <stddef.h>
#include "pmu/cpu_detect.h"
#include "pmu/event_key.h"
#include "pmu/events.h"
#include "tma/tma_expr.h"

struct tma_formulation;

/* perf's literals and the facts the plan depends on. */
struct tma_env {
	int smt_on;		/* #SMT_on */
	int core_wide;		/* #core_wide: counts cover whole cores (perf stat -a) */
	int has_pmem;		/* #has_pmem */
	int nmi_watchdog;	/* the NMI watchdog holds one counter */
	int slots;		/* #slots; 0: the CPU's pipeline width */
	int prefer_perf;	/* compute: try perf's own formulation (topdown-* events) first */
};

#define TMA_MAX_NODES 128
#define TMA_NAME_LEN 48
#define TMA_MAX_OMIT 16

struct tma_plan {
	const struct tma_cpu *cpu;
	int level;		/* nodes of levels 1..level */
	bool run;		/* the BPF path's nodes (tma_cpu.run_*); else perf's whole tree (analyze) */
	struct tma_env env;
	int nomit;		/* nodes left out to fit the counters */
	char omit[TMA_MAX_OMIT][TMA_NAME_LEN];
	unsigned long long omit_sig;	/* hash of omit[] (keys cached event lists) */
	int nev;		/* tma_plan(): the events to open; groups numbered from 0 */
	struct event_desc ev[TMABPF_MAX_EVENTS];
	char note[512];		/* groups, budget, what was left out; "" when none */
};

/* A plan for counts that are given by name (analyze): no events scheduled.
 * run: the BPF path's node set (levels 1..run_max_level), else perf's tree
 * (levels 1..max_level).  0, or -EINVAL/-ENOENT with err. */
int tma_plan_init(struct tma_plan *p, const struct tma_cpu *c, int level, bool run, const struct tma_env *env,
		  char *err, size_t errlen);
/* The BPF path's plan: events for levels 1..level packed into groups that fit
 * the CPU's counters (env: #SMT_on, watchdog), at most budget events in all (the
 * counters tmabpf can still virtualise); at level 3 the nodes of other level-2
 * branches are left out when they do not fit (said in p->note).  0 or -errno. */
int tma_plan(struct tma_plan *p, const struct tma_cpu *c, int level, int budget, const struct tma_env *env,
	     char *err, size_t errlen);
/* Append the plan's events to out (groups renumbered after out's, leaders marked). */
int tma_plan_append(const struct tma_plan *p, struct event_list *out, char *err, size_t errlen);

/* The event keys formulation f needs for the plan's nodes, as perf's
 * compute_ids pass finds them (events of branches that cannot be taken with
 * the plan's literals are not needed), in first-use order.  uses[i] (when not
 * NULL) gets, for the i-th node of names[], the keys it needs.  Returns the
 * number of keys (at most max) or -errno. */
struct tma_needs {
	int nkey;
	char key[TMA_EXPR_MAX_IDS][TMA_KEY_LEN];
	int nnode;
	const char *node[TMA_MAX_NODES];
	struct tma_ids uses[TMA_MAX_NODES];	/* bit k: node i needs key[k] */
};
int tma_needed_events(const struct tma_plan *p, const struct tma_formulation *f, struct tma_needs *out);

struct tma_node {
	char name[TMA_NAME_LEN];	/* perf metric name */
	char label[32];		/* tree label */
	double value;		/* percent; NaN when perf prints nothing or NaN (why says which) */
	int tma;		/* --tma level that shows it (the BPF path's, else perf's level) */
	int level;		/* perf's level */
	int depth;		/* tree depth, 1 = top level */
	int parent;		/* index in node[], -1 */
	bool computable;	/* every event perf would count for it was given */
	int nevents;		/* how many events perf counts for it (0: a constant, e.g. PMM_Bound without pmem) */
	bool scaled;		/* built from multiplexed counters (percent running < 100) */
	bool ungrouped;		/* ... and from counters of different groups */
	double min_running;	/* lowest percent-running of its counters */
	char why[80];		/* why value is NaN: "division by zero", "<not supported>: EV", "missing: EV" */
};
struct tma_result {
	const struct tma_cpu *cpu;
	int level;
	const char *formulation;	/* "perf" or "gc" */
	int n;
	struct tma_node node[TMA_MAX_NODES];
	char missing[256];	/* events the formulas needed but the counts lacked */
};

/* The tree from the events a run counted (scaled values, percent running).
 * Counts named differently from the recipe (e.g. -e r00c0) match by encoding.
 * 0, or -EINVAL (no recipe) / -ENOMEM. */
int tma_compute(const struct tma_plan *p, const struct event_list *evs, const double *scaled_values,
		const double *pct_running, struct tma_result *res);
/* Same from (name, value, percent running) triples (analyze): a value NaN is
 * perf's <not supported>.  A run plan shows every planned node; an analyze
 * plan the nodes whose events were all given, plus their ancestors (null,
 * with the events they lack). */
int tma_compute_named(const struct tma_plan *p, int n, const char *const *names, const double *values,
		      const double *pct_running, struct tma_result *res);
/* The formulation the BPF path plans with: general counters where the CPU has one. */
const struct tma_formulation *tma_run_formulation(const struct tma_cpu *c);
/* Value of metric name in r (NaN if absent). */
double tma_result_get(const struct tma_result *r, const char *name);
/* The node named name, NULL if absent. */
const struct tma_node *tma_result_node(const struct tma_result *r, const char *name);

#endif
