/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The TMA engine, pure: no I/O, no global state but the compiled-formula cache.
 *   plan:    tma_plan(recipe, level, counter budget, host facts, encoder) -> struct tma_plan
 *            (the events to open, in groups, encoded; the nodes shown; the note);
 *            tma_plan_init() for counts that come from elsewhere (analyze);
 *   compute: tma_compute(plan, counts) -> struct tma_result, the tree.
 * Formulas are evaluated with perf 6.12's expr.y rules (tma_expr.h).  Host
 * facts come from pmu/tma_env_host.h, the events' encodings from the caller's encoder
 * (pmu/key_encode.h), at plan time: compute does no I/O and calls no library.
 * Output formatting is tma_output.h.
 */
#ifndef TMABPF_TMA_H
#define TMABPF_TMA_H
#include <stdbool.h>
#include <stddef.h>
#include <linux/perf_event.h>
#include "bpf/tmabpf.h"
#include "tma/tma_expr.h"
#include "tma/tma_keys.h"
#include "tma/tma_recipes.h"

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
#define TMA_MAX_ALIAS TMA_EXPR_MAX_IDS

/* Encodes recipe key for CPU c into attr (the caller's: pmu/key_encode.h's
 * tma_encode_key); 0 or -errno with err. */
typedef int tma_encode_fn(const struct tma_cpu *c, const char *key, struct perf_event_attr *attr,
			  char *err, size_t errlen);

/* One event a plan opens. */
struct tma_event {
	char name[TMA_KEY_LEN];		/* the recipe's key */
	struct perf_event_attr attr;	/* encoded when the plan was made */
	int group;			/* numbered from 0 */
	char need[128];			/* the nodes that need it */
};

/* A key of the recipe's BPF-path tree and its encoding, resolved at plan time:
 * counts given under another name (-e r00c0) match a key by it. */
struct tma_alias {
	char key[TMA_KEY_LEN];
	__u32 type;
	__u64 config, config1;
};

struct tma_plan {
	const struct tma_cpu *cpu;
	int level;		/* nodes of levels 1..level */
	bool run;		/* the BPF path's nodes (tma_cpu.run_*); else perf's whole tree (analyze) */
	struct tma_env env;
	int nomit;		/* nodes left out to fit the counters */
	char omit[TMA_MAX_OMIT][TMA_NAME_LEN];
	unsigned long long omit_sig;	/* hash of omit[] (keys cached event lists) */
	int nev;		/* tma_plan(): the events to open; groups numbered from 0 */
	struct tma_event ev[TMABPF_MAX_EVENTS];
	int nalias;		/* tma_plan(): every key of levels 1..run_max_level that encodes */
	struct tma_alias alias[TMA_MAX_ALIAS];
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
 * branches are left out when they do not fit (said in p->note).  encode gives
 * each planned event its encoding, and each key of the whole BPF-path tree its
 * alias (p->alias); an event that cannot be encoded fails the plan.  0 or -errno. */
int tma_plan(struct tma_plan *p, const struct tma_cpu *c, int level, int budget, const struct tma_env *env,
	     tma_encode_fn *encode, char *err, size_t errlen);

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

/* One count a run gave: its event's name and encoding, its perf group (-1 none),
 * the value scaled by enabled/running, the percent running. */
struct tma_count {
	const char *name;
	const struct perf_event_attr *attr;	/* NULL: matched by name only */
	int group;
	double value, pct;
};
/* The tree from the counts a run made.  Counts named differently from the
 * recipe (e.g. -e r00c0) match a key by the encoding the plan resolved
 * (p->alias).  No I/O, no library call; the only shared state is the cache of
 * compiled formulas.  0, or -EINVAL (no recipe) / -ENOMEM. */
int tma_compute(const struct tma_plan *p, int n, const struct tma_count *counts, struct tma_result *res);
/* Same from (name, value, percent running) triples (analyze): a value NaN is
 * perf's <not supported>.  A run plan shows every planned node; an analyze
 * plan the nodes whose events were all given, plus their ancestors (null,
 * with the events they lack). */
int tma_compute_named(const struct tma_plan *p, int n, const char *const *names, const double *values,
		      const double *pct_running, struct tma_result *res);
/* Measured FLOPs from counts, with perf's FLOPs metric for CPU c (its table's tma_info_system_gflops,
 * verbatim: FP_ARITH_INST_RETIRED.* weighted by their lanes, an FMA counted twice, masked-out
 * lanes counted as if they computed): perf's GFLOP/s over duration_time = seconds, times 1e9 x
 * seconds.  *gflops (when not NULL) gets perf's value itself.  0; -ENOENT when perf has no such
 * metric for c; -EAGAIN when an event it needs is missing (why names them); -EINVAL (seconds <= 0);
 * -ENOMEM. */
int tma_flops_named(const struct tma_cpu *c, int n, const char *const *names, const double *values, double seconds,
		    double *flops, double *gflops, char *why, size_t whylen);
/* The events perf's FLOPs metric for c counts (perf's compute_ids), into keys[max]: their number,
 * 0 when perf has no FLOPs metric for c, or -ENOMEM. */
int tma_flops_events(const struct tma_cpu *c, char (*keys)[TMA_KEY_LEN], int max);
/* Compile c's formulations into the cache (tma_plan_init does): 0, or -ENOMEM with err
 * (out of memory, or a recipe over the engine's limits). */
int tma_compile(const struct tma_cpu *c, char *err, size_t errlen);
/* The formulation the BPF path plans with: general counters where the CPU has one. */
const struct tma_formulation *tma_run_formulation(const struct tma_cpu *c);
/* Value of metric name in r (NaN if absent). */
double tma_result_get(const struct tma_result *r, const char *name);
/* The node named name, NULL if absent. */
const struct tma_node *tma_result_node(const struct tma_result *r, const char *name);

#endif
