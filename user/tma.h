/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* TMA engine: plan the events a level needs, compute the tree perf's way. */
#ifndef TMABPF_TMA_H
#define TMABPF_TMA_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "events.h"
#include "json.h"
#include "cpu_detect.h"

/* perf's literals; they change formulas (#SMT_on, #core_wide) or event sets. */
struct tma_env {
	int smt_on;		/* #SMT_on */
	int core_wide;		/* #core_wide: counts cover whole cores (perf stat -a) */
	int has_pmem;		/* #has_pmem */
	int nmi_watchdog;	/* holds one counter while planning; -1: read /proc/sys/kernel/nmi_watchdog */
	int slots;		/* #slots; 0: the CPU's pipeline width */
	int prefer_perf;	/* compute: try perf's own formulation (topdown-* events) first */
};
/* Host defaults: SMT from /sys/devices/system/cpu/smt/active, core_wide 0
 * (per-thread counting), has_pmem 0, nmi_watchdog -1. */
void tma_env_host(struct tma_env *e);
void tma_set_env(const struct tma_env *e);
const struct tma_env *tma_get_env(void);

/* Canonical event key: NAME[:uHEX][:cN][:e1][:i1], upper case; accepts perf's
 * cpu/NAME,cmask=1,edge/, cpu@..@, NAME:c1, slots/topdown-* aliases. */
int tma_event_key(const char *name, char *out, size_t len);
/* Encode a recipe event key for CPU c into attr (counting, exclude_guest as perf). */
int tma_encode_key(const struct tma_cpu *c, const char *key, struct perf_event_attr *attr,
		   char *err, size_t errlen);

/* Event keys formulation gc (true: the BPF path's) needs for levels 1..level, in
 * first-use order; returns the count. */
#define TMA_KEY_LEN 96
int tma_needed_events(const struct tma_cpu *c, bool gc, int level, char (*keys)[TMA_KEY_LEN], int max);

int tma_plan_events(const struct tma_cpu *c, int level, struct event_list *out, char *err, size_t errlen);
/* Note of the last plan (groups, budget, what was left out), "" if none. */
const char *tma_plan_note(void);

#define TMA_MAX_NODES 32
struct tma_node {
	char name[48];		/* perf metric name */
	char label[32];		/* tree label */
	double value;		/* percent; NaN when perf prints nothing (x/0, missing events) */
	int tma;		/* --tma level that shows it */
	int depth;		/* tree depth, 1 = top level */
	int parent;		/* index in node[], -1 */
	bool scaled;		/* built from multiplexed counters (percent running < 100) */
	bool ungrouped;		/* ... and from counters of different groups */
	double min_running;	/* lowest percent-running of its counters */
};
struct tma_result {
	const struct tma_cpu *cpu;
	int level;
	const char *formulation;	/* "perf" or "gc" */
	int n;
	struct tma_node node[TMA_MAX_NODES];
	char missing[256];	/* events the formulas needed but evs lacked */
};

int tma_compute(const struct tma_cpu *c, int level, const struct event_list *evs,
		const double *scaled_values, const double *pct_running, struct tma_result *res);
/* Same from (name, value, pct) triples (analyze). */
int tma_compute_named(const struct tma_cpu *c, int level, int n, const char *const *names,
		      const double *values, const double *pct_running, struct tma_result *res);
void tma_result_json(const struct tma_result *r, struct json *j, const char *key);
int tma_bottleneck_path(const struct tma_result *r, char *buf, size_t len);
void tma_result_print(const struct tma_result *r, FILE *f, int indent);
/* Value of metric name in r (NaN if absent). */
double tma_result_get(const struct tma_result *r, const char *name);

#endif
