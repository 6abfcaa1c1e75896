/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * percall: the --per-call feature.  The uprobe programs (bpf/percall.bpf.h)
 * put a process snapshot into a ring buffer at each outermost entry and
 * matched return of the marker; this drains it, pairs each thread's entry
 * with its return and turns the two snapshots into an iteration
 * (model/iterations.h): the window's wall time, each thread's on-CPU time
 * (split into compute and spin by its samples in spin functions), blocked
 * and runqueue time, the calling thread's counter deltas and the probed
 * functions' calls and times in the window.
 */
#ifndef TMABPF_PERCALL_H
#define TMABPF_PERCALL_H
#include <stdbool.h>
#include "bpf/uprobes.h"
#include "collect/spin.h"
#include "lib/u64map.h"
#include "model/iterations.h"

struct ring_buffer;
struct percall_sample;
struct sample_key;

/* The leaf function of a sample row (sampling_leaf): its label, its module into *module; NULL when
 * unnamed. */
typedef const char *(*percall_leaf_fn)(void *ctx, const struct sample_key *k, const char **module);
/* Deliver the exited threads' final sums now (the spine's exit ring: percall_thread_exit). */
typedef void (*percall_drain_fn)(void *ctx);

/* A thread's times at its exit, as a snapshot would have taken them then. */
struct percall_exit {
	unsigned int pid;
	unsigned long long exit_ns, first_seen_ns;
	struct percall_thread th;
	struct counter_val c[TMABPF_MAX_EVENTS];	/* its final counter sums */
};

struct percall {
	const char *spec;		/* --per-call LIB:FUNC */
	struct ring_buffer *rb;
	struct u64map open;		/* tid -> its entry snapshot (struct percall_rec) */
	int nr_events;
	struct spin_set spin;		/* resolved before the run (with --sample: compute vs spin) */
	struct iterations res;
	/* --sample: each sample's time and row (percall_samples_open), kept in time order while a
	 * window may still hold it; iterations before res.v[binned] have their top functions */
	struct ring_buffer *srb;
	percall_leaf_fn leaf;
	void *leaf_ctx;
	struct percall_sample *smp;
	size_t sn, scap, binned;
	unsigned long long samples_over;	/* past the buffer's bound (counted as lost) */
	/* threads that exited lately (percall_thread_exit), for the windows they exited in */
	percall_drain_fn drain_exits;
	void *drain_ctx;
	struct percall_exit *ex;
	size_t nex, capex;
	/* the function of a snapshot's slot past PERCALL_DIRECT_FUNCS (bpf/uprobes.h), -1 when not
	 * known; NULL: none */
	int (*slot_fn)(void *ctx, unsigned int slot);
	void *slot_ctx;
	unsigned long long unnamed_calls;	/* calls in slots whose function was not known */
};

/* Read the snapshots of ring buffer map_fd (the uprobes' percall_rb).  0 or -errno with err. */
int percall_open(struct percall *p, int map_fd, int nr_events, char *err, size_t errlen);
/* --sample too: read the samples' ring (sampling_percall_fd) and give each iteration the top
 * functions of its process' samples in its window, named by leaf.  0 or -errno with err. */
int percall_samples_open(struct percall *p, int map_fd, percall_leaf_fn leaf, void *ctx, char *err,
			 size_t errlen);
/* A thread's final sums (the spine's exit record): a window it exited in gets its times up to
 * the exit instead of counting it absent throughout.  drain, when set, delivers the exits so far
 * (called when a window's thread is gone at its return). */
void percall_thread_exit(struct percall *p, const struct thread_stats *s);
/* Drain what the ring buffers hold (every poll, and once at the end). */
void percall_poll(struct percall *p);
/* After the last poll: iterations still open are counted, the marker never called is said in one
 * line; lost: snapshots the ring buffer dropped (STAT_PERCALL_DROPS); samples_lost: samples the
 * samples' ring dropped (STAT_PERCALL_SAMPLES_LOST). */
void percall_finish(struct percall *p, unsigned long long lost, unsigned long long samples_lost);
void percall_free(struct percall *p);

#endif
