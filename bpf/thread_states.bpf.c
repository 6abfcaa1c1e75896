// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * --trace thread states: every scheduler state change of a tracked thread,
 * in order, into a ring buffer (struct state_rec): its switch-out at
 * sched_switch (preempted, prev_state TASK_RUNNING: to the runqueue; else
 * blocked: the spine's and the kernel's nvcsw rule), its switch-in (running),
 * its wakeup (sched_wakeup, sched_wakeup_new: to the runqueue) and its exit.
 * An iterator run once at attach records each tracked thread's state then.
 * Records carry the task's runtime: some hosts never trace switches away
 * from some tasks (threads.bpf.c), and so never the switch-in of the thread
 * that follows; user space infers it from the runtime, as the spine does.
 *
 * A separate object, loaded only with --trace: the spine's per-switch cost
 * without it is unchanged.  The thread filter is the spine's (pids map and
 * account_cfg, reused); nothing here folds counters.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "account.bpf.h"
#include "thread_states.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define TASK_DEAD 0x80		/* include/linux/sched.h: the final switch-out of an exited task */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24);	/* set by the loader */
} state_rb SEC(".maps");

/* Wake user space only past this many bytes waiting (a wakeup per record is
 * an irq_work self-IPI): it drains on its poll timeout otherwise. */
const volatile __u32 cfg_wake_bytes = 1 << 22;
/* TMABPF_TEST_DROP_SWITCH_IN=N (as threads.bpf.c's): ignore about 1 in N switch-ins, as hosts that never
 * trace some switches do, so that the inference is tested on any host.  0: off. */
const volatile __u32 cfg_test_drop_switch_in = 0;

static __always_inline void emit(struct task_struct *task, __u32 kind, __u64 ts)
{
	struct state_rec *r = bpf_ringbuf_reserve(&state_rb, sizeof(*r), 0);

	if (!r) {
		stat_inc(STAT_STATE_DROPS);
		return;
	}
	r->ts = ts;
	r->pid = task->tgid;
	r->tid = task->pid;
	r->kind = kind;
	r->cpu = bpf_get_smp_processor_id();
	r->exec = task->se.sum_exec_runtime;
	r->delay = bpf_core_field_exists(task->sched_info) ? task->sched_info.run_delay : 0;
	__builtin_memcpy(r->comm, task->comm, sizeof(r->comm));
	bpf_ringbuf_submit(r, bpf_ringbuf_query(&state_rb, BPF_RB_AVAIL_DATA) >= cfg_wake_bytes ?
			   BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

static __always_inline bool tracked(struct task_struct *task)
{
	return task->pid && task_tracked(task->tgid, task->pid);
}

/* A change of task now, when it is tracked. */
static __always_inline int note(struct task_struct *task, __u32 kind)
{
	if (tracked(task))
		emit(task, kind, bpf_ktime_get_ns());
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(tmabpf_state_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 ts = bpf_ktime_get_ns();
	long st;

	if (tracked(prev)) {
		st = task_state(prev);
		if (!(st & TASK_DEAD))	/* an exited task's last switch: its exit said it */
			emit(prev, !preempt && st != 0 ? STATE_BLOCK : STATE_PREEMPT, ts);
	}
	if (tracked(next) && !(cfg_test_drop_switch_in && bpf_get_prandom_u32() % cfg_test_drop_switch_in == 0))
		emit(next, STATE_IN, ts);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(tmabpf_state_wakeup, struct task_struct *p)
{
	return note(p, STATE_WAKE);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(tmabpf_state_wakeup_new, struct task_struct *p)
{
	return note(p, STATE_NEW);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(tmabpf_state_exit, struct task_struct *task)
{
	return note(task, STATE_EXIT);
}

SEC("iter/task")
int tmabpf_state_seed(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;

	if (!task || task->exit_state || (task->flags & PF_EXITING) || !tracked(task))
		return 0;
	emit(task, task->on_cpu ? STATE_SEED_RUNNING : task_state(task) == 0 ? STATE_SEED_RUNNABLE : STATE_SEED_BLOCKED,
	     bpf_ktime_get_ns());
	return 0;
}
