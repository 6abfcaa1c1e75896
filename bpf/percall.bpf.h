/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * --per-call: the process snapshot taken at a marker's outermost entry and
 * return (uprobes.bpf.c), into the percall_rb ring buffer (uprobes.h).
 *
 * Exactness at the window's edges.  The spine folds a thread's times at its
 * switches only, so a thread running on another CPU when the marker fires
 * has a slice not yet folded.  The snapshot therefore takes each thread's
 * times "as of now": its on-CPU time from the kernel's runtime
 * (se.sum_exec_runtime, brought forward to now for a running thread with its
 * CPU's measured clock offset: task_exec_remote_now), its off-CPU time from
 * the spine's sums plus the interval it is in (thread_offcpu_now).  A thread
 * the spine has not seen switch since attach, and not running, is seeded
 * (thread_seed) so that its wait counts from now in its state.  The
 * difference of two snapshots is then exact per thread, up to the kernel's
 * runtime clock (clock_task, which leaves out IRQ time where it is
 * accounted) against CLOCK_MONOTONIC.
 */
#ifndef TMABPF_PERCALL_BPF_H
#define TMABPF_PERCALL_BPF_H

#include "account.bpf.h"
#include "roof_work.bpf.h"
#include "uprobes.h"

/* The open-coded task iterator (kernel >= 6.7); declared here too, for
 * vmlinux.h files generated without kfunc declarations. */
extern int bpf_iter_task_new(struct bpf_iter_task *it, struct task_struct *task, unsigned int flags) __weak __ksym;
extern struct task_struct *bpf_iter_task_next(struct bpf_iter_task *it) __weak __ksym;
extern void bpf_iter_task_destroy(struct bpf_iter_task *it) __weak __ksym;

const volatile bool cfg_percall = false;

#define READ_ONCE(x) (*(const volatile typeof(x) *)&(x))

/* Marker function ids (bits), set by user space as it attaches them. */
__u64 percall_marker[PERCALL_MARKER_WORDS];
/* Spin function ids (bits, user/collect/spin.h): a probed spin function's
 * on-CPU time is spin, samples or not. */
__u64 percall_spin_fns[PERCALL_MARKER_WORDS];

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);	/* set by the loader with --per-call */
} percall_rb SEC(".maps");

/* The slots of the functions past the direct ones: a span's key is its process' tgid << 32 | its
 * raw id (pair ids are per process), another function's its id; the value its slot. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PERCALL_MAX_FUNCS - PERCALL_DIRECT_FUNCS);
	__type(key, __u64);
	__type(value, __u32);
} percall_slots SEC(".maps");
__u64 percall_next_slot = PERCALL_DIRECT_FUNCS;	/* the next free slot */

/* Cumulative totals per slot (< PERCALL_MAX_FUNCS), every thread. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PERCALL_MAX_FUNCS);
	__type(key, __u32);
	__type(value, struct percall_fn);
} percall_fns SEC(".maps");

static __always_inline bool percall_bit(const __u64 *bits, __u32 fn)
{
	__u32 w = fn / 64;

	if (!cfg_percall || w >= PERCALL_MARKER_WORDS)
		return false;
	return bits[w] & (1ULL << (fn % 64));
}

static __always_inline bool percall_is_marker(__u32 fn)
{
	return percall_bit(percall_marker, fn);
}

/* The slot of function fn of process tgid, given at its first return; false when they are all
 * taken (the function is then not among the iterations' totals). */
static __noinline bool percall_slot(__u32 fn, __u32 tgid, __u32 *slot)
{
	__u64 key = fn & ITT_FN ? (__u64)tgid << 32 | fn : fn;
	__u32 *v = bpf_map_lookup_elem(&percall_slots, &key), s;
	__u64 next;

	if (v) {
		*slot = *v;
		return true;
	}
	if (READ_ONCE(percall_next_slot) >= PERCALL_MAX_FUNCS)
		goto full;	/* all given: no atomic add at every return of a function without one */
	next = __sync_fetch_and_add(&percall_next_slot, 1);
	if (next >= PERCALL_MAX_FUNCS)
		goto full;
	s = next;
	if (bpf_map_update_elem(&percall_slots, &key, &s, BPF_NOEXIST)) {
		/* another CPU gave it one first: that one (this slot stays unused) */
		v = bpf_map_lookup_elem(&percall_slots, &key);
		if (!v)
			return false;
		s = *v;
	}
	*slot = s;
	return true;
full:
	stat_inc(STAT_PERCALL_SLOTS_FULL);	/* per CPU: no atomic either */
	return false;
}

/* A matched return of fn of process tgid (outermost: its inclusive times count). */
static __always_inline void percall_fn_return(__u32 fn, __u32 tgid, bool outermost, __u64 wall, __u64 oncpu)
{
	struct percall_fn *f;

	if (!cfg_percall)
		return;
	if (fn >= PERCALL_DIRECT_FUNCS && !percall_slot(fn, tgid, &fn))
		return;
	f = bpf_map_lookup_elem(&percall_fns, &fn);
	if (!f)
		return;
	__sync_fetch_and_add(&f->calls, 1);
	if (outermost) {
		__sync_fetch_and_add(&f->wall_ns, wall);
		__sync_fetch_and_add(&f->oncpu_ns, oncpu);
	}
}

/*
 * Probed spin functions: the running thread's time in them, by its runtime
 * (the snapshot's clock), entry to return of the outermost one; a snapshot
 * taken while a thread spins counts the spin so far (a barrier's spin ends
 * after the window that holds it, when the marker's thread leaves first).
 * Written under the thread's seq, which the snapshot's reader checks.  exec:
 * the task's runtime now (task_exec_now).  A global function: verified once.
 */
__noinline int percall_spin_edge(struct task_struct *task __arg_trusted, __u64 exec, int enter)
{
	struct thread_stats *t;
	__u32 tid = task->pid;
	bool w;

	t = bpf_map_lookup_elem(&threads, &tid);
	if (!t || (!enter && !t->spin_nest))
		return 0;
	w = thread_write_begin(t);
	if (enter) {
		if (t->spin_nest++ == 0)
			t->spin_in = exec;
	} else if (--t->spin_nest == 0) {
		t->spin_probe_ns += sub_clamped(exec, t->spin_in);
	}
	thread_write_end(t, w);
	return 0;
}

/* An entry (enter) or return of probed function fn on the running thread. */
static __always_inline void percall_spin(struct task_struct *task, const struct cpu_snap *snap, __u32 fn, __u64 now,
					 bool enter)
{
	if (percall_bit(percall_spin_fns, fn))
		percall_spin_edge(task, task_exec_now(task, snap, now), enter);
}

#define PERCALL_READ_TRIES 32768	/* a switch writes in well under a microsecond; a vCPU preempted mid-write takes longer */

struct seq_read {
	struct thread_stats *t;
	__u64 now, exec_now;	/* the task's runtime now (on a CPU: brought forward) */
	bool on_cpu;		/* the kernel has it on a CPU */
	__u64 oncpu, blocked, runq, last_in, spin;
	bool ok;
	bool future;		/* switched more than once since now: its times unsure */
};

static long seq_read_once(__u64 i, void *data)
{
	struct seq_read *rd = data;
	struct thread_stats *t = rd->t;
	__u64 seq;

	if (!t)
		return 1;
	seq = READ_ONCE(t->seq);
	barrier();
	rd->spin = t->spin_probe_ns + (t->spin_nest ? sub_clamped(rd->exec_now, t->spin_in) : 0);
	rd->last_in = READ_ONCE(t->last_in_ns);
	if (!rd->last_in && rd->on_cpu && t->last_out_ns && rd->exec_now > t->exec_out) {
		/* running, but its switch-in was never traced (some hosts skip
		 * them): in since its runtime says, as account_catch_up() will
		 * infer it at its next accounting point */
		__u64 start = sub_clamped(rd->now, rd->exec_now - t->exec_out);

		if (start < t->last_out_ns)
			start = t->last_out_ns;
		rd->last_in = start;
		rd->oncpu = t->slices_ns + sub_clamped(rd->now, start);
		thread_offcpu_now(t, start, &rd->blocked, &rd->runq);
	} else {
		__u64 last_out = READ_ONCE(t->last_out_ns);

		rd->oncpu = t->slices_ns + (rd->last_in ? sub_clamped(rd->now, rd->last_in) : 0);
		thread_offcpu_now(t, rd->now, &rd->blocked, &rd->runq);
		/* read after now, the snapshot's time (the walk takes microseconds): a switch since
		 * then has folded time past now; take it back, so that both edges of a window are at
		 * their snapshot's time (a window 18.9 us long read a thread's 66 us) */
		if (rd->last_in > rd->now && last_out <= rd->now) {
			/* switched in after now: off-CPU until now only */
			__u64 over = rd->last_in - (last_out > rd->now ? last_out : rd->now);

			if (t->out_blocked)
				rd->blocked = sub_clamped(rd->blocked, over);
			else
				rd->runq = sub_clamped(rd->runq, over);
			rd->last_in = 0;
		} else if (!rd->last_in && last_out > rd->now &&
			   sub_clamped(last_out, sub_clamped(t->exec_out, t->exec_in)) <= rd->now) {
			/* switched out after now, its slice (by its runtime) begun before: on-CPU until
			 * now only, and running then */
			rd->oncpu = sub_clamped(rd->oncpu, last_out - rd->now);
			rd->last_in = rd->now;
		} else if (rd->last_in > rd->now || (!rd->last_in && last_out > rd->now)) {
			rd->future = true;	/* more than one switch since now: unsure, counted as torn */
		}
	}
	barrier();
	rd->ok = !(seq & 1) && READ_ONCE(t->seq) == seq;
	if (!rd->ok)
		rd->future = false;	/* read again */
	return rd->ok;
}

/* One thread's times, on its way into a snapshot: a slot per nesting depth on this CPU (on a
 * preemptible kernel a marker program can be preempted by another task's on the same CPU, which
 * must not write over the first one's slot). */
#define PERCALL_NEST 4
struct percall_one {
	struct percall_thread th;
	struct counter_val c[TMABPF_MAX_EVENTS];	/* its counter sums (thread_stats), as last folded */
	__u64 unfolded_ns;	/* running: its time since its switch-in (counts maybe not folded yet) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PERCALL_NEST);
	__type(key, __u32);
	__type(value, struct percall_one);
} percall_scratch SEC(".maps");
PERCPU_VAR(percall_depth, __u32);	/* snapshots being taken on this CPU */

/* One thread's times as of now into percall_scratch[slot] (a global function:
 * verified once, on its own): the spine's sums brought forward to now.  On-CPU and off-CPU intervals come from the same switch times, so
 * that they tile the thread's life; a thread met for the first time is
 * seeded at now (thread_seed) so that both snapshots have the same base.
 * Returns 1 for a thread that has exited (sched_process_exit took its
 * entry; the task lingers in its process' list until reaped): left out of
 * the snapshot, as if gone. */
__noinline int percall_thread_now(struct task_struct *task __arg_trusted, __u64 now, __u32 slot)
{
	__u32 tid = task->pid;
	struct thread_stats *t = bpf_map_lookup_elem(&threads, &tid);
	struct percall_one *one = bpf_map_lookup_elem(&percall_scratch, &slot);
	struct percall_thread *o;

	if (!one)
		return 0;
	o = &one->th;
	if (!t && (task->flags & PF_EXITING))
		return 1;
	if (!t) {
		thread_seed(task, now, false);
		t = bpf_map_lookup_elem(&threads, &tid);
	}
	struct seq_read rd = { .t = t, .now = now, .on_cpu = task->on_cpu };

	rd.exec_now = rd.on_cpu ? task_exec_remote_now(task, now) : task->se.sum_exec_runtime;
	o->tid = tid;
	o->running = rd.on_cpu;
	o->runtime_ns = rd.exec_now;
	o->oncpu_ns = rd.exec_now;	/* untracked (map full): the kernel's runtime */
	o->blocked_ns = o->runq_ns = o->samples = o->spin_samples = o->spin_probe_ns = 0;
	o->torn = 0;
	o->untracked = !t;
	if (!t) {
		/* no sums of its own: nothing for the process' counters */
		one->unfolded_ns = 0;
		for (__u32 e = 0; e < TMABPF_MAX_EVENTS; e++)
			one->c[e] = (struct counter_val){};
		return 0;
	}

	/* its CPU may be switching it now: read its bookkeeping whole (seq),
	 * retrying while a switch writes it (bpf_loop: verified once) */
	bpf_loop(PERCALL_READ_TRIES, seq_read_once, &rd, 0);
	o->oncpu_ns = rd.oncpu;
	o->blocked_ns = rd.blocked;
	o->runq_ns = rd.runq;
	o->running = rd.last_in != 0;
	o->torn = !rd.ok || rd.future;
	o->samples = t->samples;
	o->spin_samples = t->spin_samples;
	o->spin_probe_ns = rd.spin;
	for (__u32 e = 0; e < TMABPF_MAX_EVENTS; e++) {
		if (e >= account_cfg.nr_events)
			break;
		one->c[e] = t->c[e];
	}
	one->unfolded_ns = rd.last_in ? sub_clamped(now, rd.last_in) : 0;
	return 0;
}

/* The snapshot of the calling thread's process at now: the uprobe hit has
 * just refreshed this CPU's cache (snaps' uc[]) for it, so its counter sums
 * are reading + offset.  A global function: verified once, on its own. */
__noinline int percall_emit(__u32 kind, __u32 fn, __u32 seq, __u64 now)
{
	struct task_struct *cur = bpf_get_current_task_btf(), *task;
	struct percall_one *o;
	__u32 zero = 0, slot;
	struct bpf_iter_task it;
	struct percall_rec *r;
	struct cpu_snap *snap = bpf_map_lookup_elem(&snaps, &zero);
	__u32 *depth = bpf_map_lookup_elem(&percall_depth, &zero);
	__u64 nslots;

	if (!snap || !depth)
		return 0;
	/* a program preempting this one on this CPU runs whole before this one goes on: its slot is
	 * the next one while this one's is taken */
	slot = (*depth)++;
	if (slot >= PERCALL_NEST) {
		(*depth)--;
		stat_inc(STAT_PERCALL_DROPS);
		return 0;
	}
	r = bpf_ringbuf_reserve(&percall_rb, sizeof(*r), 0);
	if (!r) {
		(*depth)--;
		stat_inc(STAT_PERCALL_DROPS);
		return 0;
	}
	r->ts = now;
	r->pid = cur->tgid;
	r->tid = cur->pid;
	r->kind = kind;
	r->fn = fn;
	r->seq = seq;
	nslots = READ_ONCE(percall_next_slot);
	r->nslots = nslots < PERCALL_MAX_FUNCS ? (__u32)nslots : PERCALL_MAX_FUNCS;
	for (__u32 e = 0; e < TMABPF_MAX_EVENTS; e++) {
		r->pc[e] = (struct counter_val){};
		if (e >= account_cfg.nr_events)
			break;
		cv_sum(&r->c[e], &snap->uc[e].read, &snap->uc[e].off);
	}
	r->unfolded_ns = 0;
	r->roof_unknown = cfg_roof_windows && !roof_procs_read(&r->pid, &r->roof);
	/* the count lives in the record: loaded back each time, it is a bounded
	 * unknown to the verifier, whose walk of the loop then converges */
	r->nthreads = 0;
	r->more_threads = 0;
	/* a process' threads walk from the given one to the end of its list:
	 * from the leader, they are all; a uprobe program cannot get a trusted
	 * pointer to the leader (bpf_task_from_pid is not allowed here), so a
	 * marker on another thread walks every thread and keeps the process' */
	if (cur->pid == cur->tgid)
		bpf_iter_task_new(&it, cur, BPF_TASK_ITER_PROC_THREADS);
	else
		bpf_iter_task_new(&it, NULL, BPF_TASK_ITER_ALL_THREADS);
	while ((task = bpf_iter_task_next(&it))) {
		__u32 i = r->nthreads;

		if (task->tgid != cur->tgid)
			continue;
		if (i >= PERCALL_MAX_THREADS) {
			r->more_threads++;
			continue;
		}
		if (percall_thread_now(task, now, slot))
			continue;
		o = bpf_map_lookup_elem(&percall_scratch, &slot);
		if (!o)
			break;
		r->th[i] = o->th;
		r->nthreads = i + 1;
		/* the process' sums: the calling thread's exact as of now (c), the others' folded */
		for (__u32 e = 0; e < TMABPF_MAX_EVENTS; e++) {
			if (e >= account_cfg.nr_events)
				break;
			cv_add(&r->pc[e], task->pid == cur->pid ? &r->c[e] : &o->c[e]);
		}
		if (task->pid != cur->pid)
			r->unfolded_ns += o->unfolded_ns;
	}
	bpf_iter_task_destroy(&it);
	for (__u32 f = 0; f < PERCALL_MAX_FUNCS; f++) {
		__u32 key = f;	/* f stays in a register, bounded */
		struct percall_fn *v;

		if (f >= r->nslots)
			break;	/* the slots not given yet: no copy (an ITT-less run copies 64, as before) */
		v = bpf_map_lookup_elem(&percall_fns, &key);
		if (v)
			r->fns[f] = *v;
	}
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	(*depth)--;
	return 0;
}

#endif
