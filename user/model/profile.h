/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A profile of stack samples, as pprof models one: sample types (samples/count,
 * cpu/nanoseconds, one per sampled event), and samples of (stack, labels) with
 * one value per type, over tables of mappings, functions and locations that
 * frames share.  Filled from named frames (symbolize.h); written by
 * output/pprof.c.  Equal (stack, labels) add up.
 *
 * Bounded: at most max_samples distinct samples (and the locations, functions
 * and mappings they use); past that, a process's further samples add up in one
 * sample of its own (no thread label) whose stack is one frame "[more stacks]",
 * and once PROFILE_MORE(max_samples) such samples exist, every further one adds
 * up in a single "[more stacks]" sample labelled pid 0, comm "[more processes]"
 * (a fork-heavy host cannot grow it), so that every value is still counted
 * (truncated says how many samples went to either).
 */
#ifndef TMABPF_PROFILE_H
#define TMABPF_PROFILE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/u64map.h"
#include "sym/symbolize.h"

#define PROFILE_MAX_TYPES 32
#define PROFILE_MORE(max) ((max) / 16 + 1)	/* per-process "[more stacks]" samples past max_samples */
#define PROFILE_MAX_DEPTH 128	/* frames kept per sample (user and kernel together) */

/* One frame: its address and what the symbolizer made of it. */
struct profile_frame {
	uint64_t addr;
	struct sym_info si;
};

struct profile_labels {
	uint32_t pid, tid;
	const char *comm;	/* NULL: none */
	const char *cgroup;	/* NULL: none */
};

struct profile_mapping {
	uint64_t start, end, pgoff;
	int64_t file, build_id;		/* string indexes */
	bool kernel;
	bool exe;			/* a process' executable */
	unsigned long long frames;	/* sampled frames in it (the busiest executable is pprof's main binary) */
};

struct profile_function {
	int64_t name, file;		/* string indexes */
};

struct profile_location {
	uint64_t mapping;		/* id (index + 1), 0: none */
	uint64_t addr;
	uint64_t function;		/* id */
};

struct profile_sample {
	uint64_t *locs;			/* ids, leaf first */
	int nlocs;
	int64_t *values;		/* ntypes */
	struct profile_labels l;	/* comm and cgroup as string indexes below */
	int64_t comm, cgroup;
};

struct profile {
	int ntypes;
	int64_t type[PROFILE_MAX_TYPES], unit[PROFILE_MAX_TYPES];	/* string indexes */
	int64_t period_type, period_unit;	/* string indexes, 0: none */
	int64_t period;			/* between two samples, in period_unit; 0: unknown (a frequency) */
	char **str;			/* string table; str[0] is "" */
	size_t nstr, cap_str;
	struct u64map str_idx;		/* hash -> index + 1 (collisions probed) */
	struct profile_mapping *maps;
	size_t nmaps, cap_maps;
	struct u64map map_idx;
	struct profile_function *funcs;
	size_t nfuncs, cap_funcs;
	struct u64map func_idx;
	struct profile_location *locs;
	size_t nlocs, cap_locs;
	struct u64map loc_idx;
	struct profile_sample *samples;
	size_t nsamples, cap_samples, max_samples;
	struct u64map sample_idx;
	unsigned long long truncated;	/* samples added to a process's "[more stacks]" */
	unsigned long long time_ns, duration_ns;	/* Unix time of its start, and its length */
	bool nomem;			/* something was lost to a failed allocation (said by the writer) */
};

/* Types: name and unit of each value ("samples" "count", "cpu" "nanoseconds", ...).  0 or -ENOMEM. */
int profile_init(struct profile *p, int ntypes, const char *const *type, const char *const *unit,
		 size_t max_samples);
/* The sampling period: one sample per period (unit) of type ("cpu" "nanoseconds" 1e9/Hz). */
void profile_set_period(struct profile *p, const char *type, const char *unit, long long period);
/* One sample: frames leaf first (kernel frames before user frames), values[ntypes]. */
void profile_add(struct profile *p, const struct profile_frame *f, int nframes, const long long *values,
		 const struct profile_labels *l);
/* The value type used for event sampling: "task-clock" and "cpu-clock" count nanoseconds. */
const char *profile_event_unit(const char *event);
void profile_free(struct profile *p);

#endif
