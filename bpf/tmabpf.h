/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The spine, shared between the BPF programs and user space: per-thread sums,
 * per-CPU snapshots, the accounting's configuration and its stat slots.  Each
 * feature's own map values are in bpf/<feature>.h (uprobes.h, samples.h, ...). */
#ifndef TMABPF_H
#define TMABPF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define TMABPF_MAX_EVENTS 24	/* counters virtualised per thread */
#define TMABPF_COMM_LEN 16

/* Filter modes (account_cfg.filter). */
enum tmabpf_filter {
	FILTER_ALL = 0,		/* every non-idle thread */
	FILTER_TGID = 1,	/* tgids in the pids map (children followed when account_cfg.follow_fork) */
	FILTER_TID = 2,		/* tids in the pids map */
};

/* The accounting's configuration: one struct in .rodata (account.bpf.h's
 * account_cfg) of every program that folds counters, filled in once by the
 * spine's loader (threads_loader.c) and copied by each later loader. */
struct account_cfg {
	__u32 nr_events;	/* counters per CPU in the counters map */
	__u32 nr_cpus;		/* possible CPUs: counters index event * nr_cpus + cpu */
	__u32 filter;		/* enum tmabpf_filter */
	__u32 main_id;		/* the first target id (-p/-t/command): tracked without a pids map lookup */
	__u8 follow_fork;	/* FILTER_TGID: add forked children to the pids map */
	__u8 cgroup;		/* keep thread_stats.cgroup_id (daemon) */
	__u8 seqlock;		/* keep thread_stats.seq (--per-call reads threads on other CPUs) */
	__u8 pad[5];
	__u32 fault_min_mask;	/* bit e: event e counts minor page faults (page-faults, minor-faults) ... */
	__u32 fault_maj_mask;	/* ... major ones (page-faults, major-faults); no exclude_* modifier */
};

/* One counter reading or delta: value plus perf's enabled/running times. */
struct counter_val {
	__u64 value;
	__u64 enabled;
	__u64 running;
};

/* cpu_snap.tid of the snapshot user space seeds just before attaching: it
 * belongs to whichever thread is running on that CPU at attach time. */
#define SNAP_ATTACH 0xffffffffu

/* The uprobe fast path's reading of one event, beside its offset. */
struct uc_event {
	struct counter_val read;	/* the last hit's reading */
	struct counter_val off;		/* thread sums - reading, mod 2^64 */
};

/* Per-CPU snapshot: the reading taken at the last accounting point on this CPU. */
struct cpu_snap {
	__u32 tid;		/* thread the snapshot belongs to; 0 = none */
	__u32 clk_ok;		/* clk_off has been measured on this CPU */
	__u32 busy;		/* a fold is in progress on this CPU (account_guard) */
	__u32 pad;
	__u64 ts;
	__s64 clk_off;		/* bpf_ktime_get_ns() - this CPU's rq clock_task, at the last
				 * traced switch-in (per CPU: they differ by steal time) */
	__u64 base_ts;		/* account_clock(): bpf_ktime_get_ns() at its last rebase ... */
	__u64 base_enabled;	/* ... and event 0's enabled time then; 0: no base yet */
	__u64 gen;		/* bumped at every fold: invalidates the uprobe cache below */
	/* Uprobe fast path (uprobes.bpf.c): while uc_gen == gen and uc_tid is the
	 * running thread, that thread's sums are derived from a counter reading
	 * alone: sums = reading + offset, on-CPU time = uc_oncpu_base + now.
	 * Kept together, before c[], so that a hit touches few cache lines. */
	__u64 uc_gen;
	__u32 uc_tid;		/* 0: no cache */
	__u32 uc_slot;		/* its call-stack slot (UPROBE_NO_SLOT: none) */
	__u64 uc_oncpu_base;
	__u64 uc_blocked_ns;	/* its off-CPU sums, fixed while it runs */
	__u64 uc_runq_ns;
	struct uc_event uc[TMABPF_MAX_EVENTS];
	struct counter_val c[TMABPF_MAX_EVENTS];
};

/* Per-thread sums (value of the threads hash map). */
struct thread_stats {
	__u32 pid;		/* tgid */
	__u32 tid;
	char comm[TMABPF_COMM_LEN];
	__u64 oncpu_ns;
	__u64 offcpu_blocked_ns;
	__u64 offcpu_runqueue_ns;
	__u64 switches_voluntary;	/* switched out while not runnable */
	__u64 switches_involuntary;	/* preempted while runnable */
	__u64 migrations;		/* switched in on another CPU than last time */
	__u64 first_seen_ns;
	__u64 exit_ns;			/* sched_process_exit time, 0 while alive */
	__u64 last_in_ns;		/* 0 when off-CPU or never seen on CPU */
	__u64 last_out_ns;		/* 0 when never switched out */
	__u32 last_cpu;
	__u32 out_blocked;		/* state at last switch-out: 1 blocked, 0 runnable */
	__u32 exited;
	__u32 missed_switch_in;		/* switch-outs whose switch-in the kernel never traced (inferred) */
	__u64 exec_base;		/* se.sum_exec_runtime when accounting started */
	__u64 exec_in;			/* se.sum_exec_runtime at the last switch-in */
	__u64 exec_out;			/* se.sum_exec_runtime at the last switch-out */
	__u64 flt_out[2];		/* the task's min_flt, maj_flt at the last switch-out */
	__u64 cgroup_id;		/* cgroup v2 id (kernfs node id) at the last switch-out; 0 unless
					 * account_cfg.cgroup (the daemon) */
	__u64 slices_ns;		/* on-CPU time by CLOCK_MONOTONIC: its slices, switch-in to switch-out
					 * (oncpu_ns is the kernel's runtime, which leaves out steal and IRQ time) */
	__u64 seq;			/* odd while its switch bookkeeping is being written (a seqlock
					 * for readers on other CPUs: the per-call snapshot) */
	__u64 samples;			/* --sample: samples taken of the thread ... */
	__u64 spin_samples;		/* ... whose user frame was in a spin function (samples.bpf.c) */
	__u64 spin_probe_ns;		/* --per-call: on-CPU time in probed spin functions, added as
					 * their outermost call returns (percall.bpf.h) ... */
	__u64 spin_in;			/* ... and, while in one (spin_nest), its runtime at the entry */
	__u32 spin_nest;
	__u32 pad_spin;
	struct counter_val c[TMABPF_MAX_EVENTS];	/* sums of deltas */
};

/* A thread's off-CPU sums as of now: those folded at its last switch-in plus
 * the interval it is in now, when it is off-CPU (switched out at last_out_ns,
 * blocked or in the runqueue by its state then).  A running thread's interval
 * in progress is on-CPU time, which its reader takes from the kernel's runtime
 * (the BPF side: task_exec_remote_now(); user space: /proc schedstat).  The
 * one definition, for BPF (bpf/percall.bpf.h) and user space (the final read,
 * the trace's counter tracks). */
static inline void thread_offcpu_now(const struct thread_stats *t, __u64 now, __u64 *blocked, __u64 *runq)
{
	*blocked = t->offcpu_blocked_ns;
	*runq = t->offcpu_runqueue_ns;
	if (t->last_in_ns || !t->last_out_ns || now <= t->last_out_ns || t->exited)
		return;
	if (t->out_blocked)
		*blocked += now - t->last_out_ns;
	else
		*runq += now - t->last_out_ns;
}

/* Self-accounting slots of the spine's per-CPU "stats" map; the uprobes and
 * the sample program share that map, so their slots are here too. */
enum tmabpf_stat {
	STAT_THREADS_FULL = 0,	/* threads map full: thread not tracked */
	STAT_PIDS_FULL,		/* pids map full: forked child not followed */
	STAT_EXIT_DROPS,	/* exit ring buffer full: final sums of a thread lost */
	STAT_READ_ERRORS,	/* bpf_perf_event_read_value failed */
	STAT_STACKS_FULL,	/* call-stack map full: thread's calls not tracked */
	STAT_FUNCS_FULL,	/* per-function map full: a (function, thread) pair lost */
	STAT_DEPTH_OVERFLOW,	/* calls deeper than TMABPF_MAX_DEPTH */
	STAT_RET_NO_ENTRY,	/* return without a matching entry (attached mid-call) */
	STAT_TRACE_DROPS,	/* --trace: span records lost (trace ring buffer full) */
	STAT_SAMPLES_SEEN,	/* sampling program runs, idle and untracked threads included */
	STAT_SAMPLES_TARGET,	/* samples of tracked threads */
	STAT_SAMPLE_ROWS_FULL,	/* sample table full: a tracked sample not recorded */
	STAT_SAMPLE_STACKS_FULL,	/* stack store full: a sample recorded without that stack */
	STAT_SAMPLE_STACK_ERRORS,	/* bpf_get_stack failed */
	STAT_SAMPLE_NOTICES_LOST,	/* new-row or exec notice lost (ring buffer full): named at the end */
	STAT_FOLD_INTERRUPTED,	/* a sample interrupted a fold on its CPU: recorded without a counter delta */
	STAT_PERCALL_DROPS,	/* --per-call: a snapshot lost (ring buffer full): its iteration dropped */
	STAT_PERCALL_SAMPLES_LOST,	/* --per-call --sample: a sample's time lost (ring buffer full): in no
					 * iteration's top functions */
	STAT_THREAD_EST_LOST,	/* --sample-events: a sample not in its thread's estimate (no task storage) */
	STAT_STATE_DROPS,	/* --trace: thread-state records lost (state ring buffer full) */
	STAT_PERCALL_SLOTS_FULL,	/* --per-call: a return of a function or span left without a slot
					 * (PERCALL_MAX_FUNCS given): not in the iterations' totals */
	STAT_MAX,
};

#endif
