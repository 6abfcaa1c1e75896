/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Sampling (--sample): stacks, and the rows of bpf/samples.bpf.c. */
#ifndef TMABPF_BPF_SAMPLES_H
#define TMABPF_BPF_SAMPLES_H
#include "tmabpf.h"

#define TMABPF_STACK_DEPTH 64	/* frames kept per stack: the innermost ones */

/* One stack (value of the sample_stacks map, keyed by a 64-bit hash of it). */
struct stack_frames {
	__u32 nr;		/* valid frames in ip[]; ip[0] is the leaf */
	__u32 pad;
	__u64 ip[TMABPF_STACK_DEPTH];
};

/* Sample aggregate key: (thread, user stack, kernel stack). */
struct sample_key {
	__u32 pid;		/* tgid */
	__u32 tid;
	__u64 ustack;		/* stack id (hash) in sample_stacks; 0: none (kernel thread, lost) */
	__u64 kstack;		/* 0: none (the sample hit user mode) */
};

/* Per (thread, user stack, kernel stack) sums. */
struct sample_stats {
	__u64 count;		/* samples, of every program that records rows */
	__u64 period;		/* sum of the sampling event's periods (ns for cpu-clock) */
	char comm[TMABPF_COMM_LEN];	/* the thread's name at its first sample here */
	/* --sample: the thread's deltas since its previous sample, summed;
	 * --sample-events (evsamples.bpf.c): event e's estimate, the periods of its
	 * samples (value), multiplex-scaled like a count (enabled / running) */
	struct counter_val c[TMABPF_MAX_EVENTS];
	__u64 ev_samples[TMABPF_MAX_EVENTS];	/* --sample-events: samples of event e (in count too) */
};

/* --per-call with --sample: each sample of a tracked thread, in time order
 * per CPU (percall_samples ring), for the iterations' top functions. */
struct percall_sample {
	__u64 ts;		/* bpf_ktime_get_ns() */
	struct sample_key key;	/* its row */
};

/* --per-call's spin time: code whose samples are spin-waiting, as a range of
 * file offsets of one file (inode, device as the kernel encodes it), so that
 * it holds in every process that maps the file (collect/spin.c). */
#define SPIN_MAX_RANGES 256

struct spin_range {
	__u64 ino;
	__u64 dev;		/* (major << 20) | minor */
	__u64 start, end;	/* file offsets [start, end) */
};

#endif
