/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The sample rows and the stack store, shared by the programs that record
 * samples: --sample's (samples.bpf.c) and --sample-events' (evsamples.bpf.c,
 * whose loader reuses the sample program's maps, so that one reader names and
 * sums both).  A row is (thread, user stack, kernel stack); a stack is kept
 * under a 64-bit hash of its frames (see samples.bpf.c for why not a
 * BPF_MAP_TYPE_STACK_TRACE); each new row is announced on sample_notices so
 * that user space reads the process's maps while it lives.
 */
#ifndef TMABPF_SAMPLE_ROWS_BPF_H
#define TMABPF_SAMPLE_ROWS_BPF_H
#include "account.bpf.h"
#include "samples.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);	/* --max-sample-stacks */
	__type(key, struct sample_key);
	__type(value, struct sample_stats);
} samples SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);	/* --max-sample-stacks */
	__type(key, __u64);		/* hash of the frames */
	__type(value, struct stack_frames);
} sample_stacks SEC(".maps");

PERCPU_VAR(stack_buf, struct stack_frames);	/* bpf_get_stack's output (too big for the BPF stack) */
PERCPU_VAR(sample_zero, struct sample_stats);	/* insert template: only comm is ever written */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} sample_notices SEC(".maps");

static __always_inline __u64 rotl64(__u64 x, int r)
{
	return (x << r) | (x >> (64 - r));
}

/* Take one stack into the store; its id (a nonzero 64-bit hash of the
 * frames), or 0 when there is none or it could not be kept. */
static __always_inline __u64 take_stack(struct bpf_perf_event_data *ctx, __u64 flags)
{
	__u32 zero = 0, nr;
	struct stack_frames *f = bpf_map_lookup_elem(&stack_buf, &zero);
	__u64 h = 0x9e3779b97f4a7c15ULL;
	long bytes;

	if (!f)
		return 0;
	bytes = bpf_get_stack(ctx, f->ip, sizeof(f->ip), flags);
	if (bytes < 0) {
		stat_inc(STAT_SAMPLE_STACK_ERRORS);
		return 0;
	}
	nr = (__u32)bytes / sizeof(__u64);
	if (nr == 0)
		return 0;
	f->nr = nr;
	for (__u32 i = 0; i < TMABPF_STACK_DEPTH; i++) {
		if (i >= nr)
			break;
		h = (rotl64(h, 29) ^ f->ip[i]) * 0x100000001b3ULL;
	}
	/* final avalanche (murmur3 fmix64), so that ids spread over the table */
	h ^= nr;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	if (!h)
		h = 1;
	if (bpf_map_lookup_elem(&sample_stacks, &h))
		return h;
	if (bpf_map_update_elem(&sample_stacks, &h, f, BPF_NOEXIST) && !bpf_map_lookup_elem(&sample_stacks, &h)) {
		stat_inc(STAT_SAMPLE_STACKS_FULL);
		return 0;
	}
	return h;
}

static __always_inline struct sample_stats *row_get(const struct sample_key *key)
{
	struct sample_stats *s = bpf_map_lookup_elem(&samples, key), *tmpl;
	__u32 zero = 0;
	bool created;

	if (s)
		return s;
	tmpl = bpf_map_lookup_elem(&sample_zero, &zero);
	if (!tmpl)
		return NULL;
	bpf_get_current_comm(tmpl->comm, sizeof(tmpl->comm));
	s = map_insert(&samples, key, tmpl, &stats, STAT_SAMPLE_ROWS_FULL, &created);
	/* a new (thread, stack, stack): user space names its frames while the process lives */
	if (created)
		ringbuf_notice(&sample_notices, (void *)key, sizeof(*key), &stats, STAT_SAMPLE_NOTICES_LOST);
	return s;
}

/* The row of the thread (pid, tid) and, with stacks, of the kernel and user stacks interrupted;
 * its key into *key. */
static __always_inline struct sample_stats *row_of(void *ctx, struct task_struct *task, __u32 pid, __u32 tid,
						   bool stacks, struct sample_key *key)
{
	key->pid = pid;
	key->tid = tid;
	key->ustack = key->kstack = 0;
	if (stacks) {
		key->kstack = take_stack(ctx, 0);
		if (!(task->flags & PF_KTHREAD))
			key->ustack = take_stack(ctx, BPF_F_USER_STACK);
	}
	return row_get(key);
}

#endif
