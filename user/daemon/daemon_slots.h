/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The daemon sampler's function slots: the sampled sums of at most n (series,
 * module, symbol) pairs, the rest in one "[other]" row.  Each interval's
 * candidates, heaviest first, take their slot, a free one, or that of a
 * function sampled less than half as often (its smoothed score: score *
 * DSAMP_DECAY + samples per interval); an evicted slot's sums are kept among
 * the last DSAMP_PAST evicted, so that a series that comes back resumes
 * (counters never go down unless more than that many were evicted in
 * between).  A slot goes with its series, or after expire_ns without samples.
 */
#ifndef TMABPF_DAEMON_SLOTS_H
#define TMABPF_DAEMON_SLOTS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DSAMP_PAST 1024			/* evicted function slots remembered */
#define DSAMP_DECAY 0.8			/* slot score: score * DECAY + samples, per interval */

/* Sampled sums of one series (process, or a cgroup's "[other]"). */
struct dsamp_sums {
	double cpu_ns;			/* weighted: samples x the period in force */
	unsigned long long samples;
};

enum dsamp_series { DS_PROC = 1, DS_CGROUP, DS_OVERFLOW };

struct dsamp_fn {
	bool used;
	enum dsamp_series kind;
	uint64_t id;			/* pid, or cgroup id */
	const void *owner;		/* agg_proc, for DS_PROC */
	uint64_t hash;
	char *module, *symbol;		/* owned */
	struct dsamp_sums s;
	unsigned long long active_ns;
	double score;			/* samples per interval, smoothed */
};

/* One interval's samples of a (series, leaf) pair. */
struct dsamp_cand {
	enum dsamp_series kind;
	uint64_t id;
	const void *owner;
	uint64_t hash;
	const char *module, *symbol;	/* interned by a symbolizer */
	unsigned long long count;
};

struct dsamp_slots {
	int n;				/* --top-functions; 0: every function in other */
	unsigned long long expire_ns;
	struct dsamp_fn *fns;		/* n slots */
	struct dsamp_fn *past;		/* DSAMP_PAST slots evicted for hotter ones: their sums resume */
	size_t past_next;
	struct dsamp_sums other;	/* functions without a slot */
};

/* Does the series of (kind, id, owner) still exist? */
typedef bool (*dsamp_alive_fn)(void *ctx, enum dsamp_series kind, uint64_t id, const void *owner);

/* 0, or -1 out of memory. */
int daemon_slots_init(struct dsamp_slots *s, int n, unsigned long long expire_ns);
/* One interval's candidates (reordered), each sample weighing w ns, at now. */
void daemon_slots_route(struct dsamp_slots *s, struct dsamp_cand *c, size_t n, double w, unsigned long long now);
/* Free the slots of gone series, and those idle for expire_ns. */
void daemon_slots_expire(struct dsamp_slots *s, dsamp_alive_fn alive, void *ctx, unsigned long long now);
void daemon_slots_free(struct dsamp_slots *s);

#endif
