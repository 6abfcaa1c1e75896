/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Per-function deltas (--uprobe) and --trace records: the slots, rows and frames
 * bpf/uprobes.bpf.c keeps and user space reads. */
#ifndef TMABPF_BPF_UPROBES_H
#define TMABPF_BPF_UPROBES_H
#include "roof_shapes.h"
#include "tmabpf.h"

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

/*
 * The window every probe of a run counts in (uprobe_window, set by user space):
 * before every link is attached and after the first is about to detach, calls
 * are tracked but not counted.  A thread's call counts with everything it calls
 * when its outermost probed frame was entered while the window was open, so
 * nested counts agree exactly at both edges: a call in flight when the window
 * opens counts nothing, one in flight when it closes counts all of it (user
 * space waits for those to return before detaching).
 */
enum uprobe_window {
	UWIN_BEFORE = 0,	/* links being attached */
	UWIN_OPEN = 1,
	UWIN_CLOSED = 2,	/* about to detach: calls in flight finish, no new outermost one counts */
};

struct ustack {
	__u32 tid;		/* 0: slot free */
	__u32 pid;		/* tgid */
	__u32 depth;
	__u32 overflow;		/* calls not tracked because the stack was full */
	__u32 marker;		/* --per-call: index + 1 of the outermost marker frame; 0 = none open */
	__u32 iter_seq;		/* --per-call: the slot's iterations begun (percall_rec.seq) */
	__u32 outside;		/* its outermost frame was entered while the window was not open:
				 * nothing in that call counts (enum uprobe_window) */
	struct ustack_ent ent[TMABPF_MAX_DEPTH];
	/* --roofline (bpf/roof_work.bpf.h): the known call a probed entry opened, and the sums of the
	 * thread's recent shapes, here so that a probed known call's entry and return look up nothing */
	struct roof_open roof;
	struct roof_row roof_rows[ROOF_SLOT_ROWS];
	__u64 roof_other_sp;	/* the stack pointer of the known call the roofline program has open on
				 * the thread (in its task storage); 0: none */
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

/*
 * --itt: the spans of the ITT collector (itt/tmabpf_itt.c), whose hooks the uprobe programs
 * tmabpf_itt_begin/_end/_name probe.  A span is a frame of function id ITT_FN | the collector's
 * pair id (per process: user space names it from the name records, sym/itt_names.h), its
 * "stack pointer" the key the collector passes to both hooks.
 */
#define ITT_FN 0x80000000u
#define ITT_NAME_LEN 128

/* One (domain, task name) pair of a process, in the itt_rb ring buffer. */
struct itt_name_rec {
	__u32 pid;		/* tgid */
	__u32 id;		/* the collector's pair id */
	char domain[ITT_NAME_LEN];
	char name[ITT_NAME_LEN];
};

/*
 * --per-call (bpf/percall.bpf.h): every outermost call of a marker function
 * on a thread is an iteration.  At its entry and at its return the uprobe
 * programs put a snapshot of the whole process into the percall_rb ring
 * buffer: each thread's cumulative on-CPU, blocked and runqueue time as of
 * that instant, the calling thread's counter sums, the process' counter sums,
 * and the probed functions' cumulative calls and times; user space
 * (collect/percall.c) subtracts them.
 */
#define PERCALL_MAX_THREADS 64	/* threads of the process walked per snapshot */
#define PERCALL_MAX_FUNCS 256	/* slots of function totals a snapshot carries: ... */
#define PERCALL_DIRECT_FUNCS 64	/* ... function ids below this are their own slot; the others (an --itt span:
				 * ITT_FN | its pair id, of one process) get the next free slot at their
				 * first return (percall_slots: key -> slot) */
#define PERCALL_MARKER_WORDS 1024	/* bitmap of marker function ids (UPROBE_MAX_FUNCS bits) */

enum percall_kind {
	PERCALL_BEGIN = 0,	/* the marker's outermost entry on the thread */
	PERCALL_END = 1,	/* its matched return */
};

/* One thread of the process as of the snapshot's time. */
struct percall_thread {
	__u32 tid;
	__u16 running;		/* on a CPU at the snapshot */
	__u8 torn;		/* its switch bookkeeping kept changing while read: times unsure */
	__u8 untracked;		/* not in the threads map (full: --max-threads): runtime only, no off-CPU split */
	__u64 oncpu_ns;		/* its slices by the clock, the one running now up to the snapshot */
	__u64 runtime_ns;	/* the kernel's runtime (se.sum_exec_runtime, brought forward when running) */
	__u64 blocked_ns;	/* the spine's off-CPU sums as of the snapshot (thread_offcpu_now) */
	__u64 runq_ns;
	__u64 samples;		/* --sample: samples of the thread so far ... */
	__u64 spin_samples;	/* ... of which in a spin function (thread_stats) */
	__u64 spin_probe_ns;	/* on-CPU time in probed spin functions so far (thread_stats) */
};

/* A probed function's totals over every thread of every process (matched returns). */
struct percall_fn {
	__u64 calls;
	__u64 wall_ns;		/* outermost calls: inclusive wall time */
	__u64 oncpu_ns;		/* outermost calls: inclusive on-CPU time of the calling thread */
};

struct percall_rec {
	__u64 ts;		/* bpf_ktime_get_ns() */
	__u32 pid;		/* tgid */
	__u32 tid;		/* the calling thread */
	__u32 kind;		/* enum percall_kind */
	__u32 fn;		/* the marker's function id */
	__u32 seq;		/* the iteration's number on its thread's slot: an entry and a return pair
				 * only when equal (snapshots between them may have been lost) */
	__u32 nslots;		/* fns[0..nslots) filled (slots given so far); the others read as 0 */
	__u32 nthreads;		/* th[] filled */
	__u32 more_threads;	/* threads past PERCALL_MAX_THREADS, not in th[] */
	struct counter_val c[TMABPF_MAX_EVENTS];	/* the calling thread's counter sums */
	/* the process' counter sums over th[]: the calling thread's as of now (c), the others' as of
	 * their last accounting point (a switch, a sample, a probe hit) */
	struct counter_val pc[TMABPF_MAX_EVENTS];
	__u64 unfolded_ns;	/* the other threads on a CPU now: their time since their switch-in, whose
				 * counts pc may lack (a bound: a sample or probe hit may have folded some) */
	struct roof_sums roof;	/* --roofline: the process' known GEMM/GEMV calls returned so far (roof_procs) */
	__u32 roof_unknown;	/* ... unknown: roof_procs was full (roof zero) */
	__u32 pad;
	struct percall_thread th[PERCALL_MAX_THREADS];
	struct percall_fn fns[PERCALL_MAX_FUNCS];	/* by slot (PERCALL_DIRECT_FUNCS) */
};

#endif
