/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The accounting routine shared by every tmabpf BPF program.
 *
 * Counters are opened system-wide, one per (event, CPU), in the `counters`
 * PERF_EVENT_ARRAY at index event * nr_cpus + cpu.  Each CPU keeps a snapshot
 * of its last reading and the thread it belongs to.  At every hook (sched_switch
 * now; uprobe entry/exit and samples later) account_fold() adds the delta since
 * that snapshot to the current thread's sums and re-snapshots.  Threads thus
 * carry virtualised counters that stay right across migrations: a thread only
 * ever receives deltas taken on the CPU it was running on, between two of its
 * own accounting points.
 *
 * Programs that include this header share its maps; loaders after the first
 * reuse the map fds (bpf_map__reuse_fd).
 *
 * Reentrancy.  A fold reads the counters, then moves the snapshot: two steps
 * on per-CPU state.  The perf_event programs (samples, memory samples) run in
 * the counter's overflow interrupt: an NMI on x86, an IRQ (or pseudo-NMI) on
 * arm64, which can land inside a fold on the same CPU (sched_switch on x86,
 * uprobes, exit, exec everywhere).  Folding there would either fold the same
 * delta twice (the interrupted fold then moves the snapshot back to its
 * older reading) or lose one (its reading, in the shared scratch, replaced).
 * So every fold holds cpu_snap.busy (account_guard), and an interrupt that
 * finds it held records its sample without a counter delta
 * (account_current_irq): the delta stays with the thread and goes to its
 * next accounting point.  The uprobes' fast path folds nothing: it reads
 * counters into its own cache, whose offsets a fold leaves valid.
 */
#ifndef TMABPF_ACCOUNT_BPF_H
#define TMABPF_ACCOUNT_BPF_H

#include "tmabpf.h"
#include "kernel.bpf.h"
#include "maps.bpf.h"
#include "target_filter.bpf.h"

_Static_assert(sizeof(struct counter_val) == sizeof(struct bpf_perf_event_value) &&
		       __builtin_offsetof(struct counter_val, enabled) == __builtin_offsetof(struct bpf_perf_event_value, enabled) &&
		       __builtin_offsetof(struct counter_val, running) == __builtin_offsetof(struct bpf_perf_event_value, running),
	       "counter_val must have bpf_perf_event_value's layout");

/* Set by the loader (tmabpf.h); the verifier sees its fields as constants and
 * drops the code of the options that are off. */
const volatile struct account_cfg account_cfg = { .nr_cpus = 1, .filter = FILTER_ALL, .follow_fork = 1 };

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} counters SEC(".maps");	/* max_entries = nr_events * nr_cpus, set by the loader */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);	/* --max-threads */
	__type(key, __u32);		/* tid */
	__type(value, struct thread_stats);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);	/* --max-pids */
	__type(key, __u32);		/* tgid or tid, per account_cfg.filter */
	__type(value, __u8);
} pids SEC(".maps");

PERCPU_VAR(snaps, struct cpu_snap);

struct reading {
	struct counter_val c[TMABPF_MAX_EVENTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);		/* 0: current reading, 1: delta out */
	__type(key, __u32);
	__type(value, struct reading);
} scratch SEC(".maps");

PERCPU_VAR(new_thread, struct thread_stats);	/* insert template (too big for the stack) */

STAT_MAP(stats, STAT_MAX);

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);	/* final sums of exited threads */
} exits SEC(".maps");

/* The spine's stat slots (enum tmabpf_stat). */
static __always_inline void stat_inc(__u32 slot)
{
	pcpu_inc(&stats, slot);
}

/* Is this task one we account for?  Idle (tid 0) never is. */
static __always_inline bool task_tracked(__u32 tgid, __u32 tid)
{
	return target_tracked(account_cfg.filter, account_cfg.main_id, &pids, tgid, tid);
}

/* The task's cgroup v2 id (its kernfs node id, the cgroup directory's inode
 * number); 0 unless account_cfg.cgroup.  task is a BTF pointer: direct loads, which the
 * verifier guards (a fault reads 0), far cheaper than BPF_CORE_READ's helper calls. */
static __always_inline __u64 task_cgroup_id(struct task_struct *task)
{
	if (!account_cfg.cgroup)
		return 0;
	return task->cgroups->dfl_cgrp->kn->id;
}

/* The insert template of a thread first seen at ts (new_thread: its fields
 * other than these stay zero). */
static __always_inline struct thread_stats *thread_template(struct task_struct *task, __u64 ts)
{
	__u32 zero = 0;
	struct thread_stats *tmpl = bpf_map_lookup_elem(&new_thread, &zero);

	if (!tmpl)
		return NULL;
	tmpl->pid = task->tgid;
	tmpl->tid = task->pid;
	bpf_probe_read_kernel_str(tmpl->comm, sizeof(tmpl->comm), task->comm);
	tmpl->first_seen_ns = ts;
	tmpl->cgroup_id = task_cgroup_id(task);
	return tmpl;
}

/* The thread's stats entry, created on first sight when the task is tracked. */
/* task must be a trusted BTF pointer (tp_btf arguments, bpf_get_current_task_btf()):
 * fields are then plain loads, far cheaper than bpf_probe_read_kernel. */
static __always_inline struct thread_stats *thread_get(struct task_struct *task)
{
	__u32 tid = task->pid, tgid = task->tgid;
	struct thread_stats *t, *tmpl;

	if (!task_tracked(tgid, tid))
		return NULL;
	t = bpf_map_lookup_elem(&threads, &tid);
	if (t)
		return t;
	/* an exiting task was already reported by sched_process_exit */
	if (task->flags & PF_EXITING)
		return NULL;
	tmpl = thread_template(task, bpf_ktime_get_ns());
	if (!tmpl)
		return NULL;
	return map_insert(&threads, &tid, tmpl, &stats, STAT_THREADS_FULL, NULL);
}

/* Read event e on cpu into *c.  A failed read repeats the snapshot's value
 * so that it contributes a zero delta (and is counted).  True when read. */
static __always_inline bool account_read_one(struct cpu_snap *snap, __u32 e, __u32 cpu, __u32 ncpu,
					     struct counter_val *c)
{
	/* struct counter_val has bpf_perf_event_value's layout: read in place */
	if (!bpf_perf_event_read_value(&counters, (__u64)(e * ncpu + cpu), (struct bpf_perf_event_value *)c,
				       sizeof(*c)))
		return true;
	stat_inc(STAT_READ_ERRORS);
	*c = snap->c[e];
	return false;
}

/* Read every selected counter on this CPU (account_read_one). */
static __always_inline void account_read_into(struct cpu_snap *snap, struct counter_val *c)
{
	__u32 cpu = bpf_get_smp_processor_id(), n = account_cfg.nr_events, ncpu = account_cfg.nr_cpus;

	for (__u32 e = 0; e < TMABPF_MAX_EVENTS; e++) {
		if (e >= n)
			break;
		account_read_one(snap, e, cpu, ncpu, &c[e]);
	}
}

static __always_inline struct reading *account_read(struct cpu_snap *snap)
{
	__u32 zero = 0;
	struct reading *r = bpf_map_lookup_elem(&scratch, &zero);

	if (r)
		account_read_into(snap, r->c);
	return r;
}

/* x * num / den without overflow for the magnitudes we meet (num <= den). */
static __always_inline __u64 scale_share(__u64 x, __u64 num, __u64 den)
{
	if (num >= den)
		return x;
	num >>= 10;	/* ~us: counter values stay far below 2^64 / 2^33 */
	den >>= 10;
	return den ? x * num / den : 0;
}

/*
 * What a thread gets of a counter delta it does not own: a slice whose
 * switch-in the kernel never traced (account_catch_up) ran `num` of the `den`
 * ns since the CPU's snapshot, so it takes that time-share; except of the
 * page-fault events, where the kernel's own per-task counts (min_flt,
 * maj_flt since the thread's last switch-out: `flt`, when flt_ok) say
 * exactly how many were its own.  A time-share of those is badly wrong: the
 * untraced task before the slice (an agent's poll loop, idle) seldom faults
 * at the rate the thread does.  num == 0: no share.
 */
struct fold_share {
	__u64 num, den;
	__u64 flt[2];	/* minor, major faults of the task in the slice */
	bool flt_ok;
};

/* The share of event e's delta d (value, enabled and running) that goes to the
 * thread: see struct fold_share. */
static __always_inline void share_delta(struct counter_val *d, __u32 e, const struct fold_share *sh)
{
	__u64 bit = 1ULL << e, flt = 0;
	bool fault = sh->flt_ok && ((account_cfg.fault_min_mask | account_cfg.fault_maj_mask) & bit);

	if (fault) {
		if (account_cfg.fault_min_mask & bit)
			flt += sh->flt[0];
		if (account_cfg.fault_maj_mask & bit)
			flt += sh->flt[1];
	}
	d->value = fault ? (flt < d->value ? flt : d->value) : scale_share(d->value, sh->num, sh->den);
	d->enabled = scale_share(d->enabled, sh->num, sh->den);
	d->running = scale_share(d->running, sh->num, sh->den);
}

/*
 * THE accounting routine.  Fold the delta between reading `now` and this CPU's
 * snapshot into thread t when the snapshot belongs to t, store the delta in
 * `delta` when non-NULL (zeros when nothing was folded), then make `now` the
 * snapshot, owned by `next_owner` (0: nobody).  When t does not own the
 * snapshot but ran part of the time since it (a switch-in the kernel never
 * traced), sh says its share (NULL, or sh->num 0: none).
 */
static __always_inline void account_fold_share(struct thread_stats *t, struct cpu_snap *snap,
					       const struct reading *now, struct reading *delta,
					       __u32 next_owner, const struct fold_share *sh, __u64 ts)
{
	bool own = t && snap->tid != 0 && (snap->tid == t->tid || snap->tid == SNAP_ATTACH);
	bool share = t && !own && sh && sh->num && sh->den;

	for (__u32 e = 0; e < TMABPF_MAX_EVENTS; e++) {
		struct counter_val d = {};

		if (e >= account_cfg.nr_events)
			break;
		if (own || share) {
			cv_delta(&d, &now->c[e], &snap->c[e]);
			if (share)
				share_delta(&d, e, sh);
			cv_add(&t->c[e], &d);
		}
		if (delta)
			delta->c[e] = d;
		snap->c[e] = now->c[e];
	}
	snap->tid = next_owner;
	snap->ts = ts;
	snap->gen++;
}

/* Hold this CPU's fold (see "Reentrancy" above); returns the previous state,
 * for account_unguard.  The compiler barriers keep the flag outside the
 * fold's loads and stores; an interrupt on this CPU sees them in program
 * order. */
static __always_inline __u32 account_guard(struct cpu_snap *snap)
{
	__u32 was = snap->busy;

	snap->busy = 1;
	barrier();
	return was;
}

static __always_inline void account_unguard(struct cpu_snap *snap, __u32 was)
{
	barrier();
	snap->busy = was;
}

/* t's on-CPU time as of the task's last runtime update (se.sum_exec_runtime,
 * what CLOCK_THREAD_CPUTIME_ID reports), brought forward to now with the
 * task's se.exec_start (the CPU's clock_task at that update) and this CPU's
 * measured ktime - clock_task offset.  task must be running on this CPU. */
static __always_inline __u64 task_exec_now(struct task_struct *task, const struct cpu_snap *snap, __u64 now)
{
	__u64 exec = task->se.sum_exec_runtime;
	__s64 upd;

	if (!snap->clk_ok)
		return exec;	/* lags by at most a tick */
	upd = (__s64)task->se.exec_start + snap->clk_off;
	return (__s64)now > upd ? exec + (now - upd) : exec;
}

/* task_exec_now() for a task running on another CPU: that CPU's clock offset,
 * measured at its last traced switch.  The task's runtime fields may be being
 * updated there: a torn read errs by at most the update's delta (a tick). */
static __always_inline __u64 task_exec_remote_now(struct task_struct *task, __u64 now)
{
	__u32 zero = 0;
	const struct cpu_snap *snap = bpf_map_lookup_percpu_elem(&snaps, &zero, task_cpu(task));

	if (!snap)
		return task->se.sum_exec_runtime;
	return task_exec_now(task, snap, now);
}

/*
 * Seed the entry of a tracked task the spine has not seen switch yet, as its
 * state at ts is: running (on a CPU: switched in at ts, its runtime then
 * extrapolated), else switched out at ts, blocked or in the runqueue by its
 * state (runnable: a task fork just made, not woken yet, whose state still
 * says new).  Its next switch then counts from ts, as for any thread.  A task
 * with an entry already (it switched meanwhile: that record knows better) and
 * an exiting one are left alone.  The per-call snapshot (percall.bpf.h)
 * seeds through it, so that each thread's times there have one base.
 */
static __always_inline void thread_seed(struct task_struct *task, __u64 ts, bool runnable)
{
	__u32 tid = task->pid;
	struct thread_stats *tmpl, *t;
	bool running = task->on_cpu, created;

	if (!tid || (task->flags & PF_EXITING) || !task_tracked(task->tgid, tid) || bpf_map_lookup_elem(&threads, &tid))
		return;
	tmpl = thread_template(task, ts);
	if (!tmpl)
		return;
	/* The seed goes into the new entry, never into the per-CPU template: a switch
	 * that preempts this program on its CPU inserts through the same template. */
	t = map_insert(&threads, &tid, tmpl, &stats, STAT_THREADS_FULL, &created);
	if (!t || !created)
		return;
	if (running) {
		t->last_in_ns = ts;
		t->last_cpu = task_cpu(task);
		t->exec_base = t->exec_in = task_exec_remote_now(task, ts);
	} else {
		t->last_out_ns = ts;
		t->out_blocked = !runnable && task_state(task) != 0;
		t->exec_base = t->exec_in = t->exec_out = task->se.sum_exec_runtime;
		t->flt_out[0] = task->min_flt;
		t->flt_out[1] = task->maj_flt;
	}
}

/* The switch bookkeeping of t (last_in_ns, last_out_ns, out_blocked, the
 * off-CPU sums, slices_ns) is written between these, by the CPU t runs on or
 * leaves; a reader on another CPU (percall.bpf.h) retries when t->seq moved. */
static __always_inline bool thread_write_begin(struct thread_stats *t)
{
	__u64 old;

	if (!account_cfg.seqlock || (t->seq & 1))
		return false;	/* not asked for; or within a write already (sched_switch's catch-up) */
	/* an atomic add: a full barrier, so that the odd seq is seen before the
	 * switch's time is taken.  Its result is used: the fetching form is
	 * fully ordered on every JIT (x86 lock xadd, arm64 ldaddal), where a
	 * plain add is not on arm64 (stadd, no ordering) */
	old = __sync_fetch_and_add(&t->seq, 1);
	barrier_var(old);
	return true;
}

/* opened: what thread_write_begin() returned */
static __always_inline void thread_write_end(struct thread_stats *t, bool opened)
{
	barrier();
	if (opened)
		t->seq++;
}

/* Bookkeeping of a switch-in of t at now on cpu, its exec time then exec.  t in already (its
 * switch-out not traced: some hosts skip switches away from some tasks): of the time since its
 * last switch-in, the runtime was on-CPU, the rest off-CPU in a state unknown, counted blocked
 * (never on-CPU: thread_close_slice does the same at the end). */
static __always_inline void account_switch_in(struct thread_stats *t, __u64 exec, __u64 now, __u32 cpu)
{
	if (t->last_in_ns) {
		__u64 span = sub_clamped(now, t->last_in_ns), ran = sub_clamped(exec, t->exec_in);

		if (span > ran)
			t->offcpu_blocked_ns += span - ran;
		t->oncpu_ns = sub_clamped(exec, t->exec_base);
	} else if (t->last_out_ns) {
		__u64 off = sub_clamped(now, t->last_out_ns);

		if (t->out_blocked)
			t->offcpu_blocked_ns += off;
		else
			t->offcpu_runqueue_ns += off;
		if (t->last_cpu != cpu)
			t->migrations++;
	} else if (!t->last_in_ns) {
		t->exec_base = exec;	/* first sight: accounting starts now */
	}
	t->exec_in = exec;
	t->last_in_ns = now;
	t->last_cpu = cpu;
}

/*
 * t is running now on this CPU (its uprobe, sample or exit, or its switch-out:
 * task is t's task_struct), but no switch-in of it was traced: some hosts
 * never emit sched_switch for switches away from certain tasks (see
 * threads.bpf.c), or t is seen for the first time.  Infer the switch-in, as
 * sched_switch would have recorded it: the slice began its own exec time ago,
 * and not before this CPU's last accounting point (no traced switch came
 * between; a new thread is taken to have run since then).  Fills *sh with
 * t's share of the CPU's counter delta since that point (the inferred slice
 * of the time since it, and its faults in the slice when it had a traced
 * switch-out); sh->num 0 when nothing was missed.
 */
static __always_inline void account_catch_up(struct thread_stats *t, struct task_struct *task,
					     const struct cpu_snap *snap, __u64 now, struct fold_share *sh)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u64 exec, start, lo;
	bool w;

	sh->num = 0;
	if (t->last_in_ns)
		return;
	exec = task_exec_now(task, snap, now);
	sh->den = sub_clamped(now, snap->ts);
	if (!t->last_out_ns) {
		/* first sight: running since at most this CPU's last accounting
		 * point (attach, or a traced switch before the missed one); its
		 * faults before that point are not the slice's */
		sh->num = sh->den;
		sh->flt_ok = false;
		w = thread_write_begin(t);
		account_switch_in(t, sub_clamped(exec, sh->num), snap->ts, cpu);
		thread_write_end(t, w);
		return;
	}
	lo = snap->ts > t->last_out_ns ? snap->ts : t->last_out_ns;
	start = sub_clamped(now, sub_clamped(exec, t->exec_out));
	if (start < lo)
		start = lo;
	t->missed_switch_in++;
	sh->num = now - start;
	sh->flt[0] = task->min_flt - t->flt_out[0];
	sh->flt[1] = task->maj_flt - t->flt_out[1];
	sh->flt_ok = true;
	/* exec time at the slice's start: where the last switch-out left it */
	w = thread_write_begin(t);
	account_switch_in(t, t->exec_out, start, cpu);
	thread_write_end(t, w);
}

/* Fold reading `now` (taken at ts) into t as account_current() does. */
static __always_inline struct reading *account_current_at(struct thread_stats *t, struct task_struct *task,
							  struct cpu_snap *snap, const struct reading *now, __u64 ts,
							  bool want_delta)
{
	__u32 one = 1;
	struct reading *delta = want_delta ? bpf_map_lookup_elem(&scratch, &one) : NULL;
	struct fold_share sh = {};

	if (t)
		account_catch_up(t, task, snap, ts, &sh);
	account_fold_share(t, snap, now, delta, t ? t->tid : 0, &sh, ts);
	return delta;
}

/* Accounting point for the thread running now (uprobes, samples, exit) at
 * time ts (bpf_ktime_get_ns, taken once by the caller): infer a missed
 * switch-in, read, fold into t, keep t as the snapshot's owner.  task is
 * t's task_struct (current).  Returns the delta (per-CPU scratch, valid until
 * the next call) or NULL. */
static __always_inline struct reading *account_current(struct thread_stats *t, struct task_struct *task, __u64 ts,
						       bool want_delta)
{
	__u32 zero = 0, was;
	struct cpu_snap *snap = bpf_map_lookup_elem(&snaps, &zero);
	struct reading *now, *delta = NULL;

	if (!snap)
		return NULL;
	was = account_guard(snap);
	now = account_read(snap);
	if (now)
		delta = account_current_at(t, task, snap, now, ts, want_delta);
	account_unguard(snap, was);
	return delta;
}

/* account_current() for programs that run in a counter's overflow interrupt
 * (samples): NULL, and nothing folded, when the interrupt landed inside a
 * fold on this CPU, or between the sched_switch that switched t out and the
 * switch itself (an x86 NMI in __schedule: the snapshot already belongs to
 * the next thread, and t has been switched out at the snapshot's time).
 * Counted in STAT_FOLD_INTERRUPTED. */
static __always_inline struct reading *account_current_irq(struct thread_stats *t, struct task_struct *task,
							   __u64 ts, bool want_delta)
{
	__u32 zero = 0;
	struct cpu_snap *snap = bpf_map_lookup_elem(&snaps, &zero);

	if (!snap)
		return NULL;
	if (snap->busy || (t && !t->last_in_ns && t->last_out_ns && t->last_out_ns == snap->ts)) {
		stat_inc(STAT_FOLD_INTERRUPTED);
		return NULL;
	}
	return account_current(t, task, ts, want_delta);
}

#define ACCOUNT_CLOCK_REBASE_NS 10000000ULL	/* 10 ms */

/*
 * CLOCK_MONOTONIC time of reading `now` on this CPU, without a clock read on
 * most calls.  perf computes each reading's `enabled` time with local_clock()
 * of this CPU, so event 0's enabled time is a ns clock that the counter reads
 * give for free: now = base_ts + (enabled - base_enabled), where (base_ts,
 * base_enabled) is a bpf_ktime_get_ns() taken right after a reading on this
 * CPU at most ACCOUNT_CLOCK_REBASE_NS before.  Rebasing bounds the error by
 * the two clocks' rate difference (NTP's few ppm: well under 1 us per 10 ms)
 * plus the ~0.1 us between a reading and its bpf_ktime_get_ns(); differences
 * within one base are exact.  A bpf_ktime_get_ns() costs about 30 ns on this
 * VM, about a tenth of a probed call's BPF time.  en is event 0's enabled time
 * in the reading; falls back to the clock when it could not be read (!read_ok)
 * or nothing is counted.
 */
static __always_inline __u64 account_clock(struct cpu_snap *snap, __u64 en, bool read_ok)
{
	__u64 ts;

	if (!account_cfg.nr_events)
		return bpf_ktime_get_ns();
	if (read_ok && snap->base_enabled && en > snap->base_enabled && en - snap->base_enabled < ACCOUNT_CLOCK_REBASE_NS)
		return snap->base_ts + (en - snap->base_enabled);
	ts = bpf_ktime_get_ns();
	if (read_ok) {
		snap->base_ts = ts;
		snap->base_enabled = en;
	}
	return ts;
}

/* account_current() for the hot paths (uprobes): the time comes from the
 * reading (account_clock).  Returns that time; 0 when nothing was read. */
static __always_inline __u64 account_current_clocked(struct thread_stats *t, struct task_struct *task)
{
	__u32 zero = 0, was;
	struct cpu_snap *snap = bpf_map_lookup_elem(&snaps, &zero);
	struct reading *now;
	__u64 ts = 0;

	if (!snap)
		return 0;
	was = account_guard(snap);
	now = account_read(snap);
	if (now) {
		/* a failed read repeats the snapshot (account_read_one) */
		ts = account_clock(snap, now->c[0].enabled, now->c[0].enabled != snap->c[0].enabled);
		account_current_at(t, task, snap, now, ts, false);
	}
	account_unguard(snap, was);
	return ts;
}

#endif
