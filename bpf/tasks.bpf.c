// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Per-thread accounting with no per-switch hook (daemon --accounting=tasks and
 * sampled, the CLI's --sample-events).
 *
 * The kernel already keeps, in every task_struct, the cumulative counts the
 * spine would otherwise add up at each sched_switch: on-CPU time
 * (se.sum_exec_runtime), time waiting on a runqueue (sched_info.run_delay),
 * page faults (min_flt, maj_flt), context switches (nvcsw, nivcsw) and
 * migrations (se.nr_migrations).  A task iterator reads them for every thread
 * once per daemon interval; sched_process_exit and sched_process_free, which
 * run once per thread, read them into a ring buffer so that a thread's last
 * interval survives its exit: the exit record orders the end (below), the
 * free record has the final counts (se.sum_exec_runtime is only brought up to
 * date at the dead task's last switch, after sched_process_exit).  Nothing
 * runs at context switches.
 *
 * Ordering: sched_process_exit runs before exit_notify() sets exit_state,
 * and the iterator skips tasks whose exit_state is set (or already reaped).
 * A thread missing from an iteration therefore has its exit record in the
 * ring buffer already, which user space drains right after the iteration (as
 * for the spine's threads map).  A thread between the two may show in an
 * iteration after its exit record: user space keeps a tombstone for it
 * (task_acct.c), so nothing is counted twice.
 *
 * With cfg_est (the CLI's --sample-events) each record is a task_rec_est: the
 * thread's event estimates, which the event sampler keeps in its task storage
 * (thread_est.bpf.h), come with it, an exiting thread's with its final counts.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "maps.bpf.h"
#include "target_filter.bpf.h"
#include "tasks.h"
#include "thread_est.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 21);	/* set by the loader */
} task_exits SEC(".maps");

STAT_MAP(task_stats, TASK_STAT_MAX);

/* records with the threads' event estimates (struct task_rec_est): the CLI's --sample-events */
const volatile bool cfg_est = false;

/* cfg_est: the target filter (the spine's pids map, reused by fd, and its rule).  Only the targets'
 * threads are read and reported, and they get their estimate storage here, in process context:
 * the event sampler only looks it up (on a PMU it runs in NMI context, where creating an element
 * takes a lock a freeing task on the same CPU may hold). */
TARGET_FILTER_SHARED()

static __always_inline bool est_tracked(struct task_struct *task)
{
	return shared_tracked(task->tgid, task->pid);
}

/* the iterator's record with estimates: too big for the stack */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct task_rec_est);
} iter_rec SEC(".maps");

/* task is a trusted BTF pointer: plain loads (the verifier guards faults). */
static __always_inline void task_fill(struct task_rec *r, struct task_struct *task, __u64 now)
{
	r->pid = task->tgid;
	r->tid = task->pid;
	__builtin_memcpy(r->comm, task->comm, sizeof(r->comm));
	r->cgroup_id = task->cgroups->dfl_cgrp->kn->id;	/* as account.bpf.h task_cgroup_id() */
	r->start_ns = task->start_time;
	r->now_ns = now;
	r->exec_ns = task->se.sum_exec_runtime;
	if (bpf_core_field_exists(task->sched_info))
		r->run_delay_ns = task->sched_info.run_delay;
	r->min_flt = task->min_flt;
	r->maj_flt = task->maj_flt;
	r->nvcsw = task->nvcsw;
	r->nivcsw = task->nivcsw;
	r->nr_migrations = task->se.nr_migrations;
}

/* r: zeroed, its task_rec filled; est: the thread's storage (NULL: none, zeros) */
static __always_inline void est_fill(struct task_rec_est *r, struct thread_est *est)
{
	if (!est)
		return;
	for (int e = 0; e < TMABPF_MAX_EVENTS; e++)
		r->est[e] = est->c[e];
}

SEC("iter/task")
int tmabpf_task_iter(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct task_rec r = {};
	struct task_rec_est *re;
	struct thread_est *est;
	__u32 zero = 0;

	if (!task)
		return 0;
	/* past exit_notify(): its exit record is in the ring buffer already */
	if (task->exit_state)
		return 0;
	if (!cfg_est) {
		task_fill(&r, task, bpf_ktime_get_ns());
		bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
		return 0;
	}
	if (!est_tracked(task))
		return 0;
	re = bpf_map_lookup_elem(&iter_rec, &zero);
	if (!re)
		return 0;
	/* the targets' threads that predate the run get their storage at the first iteration */
	est = bpf_task_storage_get(&thread_est, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	__builtin_memset(re, 0, sizeof(*re));
	task_fill(&re->r, task, bpf_ktime_get_ns());
	est_fill(re, est);
	bpf_seq_write(ctx->meta->seq, re, sizeof(*re));
	return 0;
}

static __always_inline void task_end(struct task_struct *task, __u32 kind)
{
	struct task_rec_est *re = NULL;
	struct task_rec *r;

	if (!task->pid || (cfg_est && !est_tracked(task)))
		return;
	if (cfg_est)
		r = (re = bpf_ringbuf_reserve(&task_exits, sizeof(*re), 0)) ? &re->r : NULL;
	else
		r = bpf_ringbuf_reserve(&task_exits, sizeof(*r), 0);
	if (!r) {
		pcpu_inc(&task_stats, TASK_STAT_EXIT_DROPS);
		return;
	}
	if (re)
		__builtin_memset(re, 0, sizeof(*re));
	else
		__builtin_memset(r, 0, sizeof(*r));
	task_fill(r, task, bpf_ktime_get_ns());
	r->exited = kind;
	if (re)
		est_fill(re, bpf_task_storage_get(&thread_est, task, 0, 0));
	/* no wakeup: its irq_work (a self-IPI, a VM exit on virtual machines)
	 * cost ~20 us per record here; user space drains on a timer instead */
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/* cfg_est: a new thread or process of a thread that has estimate storage gets its own (the
 * iteration at the start gave the targets' threads theirs). */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(tmabpf_task_fork, struct task_struct *parent, struct task_struct *child)
{
	if (cfg_est && bpf_task_storage_get(&thread_est, parent, 0, 0))
		bpf_task_storage_get(&thread_est, child, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(tmabpf_task_exit, struct task_struct *task)
{
	task_end(task, 1);
	return 0;
}

/* After release_task() and an RCU grace period: the dead task's final counts. */
SEC("tp_btf/sched_process_free")
int BPF_PROG(tmabpf_task_free, struct task_struct *task)
{
	task_end(task, 2);
	return 0;
}
