/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The target filter's rule, one definition for every BPF object that applies
 * it: the accounting routine (account.bpf.h, its account_cfg and pids map)
 * and the task programs (tasks.bpf.c, the same map reused by fd).
 */
#ifndef TMABPF_TARGET_FILTER_BPF_H
#define TMABPF_TARGET_FILTER_BPF_H
#include "tmabpf.h"

/* Is (tgid, tid) a target?  filter: enum tmabpf_filter; main_id: the first target id, tracked
 * without a lookup; pids: the map of the other ids (tgids or tids, per filter).  Idle (tid 0)
 * never is. */
static __always_inline bool target_tracked(__u32 filter, __u32 main_id, void *pids, __u32 tgid, __u32 tid)
{
	__u32 id = filter == FILTER_TGID ? tgid : tid;

	if (tid == 0)
		return false;
	if (filter == FILTER_ALL)
		return true;
	return id == main_id || bpf_map_lookup_elem(pids, &id) != NULL;
}

/* In an object that applies the spine's filter without being the spine (the task programs,
 * --roofline): the rule in .rodata, set by its loader, and the pids map, the spine's reused by fd.
 * shared_tracked() applies it. */
#define TARGET_FILTER_SHARED()							\
	const volatile __u32 cfg_filter = 0;	/* enum tmabpf_filter */	\
	const volatile __u32 cfg_main_id = 0;					\
	struct {								\
		__uint(type, BPF_MAP_TYPE_HASH);				\
		__uint(max_entries, 1);		/* the spine's, reused */	\
		__type(key, __u32);						\
		__type(value, __u8);						\
	} pids SEC(".maps");							\
	static __always_inline bool shared_tracked(__u32 tgid, __u32 tid)	\
	{									\
		return target_tracked(cfg_filter, cfg_main_id, &pids, tgid, tid); \
	}

#endif
