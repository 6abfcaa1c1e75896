/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Shared between the BPF programs and user space: map values and limits. */
#ifndef TMABPF_H
#define TMABPF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define TMABPF_MAX_EVENTS 24	/* counters virtualised per thread */
#define TMABPF_COMM_LEN 16

/* Filter modes (rodata cfg.filter). */
enum tmabpf_filter {
	FILTER_ALL = 0,		/* every non-idle thread */
	FILTER_TGID = 1,	/* tgids in the pids map (children followed when cfg.follow_fork) */
	FILTER_TID = 2,		/* tids in the pids map */
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
	__u64 cgroup_id;		/* cgroup v2 id (kernfs node id) at the last switch-out; 0 unless
					 * cfg_cgroup (the daemon) */
	struct counter_val c[TMABPF_MAX_EVENTS];	/* sums of deltas */
};

/* ---- uprobes (per-function deltas) ---- */
#define TMABPF_MAX_DEPTH 32	/* active calls kept per thread */
#define TMABPF_ROW_CACHE 8	/* (function, thread) rows kept in a thread's slot (power of 2) */
#define UPROBE_NO_SLOT 0xffffffffu

/*
 * A probed thread owns a slot: element s of the ustacks array, one contiguous
 * value holding its struct ustack, then TMABPF_ROW_CACHE cached rows (struct
 * func_head + c[n] + self[n]), then TMABPF_MAX_DEPTH frames (struct
 * ucall_frame + c[n] + child[n]), n the events counted.  One lookup per hit
 * and, at shallow depths, one page: on this VM every further page a hit
 * touched (separate maps, vmalloc'd) cost more than all its arithmetic.
 */
struct ustack_ent {
	__u64 sp;		/* stack pointer at entry: its return has sp + RET_SP_DELTA */
	__u32 fn;		/* function id (the uprobe cookie) */
	__u32 outermost;	/* 1 unless fn is already active deeper in the stack */
};

struct ustack {
	__u32 tid;		/* 0: slot free */
	__u32 pid;		/* tgid */
	__u32 depth;
	__u32 overflow;		/* calls not tracked because the stack was full */
	struct ustack_ent ent[TMABPF_MAX_DEPTH];
};

/* One active call (a frame in a slot); followed by struct counter_val
 * c[nr_events] (thread sums at entry) and child[nr_events] (inclusive sums of
 * returned callees, valid once has_child is set: leaves never touch them). */
struct ucall_frame {
	__u64 entry_ns;
	__u64 oncpu_ns;		/* thread sums at entry */
	__u64 blocked_ns;
	__u64 runq_ns;
	__u64 child_oncpu_ns;
	__u64 has_child;
};

struct func_key {
	__u32 fn;
	__u32 tid;
};

/* Scalar sums of a (function, thread) pair: the head of struct func_stats
 * (funcs hash) and of a row cached in a slot (followed by
 * struct counter_val c[nr_events], self[nr_events]).
 *
 * In the BPF maps two kinds of field are stored in a cheaper form, so that
 * the common return (an outermost call without probed callees) writes
 * neither: `calls` counts only the calls that did not end in a matched return
 * (unmatched, past the depth limit, without a slot), and self_oncpu_ns and
 * self[] hold "self - inclusive" (mod 2^64).  uprobes_read() turns them into
 * what the comments below say (func_stats_from_bpf). */
struct func_head {
	__u32 pid;
	__u32 fn1;		/* slot row: function id + 1, 0 = free; funcs: 0 */
	__u64 calls;		/* entries */
	__u64 returns;		/* matched returns */
	__u64 unmatched;	/* frames whose return never came (longjmp, exception, thread exit) */
	__u64 wall_ns;		/* inclusive, outermost calls only */
	__u64 oncpu_ns;
	__u64 self_oncpu_ns;
	__u64 offcpu_blocked_ns;
	__u64 offcpu_runqueue_ns;
};

/* A slot's parts with n events counted (see struct ustack). */
#define USLOT_ROW_BYTES(n) (sizeof(struct func_head) + 2 * (n) * sizeof(struct counter_val))
#define USLOT_FRAME_BYTES(n) (sizeof(struct ucall_frame) + 2 * (n) * sizeof(struct counter_val))
#define USLOT_BYTES(n) (sizeof(struct ustack) + TMABPF_ROW_CACHE * USLOT_ROW_BYTES(n) + \
			TMABPF_MAX_DEPTH * USLOT_FRAME_BYTES(n))

/* Per (function, thread) sums (funcs hash: rows that found no room in the
 * thread's slot, and a slot's rows when its thread exits). */
struct func_stats {
	__u32 pid;
	__u32 fn1;
	__u64 calls;
	__u64 returns;
	__u64 unmatched;
	__u64 wall_ns;
	__u64 oncpu_ns;
	__u64 self_oncpu_ns;
	__u64 offcpu_blocked_ns;
	__u64 offcpu_runqueue_ns;
	struct counter_val c[TMABPF_MAX_EVENTS];	/* inclusive */
	struct counter_val self[TMABPF_MAX_EVENTS];	/* exclusive: minus callees */
};

/* --trace: one record per frame boundary, in the uprobes' trace ring buffer. */
enum trace_kind {
	TRACE_ENTRY = 0,	/* frame pushed */
	TRACE_RETURN = 1,	/* frame's return matched */
	TRACE_UNMATCHED = 2,	/* frame skipped (longjmp, exception): a return for an outer frame came */
	TRACE_EXIT = 3,		/* frame still open when its thread exited */
};

struct trace_rec {
	__u64 ts;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 pid;		/* tgid */
	__u32 tid;
	__u32 fn;		/* function id (uprobe cookie) */
	__u16 depth;		/* the frame's index in the thread's call stack (0 = outermost) */
	__u16 kind;		/* enum trace_kind */
};

/* ---- sampling (--sample) ---- */
#define TMABPF_STACK_DEPTH 64	/* frames kept per stack: the innermost ones */

/* One stack (value of the sample_stacks map, keyed by a 64-bit hash of it). */
struct stack_frames {
	__u32 nr;		/* valid frames in ip[]; ip[0] is the leaf */
	__u32 pad;
	__u64 ip[TMABPF_STACK_DEPTH];
};

/* Sample aggregate key: (thread, user stack, kernel stack). */
struct sample_key {
	__u32 pid;		/* tgid */
	__u32 tid;
	__u64 ustack;		/* stack id (hash) in sample_stacks; 0: none (kernel thread, lost) */
	__u64 kstack;		/* 0: none (the sample hit user mode) */
};

/* Per (thread, user stack, kernel stack) sums. */
struct sample_stats {
	__u64 count;		/* samples */
	__u64 period;		/* sum of the sampling event's periods (ns for cpu-clock) */
	char comm[TMABPF_COMM_LEN];	/* the thread's name at its first sample here */
	struct counter_val c[TMABPF_MAX_EVENTS];	/* the thread's deltas since its previous sample, summed */
};

/* Self-accounting slots (per-CPU array "stats"). */
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
	STAT_MAX,
};

/* ---- off-CPU stacks (--offcpu-stacks) ---- */
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

/* ---- memory samples (--mem-samples) ---- */
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

/* ---- task accounting (daemon --accounting=tasks): no per-switch hook ---- */
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

/* Self-accounting slots of the task programs (their own per-CPU array). */
enum task_stat {
	TASK_STAT_EXIT_DROPS = 0,	/* exit ring buffer full: a thread's last interval lost */
	TASK_STAT_MAX,
};

#endif
