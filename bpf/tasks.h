/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Task accounting (daemon --accounting=tasks, no per-switch hook): the records
 * of bpf/tasks.bpf.c. */
#ifndef TMABPF_BPF_TASKS_H
#define TMABPF_BPF_TASKS_H
#include "tmabpf.h"

/* One thread's cumulative scheduler and fault counts, as the kernel keeps them
 * in its task_struct: read by the task iterator once per interval, and at
 * sched_process_exit and sched_process_free (exits ring buffer). */
struct task_rec {
	__u32 pid;		/* tgid */
	__u32 tid;
	char comm[TMABPF_COMM_LEN];
	__u64 cgroup_id;	/* cgroup v2 id (kernfs node id) */
	__u64 start_ns;		/* task->start_time (CLOCK_MONOTONIC): with tid, the thread's identity */
	__u64 now_ns;		/* bpf_ktime_get_ns() when read */
	__u64 exec_ns;		/* se.sum_exec_runtime: on-CPU time */
	__u64 run_delay_ns;	/* sched_info.run_delay: time runnable, waiting for a CPU (0 without CONFIG_SCHED_INFO) */
	__u64 min_flt, maj_flt;	/* page faults, as getrusage counts them */
	__u64 nvcsw, nivcsw;	/* voluntary / involuntary context switches */
	__u64 nr_migrations;	/* se.nr_migrations: moves to another CPU */
	__u32 exited;		/* 1: read at sched_process_exit, 2: at sched_process_free (final counts) */
	__u32 pad;
};

/* The records of the CLI's task accounting (--sample-events): a task_rec and the thread's event
 * estimates so far, from its task storage (thread_est.bpf.h; zeros before its first sample). */
struct task_rec_est {
	struct task_rec r;
	struct counter_val est[TMABPF_MAX_EVENTS];
};

/* Self-accounting slots of the task programs (their own per-CPU array). */
enum task_stat {
	TASK_STAT_EXIT_DROPS = 0,	/* exit ring buffer full: a thread's last interval lost */
	TASK_STAT_MAX,
};

#endif
