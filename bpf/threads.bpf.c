// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Per-thread accounting at sched_switch: virtualised counters (account.bpf.h),
 * on-CPU time, off-CPU time split by the state at switch-out (blocked vs
 * runqueue), voluntary/involuntary switches, migrations.  Follows forks of
 * tracked processes and hands the final sums of exiting threads to user space.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "account.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";


static __always_inline __u64 task_exec_ns(struct task_struct *task)
{
	return task->se.sum_exec_runtime;
}

/*
 * Switch-out of t.  On-CPU time comes from se.sum_exec_runtime (what
 * CLOCK_THREAD_CPUTIME_ID reports), so it stays exact when the kernel does
 * not trace a switch-in: some hosts never emit sched_switch for switches away
 * from certain tasks (seen: a sandbox agent's threads), which leaves a
 * switch-out with no switch-in before it.  The caller has inferred that
 * switch-in (account_catch_up), so off-CPU time still adds up.
 */
static __always_inline void switch_out(struct thread_stats *t, struct task_struct *prev, __u64 exec, bool preempt,
				       __u64 now, __u32 cpu)
{
	/* Same rule as the kernel's nvcsw/nivcsw in __schedule(). */
	bool blocked = !preempt && task_state(prev) != 0;

	t->oncpu_ns = sub_clamped(exec, t->exec_base);
	if (t->last_in_ns)
		t->slices_ns += sub_clamped(now, t->last_in_ns);
	t->exec_out = exec;
	t->flt_out[0] = prev->min_flt;
	t->flt_out[1] = prev->maj_flt;
	__builtin_memcpy(t->comm, prev->comm, sizeof(t->comm));	/* exec and prctl rename threads */
	if (account_cfg.cgroup)
		t->cgroup_id = task_cgroup_id(prev);	/* tasks move between cgroups */
	t->last_in_ns = 0;
	t->last_out_ns = now;
	t->out_blocked = blocked;
	t->last_cpu = cpu;
	if (blocked)
		t->switches_voluntary++;
	else
		t->switches_involuntary++;
}

/* Test hooks, 0 = off.  TMABPF_TEST_DROP_SWITCH_IN=N: ignore about 1 in N
 * switch-ins of tracked threads.  TMABPF_TEST_HIDE_SWITCH=N: ignore about 1 in
 * N switches from an untracked task (idle included) to a tracked one whole, as
 * hosts that never trace switches away from some tasks do: the CPU's delta
 * since its snapshot then holds that task's counts too. */
const volatile __u32 cfg_test_drop_switch_in = 0;
const volatile __u32 cfg_test_hide_switch = 0;
/* TMABPF_TEST_DROP_SWITCH_OUT=N: ignore about 1 in N switch-outs of tracked threads (their side of the
 * switch), as hosts that never trace switches away from some tasks do. */
const volatile __u32 cfg_test_drop_switch_out = 0;

static __always_inline bool test_one_in(__u32 n)
{
	return n && bpf_get_prandom_u32() % n == 0;
}

/* Measure this CPU's ktime - clock_task offset: the task switched to had its
 * se.exec_start set to clock_task just before the tracepoint (the task
 * switched from, at its last runtime update, when next is idle). */
static __always_inline void calibrate_clock(struct cpu_snap *snap, struct task_struct *prev, struct task_struct *next,
					    __u64 ts)
{
	struct task_struct *t = next->pid ? next : prev;

	if (!t->pid)
		return;
	snap->clk_off = (__s64)ts - (__s64)t->se.exec_start;
	snap->clk_ok = 1;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(tmabpf_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct thread_stats *pt = thread_get(prev);
	struct thread_stats *nt = thread_get(next);
	__u32 zero = 0, cpu, was;
	struct cpu_snap *snap;
	struct reading *now;
	struct fold_share sh = {};
	__u64 ts, prev_exec = 0;
	bool pw = false, nw = false;

	/* separate tests: clang would otherwise OR the two pointers, which the verifier refuses */
	if (!pt) {
		barrier_var(nt);
		if (!nt)
			return 0;
	}
	if (!pt && nt && test_one_in(cfg_test_hide_switch))
		return 0;
	if (nt && test_one_in(cfg_test_drop_switch_in))
		nt = NULL;
	if (pt && test_one_in(cfg_test_drop_switch_out)) {
		pt = NULL;
		if (!nt)
			return 0;
	}
	snap = bpf_map_lookup_elem(&snaps, &zero);
	if (!snap)
		return 0;
	was = account_guard(snap);
	now = account_read(snap);
	if (!now) {
		account_unguard(snap, was);
		return 0;
	}
	/* from the switch's time on, until its bookkeeping is written: a reader
	 * on another CPU must not take the threads' state before it as now's */
	if (pt)
		pw = thread_write_begin(pt);
	if (nt)
		nw = thread_write_begin(nt);
	ts = bpf_ktime_get_ns();
	if (pt) {
		prev_exec = task_exec_ns(prev);
		account_catch_up(pt, prev, snap, ts, &sh);	/* its switch-in untraced */
	}
	account_fold_share(pt, snap, now, NULL, nt ? nt->tid : 0, &sh, ts);
	cpu = bpf_get_smp_processor_id();
	calibrate_clock(snap, prev, next, ts);
	if (pt) {
		switch_out(pt, prev, prev_exec, preempt, ts, cpu);
		thread_write_end(pt, pw);
	}
	if (nt) {
		account_switch_in(nt, task_exec_ns(next), ts, cpu);
		thread_write_end(nt, nw);
	}
	account_unguard(snap, was);	/* after the threads' switch bookkeeping too */
	return 0;
}

/* The CLI (cfg_seed): run once right after attach (threads_attach), it seeds
 * every tracked thread in its state then (thread_seed): running, waiting in
 * the runqueue, or blocked, so that each thread's times count from attach,
 * whatever it does first (a thread blocked at attach had its wait before its
 * first switch-in lost, and one that never ran was missing).  The fork
 * program seeds the threads born during the run the same way, from their
 * fork: their wait for a first CPU is the run's too.  The daemon seeds
 * nothing: its deltas count from a thread's first sight. */
const volatile bool cfg_seed = false;
__u64 seed_ns = 0;	/* the time every thread is seeded at (the run's start), set before the iteration */

SEC("iter/task")
int tmabpf_seed(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;

	if (task)
		thread_seed(task, seed_ns ? seed_ns : bpf_ktime_get_ns(), false);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(tmabpf_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u8 one = 1;

	if (account_cfg.follow_fork && account_cfg.filter == FILTER_TGID && ptgid != ctgid &&
	    bpf_map_lookup_elem(&pids, &ptgid) && bpf_map_update_elem(&pids, &ctgid, &one, BPF_ANY))
		stat_inc(STAT_PIDS_FULL);
	if (cfg_seed)	/* not woken yet: runnable from now (its state still says new) */
		thread_seed(child, bpf_ktime_get_ns(), true);
	return 0;
}

/* -- CMD: the command's counts start at its exec, as perf's enable_on_exec:
 * what the forked child ran before execve (tmabpf's own code, the dynamic
 * linker binding execvp) and its wait for the release are not the command's.
 * cfg_exec_start is the command's pid; the program is loaded only then. */
const volatile __u32 cfg_exec_start = 0;
bool exec_started = false;

SEC("tp_btf/sched_process_exec")
int BPF_PROG(tmabpf_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tid = p->pid, zero = 0, was;
	struct thread_stats *t;
	struct cpu_snap *snap;
	struct reading *now;
	__u64 ts, exec;

	if (tid != cfg_exec_start || exec_started)
		return 0;
	exec_started = true;	/* the first exec only, as perf */
	t = bpf_map_lookup_elem(&threads, &tid);
	snap = bpf_map_lookup_elem(&snaps, &zero);
	if (!t || !snap)
		return 0;
	ts = bpf_ktime_get_ns();
	was = account_guard(snap);
	now = account_read(snap);
	if (now) {
		/* fold what ran before into t (t owns the snapshot now), then start over */
		account_current_at(t, p, snap, now, ts, false);
		exec = task_exec_now(p, snap, ts);
		for (__u32 e = 0; e < TMABPF_MAX_EVENTS; e++)
			t->c[e] = (struct counter_val){};
		t->oncpu_ns = t->offcpu_blocked_ns = t->offcpu_runqueue_ns = t->slices_ns = 0;
		t->switches_voluntary = t->switches_involuntary = t->migrations = 0;
		t->missed_switch_in = 0;
		t->exec_base = t->exec_in = exec;
		t->first_seen_ns = t->last_in_ns = ts;
		t->last_out_ns = 0;
	}
	account_unguard(snap, was);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(tmabpf_exit, struct task_struct *task)
{
	__u32 tid = task->pid;
	struct thread_stats *t = bpf_map_lookup_elem(&threads, &tid);
	__u64 now = bpf_ktime_get_ns();
	bool w;

	if (!t)
		return 0;
	account_current(t, task, now, false);	/* guarded: a sample may interrupt it */
	/* sum_exec_runtime is not updated mid-slice: exec at switch-in + time since */
	w = thread_write_begin(t);
	if (t->last_in_ns) {
		t->oncpu_ns = sub_clamped(t->exec_in, t->exec_base) + sub_clamped(now, t->last_in_ns);
		t->slices_ns += sub_clamped(now, t->last_in_ns);
	}
	else
		t->oncpu_ns = sub_clamped(task_exec_ns(task), t->exec_base);
	t->last_in_ns = 0;
	t->exited = 1;
	t->exit_ns = now;
	thread_write_end(t, w);
	bpf_probe_read_kernel_str(t->comm, sizeof(t->comm), task->comm);
	if (account_cfg.cgroup)
		t->cgroup_id = task_cgroup_id(task);
	/* No wakeup unless the ring is half full: a wakeup is an irq_work
	 * self-IPI (a VM exit on virtual machines), 12-14 us per exit here
	 * against under 1 us without.  User space drains on its poll timeout. */
	if (bpf_ringbuf_output(&exits, t, sizeof(*t),
			       bpf_ringbuf_query(&exits, BPF_RB_AVAIL_DATA) * 2 >= bpf_ringbuf_query(&exits, BPF_RB_RING_SIZE) ?
			       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP))
		stat_inc(STAT_EXIT_DROPS);
	bpf_map_delete_elem(&threads, &tid);
	return 0;
}
