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

#endif
