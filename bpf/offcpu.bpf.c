// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Off-CPU stacks (--offcpu-stacks), like libbpf-tools' offcputime: at the
 * switch-out of a tracked thread, take its user and kernel stacks (the
 * tracepoint runs in its context) and the reason (blocked: not runnable, by
 * the same rule as the spine's switch_out and the kernel's nvcsw; runqueue:
 * preempted while runnable); at its switch-in, add the time in between to the
 * row of (thread, user stack, kernel stack, reason).
 *
 * The periods are the spine's (threads.bpf.c): switch-out to switch-in, the
 * first switch-out after attach included, periods still open at the end not.
 * A switch-in the kernel never traced (some hosts miss them, see
 * threads.bpf.c) is inferred as the spine does: at the next switch-out (or
 * exit), the slice began (exec time since the last switch-out) ago.
 *
 * The thread filter is the spine's (pids map, reused by fd); this program
 * does no counter accounting (the spine's sched_switch program does).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "account.bpf.h"
#include "offcpu_rows.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where and when a thread went off-CPU. */
struct offcpu_start {
	__u64 ts;
	__u64 exec;		/* se.sum_exec_runtime then */
	__s32 ustack, kstack;
	__u32 reason;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);	/* --max-threads */
	__type(key, __u32);		/* tid */
	__type(value, struct offcpu_start);
} offcpu_start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);	/* --max-sample-stacks */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, TMABPF_STACK_DEPTH * sizeof(__u64));
} offcpu_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);	/* --max-sample-stacks */
	__type(key, struct offcpu_key);
	__type(value, struct offcpu_val);
} offcpu SEC(".maps");

STAT_MAP(offcpu_stats, OFFCPU_STAT_MAX);

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} offcpu_notices SEC(".maps");	/* struct offcpu_key of each new row; tid 0: the process exec'd */


static __always_inline bool tracked(struct task_struct *task)
{
	return task_tracked(task->tgid, task->pid) && !(task->flags & PF_EXITING);
}

/* Add an off-CPU period of ns that began at start to task's row. */
static __always_inline void record(struct task_struct *task, const struct offcpu_start *st, __u64 ns)
{
	struct offcpu_key key = { .pid = task->tgid, .tid = task->pid, .ustack = st->ustack,
				  .kstack = st->kstack, .reason = st->reason };
	struct offcpu_val *v = bpf_map_lookup_elem(&offcpu, &key);

	if (!v) {
		struct offcpu_val zero = {};
		bool created;

		bpf_probe_read_kernel_str(zero.comm, sizeof(zero.comm), task->comm);
		v = map_insert(&offcpu, &key, &zero, &offcpu_stats, OFFCPU_STAT_ROWS_FULL, &created);
		if (created)
			ringbuf_notice(&offcpu_notices, &key, sizeof(key), &offcpu_stats, OFFCPU_STAT_NOTICES_LOST);
		if (!v)
			return;
	}
	__sync_fetch_and_add(&v->ns, ns);
	__sync_fetch_and_add(&v->count, 1);
	pcpu_inc(&offcpu_stats, OFFCPU_STAT_PERIODS);
}

/* A period whose switch-in was never traced: the thread has run since,
 * (exec - st->exec) ns up to now. */
static __always_inline void record_missed_in(struct task_struct *task, const struct offcpu_start *st, __u64 exec,
					     __u64 now)
{
	__u64 slice = exec > st->exec ? exec - st->exec : 0;
	__u64 in = now > slice ? now - slice : 0;

	pcpu_inc(&offcpu_stats, OFFCPU_STAT_MISSED_IN);
	if (in > st->ts)
		record(task, st, in - st->ts);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(tmabpf_offcpu_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();
	struct offcpu_start *st, s = {};
	__u32 tid;

	if (tracked(prev)) {
		tid = prev->pid;
		s.exec = prev->se.sum_exec_runtime;
		st = bpf_map_lookup_elem(&offcpu_start, &tid);
		if (st)
			record_missed_in(prev, st, s.exec, now);
		s.ts = now;
		s.reason = !preempt && task_state(prev) != 0 ? OFFCPU_BLOCKED : OFFCPU_RUNQUEUE;
		s.kstack = bpf_get_stackid(ctx, &offcpu_stacks, 0);
		s.ustack = prev->flags & PF_KTHREAD ? -1 : bpf_get_stackid(ctx, &offcpu_stacks, BPF_F_USER_STACK);
		if ((s.kstack < 0 && s.kstack != -EFAULT) || (s.ustack < 0 && s.ustack != -1 && s.ustack != -EFAULT))
			pcpu_inc(&offcpu_stats, OFFCPU_STAT_STACK_ERRORS);
		if (bpf_map_update_elem(&offcpu_start, &tid, &s, BPF_ANY))
			pcpu_inc(&offcpu_stats, OFFCPU_STAT_STARTS_FULL);
	}
	tid = next->pid;
	if (!tid)
		return 0;
	st = bpf_map_lookup_elem(&offcpu_start, &tid);
	if (!st)
		return 0;
	if (now > st->ts)
		record(next, st, now - st->ts);
	bpf_map_delete_elem(&offcpu_start, &tid);
	return 0;
}

/* A thread exiting without a traced switch-in still had its period. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(tmabpf_offcpu_exit, struct task_struct *task)
{
	__u32 tid = task->pid;
	struct offcpu_start *st = bpf_map_lookup_elem(&offcpu_start, &tid);

	if (!st)
		return 0;
	record_missed_in(task, st, task->se.sum_exec_runtime, bpf_ktime_get_ns());
	bpf_map_delete_elem(&offcpu_start, &tid);
	return 0;
}

/* After an exec the process maps other files: user space reads its maps again. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(tmabpf_offcpu_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct offcpu_key key = { .pid = p->tgid };

	if (task_tracked(p->tgid, p->pid))
		ringbuf_notice(&offcpu_notices, &key, sizeof(key), &offcpu_stats, OFFCPU_STAT_NOTICES_LOST);
	return 0;
}
