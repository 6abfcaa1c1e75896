/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Memory samples (--mem-samples): the records of bpf/memsamples.bpf.c. */
#ifndef TMABPF_BPF_MEM_SAMPLE_H
#define TMABPF_BPF_MEM_SAMPLE_H
#include "tmabpf.h"

/* One sample with its data address (ring buffer record). */
struct mem_sample {
	__u32 pid;		/* tgid */
	__u32 tid;
	__u64 ip;		/* sampled instruction (user, or kernel when the sample hit kernel mode) */
	__u64 addr;		/* data address (PERF_SAMPLE_ADDR): load address, or faulting address */
};

enum mem_stat {
	MEM_STAT_SEEN = 0,	/* program runs, untracked threads included */
	MEM_STAT_TARGET,	/* samples of tracked threads */
	MEM_STAT_LOST,		/* ring buffer full: sample lost */
	MEM_STAT_MAX,
};

#endif
