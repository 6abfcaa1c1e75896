/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* TMA recipes: per-CPU formula and event tables (data, not code). */
#ifndef TMABPF_TMA_RECIPES_H
#define TMABPF_TMA_RECIPES_H
#include <stdint.h>

enum tma_vendor { TMA_INTEL, TMA_AMD, TMA_ARM };

/* One metric, in perf's metric-expression syntax; events are written
 * NAME[:uHEX][:cN][:e1][:i1] (umask override, cmask, edge, invert), which the
 * engine also accepts in perf's cpu@NAME\,cmask\=N@ spelling. */
struct tma_metric {
	const char *name;	/* perf's metric name (tma_backend_bound, backend_bound, ...) */
	const char *label;	/* tree label (Backend_Bound) */
	const char *parent;	/* perf name of the parent node, NULL at level 1 */
	int tma;		/* shown from --tma=N on; 0 = helper, never shown */
	double scale;		/* 100 for ratio metrics (perf ScaleUnit 100%), 1 when expr is in percent */
	const char *expr;
};

struct tma_formulation {
	const char *name;	/* "perf" (perf's own events) or "gc" (general counters only) */
	const char *desc;
	const struct tma_metric *m;
	int n;
	const struct tma_formulation *base;	/* metrics not found here are looked up in base */
};

/* Encoding of one recipe event. */
struct tma_event_enc {
	const char *key;	/* canonical name as used in the formulas */
	const char *pfm;	/* libpfm4 name (without pmu:: prefix); NULL: use raw */
	uint64_t raw;		/* config when pfm == NULL (no libpfm4 support, e.g. Zen 5, Arm) */
	const char *json;	/* reference JSON event whose EventCode/UMask/... the encoding must equal */
	uint8_t counters;	/* general counters allowed (bit i = counter i); 0 = any */
	int8_t fixed;		/* fixed counter it can use, -1 none */
	uint8_t pseudo;		/* perf-only pseudo event (slots/topdown-*): analyze only, never opened */
};

struct tma_cpu {
	const char *name;	/* perf pmu-events folder name */
	const char *desc;	/* "Intel Skylake-X" */
	enum tma_vendor vendor;
	int family;
	const int *models;	/* x86: models, terminated by -1; arm: MIDR part numbers */
	int stepping_min, stepping_max;	/* -1: any */
	const char *pfm_pmu;	/* libpfm4 PMU name, NULL when libpfm4 lacks it */
	int fixed_counters, gp_counters, gp_counters_smt_off;
	int slots;		/* pipeline width (#slots) */
	int max_level;		/* deepest --tma level with a recipe */
	const struct tma_formulation *perf;	/* perf's own formulas (analyze) */
	const struct tma_formulation *gc;	/* general-counter formulation for the BPF path, NULL = perf */
	const struct tma_event_enc *ev;
	int nev;
	const char *notes;
};

extern const struct tma_cpu *const tma_cpus[];
extern const int tma_ncpus;

#endif
