// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Per-function deltas from uprobes.  Entry and return both call the shared
 * accounting routine (account.bpf.h), so a thread's virtualised sums are
 * exact at both ends even when the call sleeps or migrates; a call's
 * inclusive delta is "thread sums at return - thread sums at entry".
 *
 * Each thread keeps a LIFO of active calls.  A return is matched to its
 * frame by stack pointer (the return probe sees entry sp + 8), so frames
 * skipped by longjmp or C++ exceptions are recognised and counted as
 * `unmatched`, never turned into garbage deltas.  Recursive functions add
 * inclusive sums for the outermost active call only.  The function id is the
 * attach cookie.
 *
 * --trace (cfg_trace): every frame boundary (entry, matched return, frame
 * skipped by longjmp, frame open at thread exit) also goes to the trace_rb
 * ring buffer, which user space turns into per-thread spans.  cfg_trace is
 * rodata, so with tracing off the verifier drops that code (no measurable
 * cost per call: bench/uprobe_cost).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "account.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile bool cfg_trace = false;
const volatile __u64 cfg_trace_wake = 0;	/* wake user space once this many bytes wait */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);	/* set by the loader when tracing */
} trace_rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);	/* --max-stacks */
	__type(key, __u32);		/* tid */
	__type(value, struct call_stack);
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);	/* --max-funcs */
	__type(key, struct func_key);
	__type(value, struct func_stats);
} funcs SEC(".maps");

/* Zeroed template for inserting a stack; never written, so shared by all CPUs
 * (a per-CPU value may not exceed 32 KiB). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct call_stack);
} stack_zero SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct func_stats);
} func_zero SEC(".maps");

/* One --trace record; a full ring buffer is counted, never silent. */
static __always_inline void trace_emit(__u32 pid, __u32 tid, __u32 fn, __u32 depth, __u32 kind, __u64 ts)
{
	struct trace_rec *r;

	if (!cfg_trace)
		return;
	r = bpf_ringbuf_reserve(&trace_rb, sizeof(*r), 0);
	if (!r) {
		stat_inc(STAT_TRACE_DROPS);
		return;
	}
	r->ts = ts;
	r->pid = pid;
	r->tid = tid;
	r->fn = fn;
	r->depth = depth;
	r->kind = kind;
	/* user space drains every poll (50 ms); wake it early only when the ring fills */
	bpf_ringbuf_submit(r, bpf_ringbuf_query(&trace_rb, BPF_RB_AVAIL_DATA) >= cfg_trace_wake ?
			   BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

/* Thread's on-CPU time up to now: exact at its last switch-in, plus the running slice. */
static __always_inline __u64 thread_oncpu_now(const struct thread_stats *t, __u64 now)
{
	if (!t->last_in_ns)
		return t->oncpu_ns;
	return sub_clamped(t->exec_in, t->exec_base) + sub_clamped(now, t->last_in_ns);
}

static __always_inline struct call_stack *stack_get(__u32 tid, bool create)
{
	struct call_stack *st = bpf_map_lookup_elem(&stacks, &tid);
	__u32 zero = 0;

	if (st || !create)
		return st;
	st = bpf_map_lookup_elem(&stack_zero, &zero);
	if (!st)
		return NULL;
	if (bpf_map_update_elem(&stacks, &tid, st, BPF_NOEXIST) && !bpf_map_lookup_elem(&stacks, &tid)) {
		stat_inc(STAT_STACKS_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&stacks, &tid);
}

static __always_inline struct func_stats *func_get_ids(__u32 fn, __u32 tid, __u32 pid)
{
	struct func_key key = { .fn = fn, .tid = tid };
	struct func_stats *fs = bpf_map_lookup_elem(&funcs, &key);
	__u32 zero = 0;

	if (fs)
		return fs;
	fs = bpf_map_lookup_elem(&func_zero, &zero);
	if (!fs)
		return NULL;
	fs->pid = pid;
	if (bpf_map_update_elem(&funcs, &key, fs, BPF_NOEXIST) && !bpf_map_lookup_elem(&funcs, &key)) {
		stat_inc(STAT_FUNCS_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&funcs, &key);
}

static __always_inline struct func_stats *func_get(__u32 fn, const struct thread_stats *t)
{
	return func_get_ids(fn, t->tid, t->pid);
}

static __always_inline void frame_push(struct call_stack *st, struct thread_stats *t, __u32 fn, __u64 sp, __u64 now)
{
	__u32 d = st->depth;
	struct call_frame *f;

	if (d >= TMABPF_MAX_DEPTH) {
		struct func_stats *fs = func_get(fn, t);

		if (fs)
			fs->calls++;	/* not tracked further: counted here */
		st->overflow++;
		stat_inc(STAT_DEPTH_OVERFLOW);
		return;
	}
	trace_emit(t->pid, t->tid, fn, d, TRACE_ENTRY, now);
	f = &st->f[d & (TMABPF_MAX_DEPTH - 1)];
	f->fn = fn;
	f->sp = sp;
	f->entry_ns = now;
	f->oncpu_ns = thread_oncpu_now(t, now);
	f->blocked_ns = t->offcpu_blocked_ns;
	f->runq_ns = t->offcpu_runqueue_ns;
	f->child_oncpu_ns = 0;
	f->outermost = 1;
	for (__u32 e = 0; e < TMABPF_MAX_EVENTS; e++) {
		if (e >= cfg_nr_events)
			break;
		f->c[e] = t->c[e];
		f->child[e] = (struct counter_val){};
	}
	for (__u32 i = 0; i < TMABPF_MAX_DEPTH; i++) {
		if (i >= d)
			break;
		if (st->f[i].fn == fn)
			f->outermost = 0;
	}
	st->depth = d + 1;
}

static __always_inline void cv_delta(struct counter_val *out, const struct counter_val *a, const struct counter_val *b)
{
	out->value = sub_clamped(a->value, b->value);
	out->enabled = sub_clamped(a->enabled, b->enabled);
	out->running = sub_clamped(a->running, b->running);
}

static __always_inline void cv_add(struct counter_val *a, const struct counter_val *b)
{
	a->value += b->value;
	a->enabled += b->enabled;
	a->running += b->running;
}

/* Close the top frame (index d - 1) at its return and fold it into the
 * function's and the parent's sums.  Frames are addressed by masked index,
 * never by a nullable pointer: clang would spill such a pointer as a bare
 * offset, which the verifier refuses. */
static __always_inline void frame_pop(struct call_stack *st, struct thread_stats *t, __u32 d, __u64 now)
{
	__u32 top = (d - 1) & (TMABPF_MAX_DEPTH - 1), up = (d - 2) & (TMABPF_MAX_DEPTH - 1);
	bool has_parent = d >= 2;
	struct func_stats *fs = func_get(st->f[top].fn, t);
	__u64 oncpu = sub_clamped(thread_oncpu_now(t, now), st->f[top].oncpu_ns);
	bool outermost = st->f[top].outermost;

	st->depth = d - 1;
	if (!fs)
		return;
	fs->returns++;
	fs->calls++;
	fs->self_oncpu_ns += sub_clamped(oncpu, st->f[top].child_oncpu_ns);
	if (outermost) {
		fs->wall_ns += sub_clamped(now, st->f[top].entry_ns);
		fs->oncpu_ns += oncpu;
		fs->offcpu_blocked_ns += sub_clamped(t->offcpu_blocked_ns, st->f[top].blocked_ns);
		fs->offcpu_runqueue_ns += sub_clamped(t->offcpu_runqueue_ns, st->f[top].runq_ns);
	}
	if (has_parent)
		st->f[up].child_oncpu_ns += oncpu;
	for (__u32 e = 0; e < TMABPF_MAX_EVENTS; e++) {
		struct counter_val incl, self;

		if (e >= cfg_nr_events)
			break;
		cv_delta(&incl, &t->c[e], &st->f[top].c[e]);
		cv_delta(&self, &incl, &st->f[top].child[e]);
		cv_add(&fs->self[e], &self);
		if (outermost)
			cv_add(&fs->c[e], &incl);
		if (has_parent)
			cv_add(&st->f[up].child[e], &incl);
	}
}

static __always_inline void count_unmatched(struct thread_stats *t, __u32 fn)
{
	struct func_stats *fs = func_get(fn, t);

	if (fs) {
		fs->unmatched++;
		fs->calls++;
	}
}

static __always_inline int on_entry(__u64 sp, __u32 fn)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct thread_stats *t = thread_get(task);
	struct call_stack *st;
	__u64 now;

	if (!t)
		return 1;	/* untracked: a session skips this call's return */
	now = account_current_clocked(t, task);
	if (!now)
		return 0;
	/* calls are counted where the frame ends (return, unmatched, exit) or overflows:
	 * one hash lookup less per entry; the reader adds frames still open */
	st = stack_get(t->tid, true);
	if (st) {
		st->pid = t->pid;
		frame_push(st, t, fn, sp, now);
	} else {
		struct func_stats *fs = func_get(fn, t);

		if (fs)
			fs->calls++;
	}
	return 0;
}

static __always_inline int on_return(__u64 sp, __u32 fn)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct thread_stats *t = thread_get(task);
	__u64 now;
	struct call_stack *st;

	if (!t)
		return 0;
	st = stack_get(t->tid, false);
	if (!st || !st->depth) {
		stat_inc(STAT_RET_NO_ENTRY);
		return 0;
	}
	now = account_current_clocked(t, task);
	if (!now)
		return 0;
	for (__u32 i = 0; i < TMABPF_MAX_DEPTH; i++) {
		__u32 d = st->depth;
		struct call_frame *top;

		if (d == 0 || d > TMABPF_MAX_DEPTH)
			break;
		top = &st->f[(d - 1) & (TMABPF_MAX_DEPTH - 1)];
		if (top->sp + 8 < sp) {
			/* deeper than the returning call: its return never came */
			count_unmatched(t, top->fn);
			trace_emit(t->pid, t->tid, top->fn, d - 1, TRACE_UNMATCHED, now);
			st->depth = d - 1;
			continue;
		}
		if (top->sp + 8 == sp && top->fn == fn) {
			trace_emit(t->pid, t->tid, fn, d - 1, TRACE_RETURN, now);
			frame_pop(st, t, d, now);
		} else
			stat_inc(STAT_RET_NO_ENTRY);	/* entered before we attached, or past max depth */
		break;
	}
	return 0;
}

/* Entry/return programs: read ctx first, since the verifier refuses loads
 * through a ctx pointer clang derived; the function id is the cookie.  They
 * return 0: a classic uprobe returning non-zero would also write a perf
 * sample nobody reads. */
#define UPROBE_PROG(sec, name, handler)						\
	SEC(sec)								\
	int name(struct pt_regs *ctx)						\
	{									\
		__u64 sp = PT_REGS_SP(ctx);					\
										\
		barrier_var(sp);						\
		handler(sp, (__u32)bpf_get_attach_cookie(ctx));			\
		return 0;							\
	}

/* Session (kernel >= 6.13): one program and one link for entry and return
 * (returning 0 at entry asks for the return).  One link detaches in half
 * the time of an entry link and a return link (bench/uprobe_cost).  The
 * loader sets its attach type (BPF_TRACE_UPROBE_SESSION, unknown to libbpf 1.4). */
extern bool bpf_session_is_return(void) __weak __ksym;

SEC("uprobe.multi")
int tmabpf_usess(struct pt_regs *ctx)
{
	__u64 sp = PT_REGS_SP(ctx);

	barrier_var(sp);
	if (bpf_session_is_return())
		return on_return(sp, (__u32)bpf_get_attach_cookie(ctx));
	return on_entry(sp, (__u32)bpf_get_attach_cookie(ctx));
}

UPROBE_PROG("uprobe.multi", tmabpf_uentry, on_entry)
UPROBE_PROG("uretprobe.multi", tmabpf_uexit, on_return)
/* Classic uprobes, for kernels without uprobe_multi links (< 6.6). */
UPROBE_PROG("uprobe", tmabpf_uentry1, on_entry)
UPROBE_PROG("uretprobe", tmabpf_uexit1, on_return)

/* Frames still open when a thread exits never returned. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(tmabpf_uthrexit, struct task_struct *task)
{
	__u32 tid = task->pid, pid = task->tgid;
	struct call_stack *st = bpf_map_lookup_elem(&stacks, &tid);
	__u64 now = cfg_trace ? bpf_ktime_get_ns() : 0;

	if (!st)
		return 0;
	for (__u32 i = 0; i < TMABPF_MAX_DEPTH; i++) {
		struct func_stats *fs;
		__u32 d = st->depth;

		if (i >= d || d > TMABPF_MAX_DEPTH)
			break;
		/* innermost first, as the frames would have returned */
		trace_emit(pid, tid, st->f[(d - 1 - i) & (TMABPF_MAX_DEPTH - 1)].fn, d - 1 - i, TRACE_EXIT, now);
		fs = func_get_ids(st->f[i].fn, tid, pid);
		if (fs) {
			fs->unmatched++;
			fs->calls++;
		}
	}
	bpf_map_delete_elem(&stacks, &tid);
	return 0;
}
