/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The --uprobe program's per-thread slots (uprobes.h): the array of slots and
 * the thread -> slot hash.  Defined here for the two programs that read them:
 * bpf/uprobes.bpf.c, which owns them, and bpf/roofline.bpf.c, which reuses
 * them by fd to see the known call a --uprobe entry opened on its thread.
 */
#ifndef TMABPF_USLOTS_BPF_H
#define TMABPF_USLOTS_BPF_H
#include "uprobes.h"

/* The slots (tmabpf.h): one value per slot, its size set by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);			/* --max-stacks */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct ustack));	/* uprobes_slot_bytes(nr_events) */
} ustacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);		/* slots */
	__type(key, __u32);		/* tid */
	__type(value, __u32);		/* its slot */
} uslots SEC(".maps");

static __always_inline struct ustack *stack_at(__u32 slot)
{
	return bpf_map_lookup_elem(&ustacks, &slot);
}

/* Thread tid's slot; NULL when it has none. */
static __always_inline struct ustack *uslot_of(__u32 tid)
{
	__u32 *slot = bpf_map_lookup_elem(&uslots, &tid);

	return slot ? stack_at(*slot) : NULL;
}

#endif
