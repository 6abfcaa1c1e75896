/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What every program does with its maps and counters (libbpf-tools' maps.bpf.h
 * style): insert-or-find, the per-CPU stat slots, counter_val arithmetic. */
#ifndef TMABPF_MAPS_BPF_H
#define TMABPF_MAPS_BPF_H

#include "tmabpf.h"

/* A per-CPU array of n u64 self-accounting slots (enum tmabpf_stat and the like). */
#define STAT_MAP(name, n)							\
	struct {								\
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);			\
		__uint(max_entries, n);						\
		__type(key, __u32);						\
		__type(value, __u64);						\
	} name SEC(".maps")

/* One per-CPU value of type t: scratch space and insert templates too big for
 * the 512-byte BPF stack. */
#define PERCPU_VAR(name, t)							\
	struct {								\
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);			\
		__uint(max_entries, 1);						\
		__type(key, __u32);						\
		__type(value, t);						\
	} name SEC(".maps")

/* Add one to slot of a STAT_MAP on this CPU. */
static __always_inline void pcpu_inc(void *map, __u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(map, &slot);

	if (v)
		*v += 1;
}

/* The element at key after inserting init there unless one is (BPF_NOEXIST:
 * another CPU may have inserted it meanwhile).  NULL when the map is full,
 * counted in slot full of the STAT_MAP stats.  *created (may be NULL): this
 * call inserted it.  Call it after a lookup missed, with init filled in. */
static __always_inline void *map_insert(void *map, const void *key, const void *init, void *stats, __u32 full,
					bool *created)
{
	long err = bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	void *v = bpf_map_lookup_elem(map, key);

	if (created)
		*created = !err;
	if (!v)
		pcpu_inc(stats, full);
	return v;
}

/* Send size bytes of data to ring buffer rb without a wakeup (user space drains
 * on a timer: a wakeup is an irq_work self-IPI, a VM exit on virtual machines);
 * a full ring is counted in slot lost of the STAT_MAP stats. */
static __always_inline void ringbuf_notice(void *rb, void *data, __u64 size, void *stats, __u32 lost)
{
	if (bpf_ringbuf_output(rb, data, size, BPF_RB_NO_WAKEUP))
		pcpu_inc(stats, lost);
}

/* now - then, or 0 when then is later.  Branch-free (BPF has no conditional
 * move; a branch per subtraction doubled the uprobes' per-event code): every
 * quantity here (ns, counts) stays far below 2^63, so a negative difference is
 * exactly one with the top bit set. */
static __always_inline __u64 sub_clamped(__u64 now, __u64 then)
{
	__u64 d = now - then;

	return d & ~(__u64)((__s64)d >> 63);
}

/* counter_val arithmetic, field by field (value, enabled, running). */

/* *a += *b */
static __always_inline void cv_add(struct counter_val *a, const struct counter_val *b)
{
	a->value += b->value;
	a->enabled += b->enabled;
	a->running += b->running;
}

/* *out = *a + *b */
static __always_inline void cv_sum(struct counter_val *out, const struct counter_val *a, const struct counter_val *b)
{
	out->value = a->value + b->value;
	out->enabled = a->enabled + b->enabled;
	out->running = a->running + b->running;
}

/* *out = *a - *b, mod 2^64 (offsets that a later cv_sum undoes) */
static __always_inline void cv_diff(struct counter_val *out, const struct counter_val *a, const struct counter_val *b)
{
	out->value = a->value - b->value;
	out->enabled = a->enabled - b->enabled;
	out->running = a->running - b->running;
}

/* *out = *a - *b, each field clamped at 0 (sub_clamped) */
static __always_inline void cv_delta(struct counter_val *out, const struct counter_val *a, const struct counter_val *b)
{
	out->value = sub_clamped(a->value, b->value);
	out->enabled = sub_clamped(a->enabled, b->enabled);
	out->running = sub_clamped(a->running, b->running);
}

/* The first n of arrays (n <= TMABPF_MAX_EVENTS, bounded for the verifier). */

static __always_inline void cv_add_n(struct counter_val *a, const struct counter_val *b, __u32 n)
{
	for (__u32 e = 0; e < TMABPF_MAX_EVENTS; e++) {
		if (e >= n)
			break;
		cv_add(&a[e], &b[e]);
	}
}

/* a[e] -= b[e], mod 2^64 */
static __always_inline void cv_sub_n(struct counter_val *a, const struct counter_val *b, __u32 n)
{
	for (__u32 e = 0; e < TMABPF_MAX_EVENTS; e++) {
		if (e >= n)
			break;
		cv_diff(&a[e], &a[e], &b[e]);
	}
}

static __always_inline void cv_copy_n(struct counter_val *a, const struct counter_val *b, __u32 n)
{
	for (__u32 e = 0; e < TMABPF_MAX_EVENTS; e++) {
		if (e >= n)
			break;
		a[e] = b[e];
	}
}

#endif
