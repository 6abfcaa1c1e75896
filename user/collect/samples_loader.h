/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Loader for bpf/samples.bpf.c (--sample): one sampling perf event per CPU,
 * the sample program sharing the spine's maps, and reading back the sample
 * rows and stacks. */
#ifndef TMABPF_SAMPLES_LOADER_H
#define TMABPF_SAMPLES_LOADER_H
#include <stdbool.h>
#include <stddef.h>
#include "bpf/samples.h"
#include "collect/threads_loader.h"

#define SAMPLE_DEFAULT_HZ 49	/* always-on rate: ~0.05 % of a CPU in BPF time at ~5 us a sample */

struct samples_bpf;
struct bpf_link;
struct ring_buffer;

/* Called (from samples_poll) with the key of each new sample row, and with
 * {pid, tid 0} when a tracked process exec'd. */
typedef void (*sample_notice_fn)(void *ctx, const struct sample_key *key);

struct spin_set;
struct u64map;

struct samples_cfg {
	int hz;			/* samples per second per CPU; 0: no sampling event of its own (rows of
				 * --sample-events only) */
	int max_rows;		/* (thread, stack, stack) rows and stored stacks */
	bool try_cycles;	/* host has a PMU: sample on cycles when it can */
	const struct spin_set *spin;	/* --per-call: count samples in these spin functions; NULL: none */
	bool no_deltas;		/* rows without the threads' counter deltas (--sample-events writes c[]) */
	size_t percall_ring;	/* --per-call: bytes of the ring of each sample's time and row
				 * (struct percall_sample); 0: off */
	sample_notice_fn on_notice;
	void *ctx;
};

struct samples_prog {
	struct samples_bpf *skel;
	struct ring_buffer *rb;
	int nr_cpus;
	int *pfds;			/* per CPU; -1 where not open */
	struct bpf_link **links;	/* per CPU; a link owns (closes) its pfd */
	struct bpf_link *exec_link;	/* sched_process_exec: re-announce a process after exec */
	int hz;
	double period_ns;		/* CPU time one sample stands for (cpu-clock: its period) */
	int max_rows;
	bool try_cycles;		/* from samples_cfg */
	bool cpu_clock;			/* sampling on cpu-clock (period 1e9/hz ns) */
	bool standalone;		/* loaded without the spine: stats slots of its own */
	char event[32];			/* "cpu-clock", "cycles" */
	char why[160];			/* why this event */
	sample_notice_fn on_notice;
	void *ctx;
};

/* One row of the sample table. */
struct sample_row {
	struct sample_key key;
	struct sample_stats s;
};

/* Load the program, reusing the spine's maps (threads_load first).  tp NULL: standalone,
 * every thread, samples without thread records or counter deltas (the daemon's task
 * accounting). */
int samples_load(struct samples_prog *s, struct threads_prog *tp, const struct samples_cfg *cfg, char *err,
		 size_t errlen);
/* The ring of struct percall_sample (samples_cfg.percall_ring). */
int samples_percall_fd(const struct samples_prog *s);
/* Open the sampling event on every CPU and attach the program to each. */
int samples_attach(struct samples_prog *s, char *err, size_t errlen);
/* Change the rate of the open events in place (PERF_EVENT_IOC_PERIOD on each
 * CPU's event), or else close and re-open them at hz: 0 in place, 1 after a
 * re-open (err says why), or -errno with err set. */
int samples_set_rate(struct samples_prog *s, double hz, char *err, size_t errlen);
/* Deliver notices to on_notice (non-blocking). */
void samples_poll(struct samples_prog *s);
/* Every row; *rows is malloc'd. */
int samples_read(struct samples_prog *s, struct sample_row **rows, size_t *n);
struct stack_entry {
	__u64 id;
	struct stack_frames f;
};

/* Every stored stack, sorted by id; *out is malloc'd. */
int samples_read_stacks(struct samples_prog *s, struct stack_entry **out, size_t *n);
/* One stored stack: 0, or -ENOENT. */
int samples_stack_lookup(struct samples_prog *s, __u64 id, struct stack_frames *out);
/* The stack with this id in a sorted array, or NULL. */
const struct stack_frames *samples_stack_find(const struct stack_entry *v, size_t n, __u64 id);
/* Another program that records rows (evsamples.bpf.c) writes into these: every map of obj
 * named as one of the sample program's reuses it (its own .rodata and .bss apart; a map the
 * sample program lacks stays obj's own).  0 or -errno. */
struct bpf_object;
int samples_share_maps(const struct samples_prog *s, struct bpf_object *obj);
/* The account configuration the sample program was loaded with (copied by those programs). */
const struct account_cfg *samples_account_cfg(const struct samples_prog *s);
/* The rows map and the stack store, for a reader that drains them (the daemon's sampler). */
int samples_rows_fd(const struct samples_prog *s);
int samples_stacks_fd(const struct samples_prog *s);
/* The stack store's collection, after each read of the rows (keys, n of them): the ids of the stacks
 * they use are added to seen; once seen may fill half the store (max stacks), every stored stack no
 * row of keys uses goes (a stack sampled again is stored again) and seen holds what is left.  So what
 * is stored is bounded by the stacks the rows used since the last collection.  The stacks deleted. */
size_t samples_stacks_gc(struct samples_prog *s, struct u64map *seen, const struct sample_key *keys, size_t n,
			 size_t max);
/* BPF run time of the sample program (kernel BPF stats). */
void samples_run_stats(struct samples_prog *s, unsigned long long *ns, unsigned long long *cnt);
/* Standalone: add the sampler's own stats slots (STAT_SAMPLE*) into self; shared maps: nothing
 * (the spine's stats already hold them). */
struct self_stats;
void samples_stats_add(struct samples_prog *s, struct self_stats *self);
/* Stop sampling (links and events), keeping the maps readable. */
void samples_detach(struct samples_prog *s);
void samples_destroy(struct samples_prog *s);
/* kernel.perf_event_max_sample_rate, or -1 when unreadable. */
int samples_max_rate(void);

#endif
