/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * --trace thread states: one record per scheduler state change of a tracked
 * thread (bpf/thread_states.bpf.c), in time order per thread; user space
 * (trace/trace_states.c) turns them into Running / Runnable / Blocked slices.
 */
#ifndef TMABPF_THREAD_STATES_H
#define TMABPF_THREAD_STATES_H

#include "tmabpf.h"

/* What happened; each kind but the seeds and NEW also says the state before it. */
enum state_kind {
	STATE_IN = 0,		/* switched in: Runnable -> Running */
	STATE_PREEMPT = 1,	/* switched out runnable (preempted, yielded): Running -> Runnable */
	STATE_BLOCK = 2,	/* switched out not runnable: Running -> Blocked */
	STATE_WAKE = 3,		/* sched_wakeup: Blocked -> Runnable */
	STATE_NEW = 4,		/* sched_wakeup_new: born Runnable */
	STATE_EXIT = 5,		/* sched_process_exit: Running -> gone */
	STATE_SEED_RUNNING = 6,	/* at attach (the iterator): running then, */
	STATE_SEED_RUNNABLE = 7,	/* waiting in a runqueue, */
	STATE_SEED_BLOCKED = 8,	/* or blocked */
	STATE_KIND_MAX,
};

struct state_rec {
	__u64 ts;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 pid;		/* tgid */
	__u32 tid;
	__u32 kind;		/* enum state_kind */
	__u32 cpu;		/* the CPU the record was taken on */
	__u64 exec;		/* the task's se.sum_exec_runtime then: the start of a slice whose switch-in
				 * the kernel never traced is inferred from it */
	__u64 delay;		/* its sched_info.run_delay then (schedstat's runqueue wait; 0 without
				 * CONFIG_SCHED_INFO): the wait before such a slice, when its wakeup was not
				 * traced either */
	char comm[TMABPF_COMM_LEN];
};

#endif
