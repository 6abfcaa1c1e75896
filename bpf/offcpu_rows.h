/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Off-CPU stacks (--offcpu-stacks): the rows of bpf/offcpu.bpf.c. */
#ifndef TMABPF_BPF_OFFCPU_ROWS_H
#define TMABPF_BPF_OFFCPU_ROWS_H
#include "samples.h"	/* TMABPF_STACK_DEPTH */

enum offcpu_reason {
	OFFCPU_BLOCKED = 0,	/* switched out while not runnable (sleep, I/O, lock) */
	OFFCPU_RUNQUEUE = 1,	/* preempted while runnable: waited for a CPU */
};

/* Aggregate key: (thread, stacks at switch-out, reason). */
struct offcpu_key {
	__u32 pid;		/* tgid */
	__u32 tid;
	__s32 ustack;		/* stack id in offcpu_stacks; < 0: none (kernel thread, lost) */
	__s32 kstack;
	__u32 reason;		/* enum offcpu_reason */
	__u32 pad;
};

struct offcpu_val {
	__u64 ns;		/* off-CPU time, switch-out to switch-in */
	__u64 count;		/* off-CPU periods */
	char comm[TMABPF_COMM_LEN];
};

/* Self-accounting slots of the off-CPU program (its own per-CPU array). */
enum offcpu_stat {
	OFFCPU_STAT_PERIODS = 0,	/* off-CPU periods recorded */
	OFFCPU_STAT_ROWS_FULL,		/* aggregate full: a period not recorded */
	OFFCPU_STAT_STACK_ERRORS,	/* bpf_get_stackid failed (collision in the stack map, or full) */
	OFFCPU_STAT_STARTS_FULL,	/* switch-out not remembered: start map full */
	OFFCPU_STAT_MISSED_IN,		/* switch-ins the kernel never traced: period inferred at the next switch-out */
	OFFCPU_STAT_NOTICES_LOST,
	OFFCPU_STAT_MAX,
};

#endif
