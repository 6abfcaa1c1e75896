// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Per-function deltas from uprobes.  A call's inclusive delta is "thread sums
 * at return - thread sums at entry", where the thread sums are the spine's
 * virtualised counters (account.bpf.h): exact even when the call sleeps or
 * migrates, since every switch folds them.
 *
 * Fast path.  Between two folds on a CPU, the running thread's sums are its
 * sums at the last fold plus the CPU's counter delta since.  So after one
 * accounting point per (thread, CPU slice) the uprobes keep, in the CPU's
 * snapshot, the offset "thread sums - snapshot" (cpu_snap.uc_*), valid until
 * the next fold bumps cpu_snap.gen.  A call then costs the counter reads and
 * array accesses only: no hash lookup of the thread, its stack or its row, and
 * nothing written to the thread (the next switch folds it as without uprobes).
 * The first uprobe hit after a fold takes the slow path: thread lookup,
 * fold, refill.
 *
 * Each probed thread owns a slot (tmabpf.h): its LIFO of active calls and a
 * small direct-mapped cache of its (function, thread) rows.  A row that finds
 * its cache entry taken goes to the funcs hash; a slot's rows move there when
 * its thread exits, and the slot is reused.  A return is matched to its frame
 * by stack pointer (RET_SP_DELTA: the return probe sees the entry's sp + 8 on
 * x86, the same sp where calls keep the return address in a link
 * register), so frames skipped by
 * longjmp or C++ exceptions are recognised and counted as `unmatched`, never
 * turned into garbage deltas.  Recursive functions add inclusive sums for the
 * outermost active call only.  The function id is the attach cookie.
 *
 * --trace (cfg_trace): every frame boundary (entry, matched return, frame
 * skipped by longjmp, frame open at thread exit) also goes to the trace_rb
 * ring buffer, which user space turns into per-thread spans.  cfg_trace is
 * rodata, so with tracing off the verifier drops that code.
 *
 * One window for every probe (enum uprobe_window): a thread's outermost frame
 * entered while the window is not open marks its slot `outside`, and that
 * call and every call inside it are tracked (so that returns match) but
 * neither counted nor traced.
 *
 * --per-call (cfg_percall, percall.bpf.h): the outermost frame of a marker
 * function on a thread opens an iteration (ustack.marker) and its matched
 * return closes it, each with a process snapshot; a marker frame skipped by
 * longjmp or left open at thread exit drops its iteration.
 *
 * --roofline (cfg_roofline, roof_work.bpf.h): a function with a known GEMM/GEMV
 * signature has the roofline's cookie in the upper 32 bits of its own; its
 * entry reads the call's arguments and its matched return adds the call's
 * FLOPs, bytes and time to its shape's sums, here, in the frame the call has
 * anyway, and not in a second program on the same address.  The open call
 * and the thread's recent shapes' sums are in its slot (ustack.roof,
 * roof_rows), so that entry and return look up nothing more.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "account.bpf.h"
#include "percall.bpf.h"
#include "roof_work.bpf.h"
#include "uprobes.h"
#include "uslots.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* A return probe's stack pointer minus its entry probe's: x86's call pushed
 * the return address, which ret pops; arm64 (and the other link-register
 * arches) return with sp as it was at entry.  On those a caller and its
 * callee can share an sp (a tail call, a caller that pushed no frame): the
 * innermost matching frame is popped first, as the kernel runs their return
 * probes innermost first. */
#if defined(__TARGET_ARCH_x86)
#define RET_SP_DELTA 8
#elif defined(__TARGET_ARCH_arm64) || defined(__TARGET_ARCH_riscv) || defined(__TARGET_ARCH_powerpc) || \
	defined(__TARGET_ARCH_s390) || defined(__TARGET_ARCH_loongarch)
#define RET_SP_DELTA 0
#else
#error "uprobes.bpf.c: define RET_SP_DELTA (return probe sp - entry sp) for this __TARGET_ARCH"
#endif

_Static_assert(__builtin_offsetof(struct func_stats, c) == sizeof(struct func_head),
	       "func_stats must start with func_head's layout");

const volatile bool cfg_trace = false;
const volatile bool cfg_roofline = false;
const volatile __u64 cfg_trace_wake = 0;	/* wake user space once this many bytes wait */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);	/* set by the loader when tracing */
} trace_rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 1);		/* slots */
	__uint(value_size, sizeof(__u32));
} ufree SEC(".maps");			/* free slots (the loader pushes them all) */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);	/* --max-funcs */
	__type(key, struct func_key);
	__type(value, struct func_stats);
} funcs SEC(".maps");

PERCPU_VAR(func_zero, struct func_stats);	/* insert template (too big for the stack) */

/* enum uprobe_window (uprobes.h): user space opens it once every link is attached and closes it
 * before the first detaches */
volatile __u32 uprobe_window = UWIN_BEFORE;

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

/* i & mask, done where the verifier sees it (clang drops masks it can
 * prove redundant, and the verifier must bound the offset). */
#define MASK_FOR_VERIFIER(i, mask) asm volatile("%0 &= %1" : "+r"(i) : "i"(mask))

/* A slot's cached row k and frame d (tmabpf.h: header, rows, frames). */
static __always_inline struct func_head *row_at(struct ustack *st, __u32 k)
{
	__u64 i = k;

	MASK_FOR_VERIFIER(i, TMABPF_ROW_CACHE - 1);
	return (void *)(st + 1) + i * USLOT_ROW_BYTES(account_cfg.nr_events);
}

static __always_inline struct ucall_frame *frame_at(struct ustack *st, __u32 d)
{
	__u64 i = d;

	MASK_FOR_VERIFIER(i, TMABPF_MAX_DEPTH - 1);
	return (void *)(st + 1) + TMABPF_ROW_CACHE * USLOT_ROW_BYTES(account_cfg.nr_events) + i * USLOT_FRAME_BYTES(account_cfg.nr_events);
}

/* A frame's or a row's counter arrays: c[nr_events], then a second one. */
static __always_inline struct counter_val *cv_first(void *head, __u32 head_size)
{
	return head + head_size;
}

static __always_inline struct counter_val *cv_second(void *head, __u32 head_size)
{
	return (struct counter_val *)(head + head_size) + account_cfg.nr_events;
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
	return map_insert(&funcs, &key, fs, &stats, STAT_FUNCS_FULL, NULL);
}

/* A (function, thread) row: the slot's cached one (claimed when free), else
 * the funcs hash.  *c and *self point at its counter arrays. */
struct row_ref {
	struct func_head *h;
	struct counter_val *c, *self;
};

static __always_inline bool row_get(struct ustack *st, __u32 fn, __u32 tid, __u32 pid, struct row_ref *r)
{
	struct func_head *h = st ? row_at(st, fn) : NULL;
	struct func_stats *fs;

	if (h && (h->fn1 == fn + 1 || h->fn1 == 0)) {
		if (!h->fn1) {
			h->fn1 = fn + 1;
			h->pid = pid;
		}
		r->h = h;
		r->c = cv_first(h, sizeof(*h));
		r->self = cv_second(h, sizeof(*h));
		return true;
	}
	fs = func_get_ids(fn, tid, pid);
	if (!fs)
		return false;
	r->h = (struct func_head *)fs;
	r->c = fs->c;
	r->self = fs->self;
	return true;
}

static __always_inline void count_call(struct ustack *st, __u32 fn, __u32 tid, __u32 pid, bool unmatched)
{
	struct row_ref r;

	if (!row_get(st, fn, tid, pid, &r))
		return;
	r.h->calls++;
	if (unmatched)
		r.h->unmatched++;
}

/* The thread's slot; a new one when create (its first probed call). */
static __always_inline __u32 slot_of(__u32 tid, __u32 pid, bool create)
{
	__u32 *found = bpf_map_lookup_elem(&uslots, &tid), slot;
	struct ustack *st;

	if (found)
		return *found;
	if (!create)
		return UPROBE_NO_SLOT;
	if (bpf_map_pop_elem(&ufree, &slot)) {
		stat_inc(STAT_STACKS_FULL);
		return UPROBE_NO_SLOT;
	}
	st = stack_at(slot);
	if (!st)
		return UPROBE_NO_SLOT;
	st->pid = pid;
	st->depth = 0;
	st->overflow = 0;
	st->marker = 0;
	st->roof.entry_ns = 0;
	st->roof_other_sp = cfg_roofline ? roof_storage_sp(bpf_get_current_task_btf()) : 0;
	st->tid = tid;
	if (bpf_map_update_elem(&uslots, &tid, &slot, BPF_NOEXIST)) {
		st->tid = 0;
		bpf_map_push_elem(&ufree, &slot, 0);
		stat_inc(STAT_STACKS_FULL);
		return UPROBE_NO_SLOT;
	}
	return slot;
}

/*
 * Slow path: the thread's first hit since this CPU's last fold.  Fold it
 * (read, catch up, re-snapshot) and refill the CPU's cache.  Returns 1 for an
 * untracked thread, -1 when nothing could be read, else 0 with *ts the time;
 * the reading (the snapshot's) is then in uc[].read.
 */
static __always_inline int ucache_fill(struct cpu_snap *snap, struct task_struct *task, bool create, __u64 *ts)
{
	struct thread_stats *t = thread_get(task);
	__u64 now;

	if (!t)
		return 1;
	now = account_current_clocked(t, task);
	if (!now)
		return -1;
	for (__u32 e = 0; e < TMABPF_MAX_EVENTS; e++) {
		if (e >= account_cfg.nr_events)
			break;
		snap->uc[e].read = snap->c[e];
		cv_diff(&snap->uc[e].off, &t->c[e], &snap->c[e]);
	}
	/* on-CPU time: exact at its switch-in, plus the running slice */
	if (t->last_in_ns)
		snap->uc_oncpu_base = sub_clamped(t->exec_in, t->exec_base) - t->last_in_ns;
	else
		snap->uc_oncpu_base = t->oncpu_ns - now;
	snap->uc_blocked_ns = t->offcpu_blocked_ns;
	snap->uc_runq_ns = t->offcpu_runqueue_ns;
	snap->uc_slot = slot_of(t->tid, t->pid, create);
	snap->uc_gen = snap->gen;
	/* a thread not seen running (no switch-in) gets no cache: every hit refolds */
	snap->uc_tid = t->last_in_ns ? t->tid : 0;
	*ts = now;
	return 0;
}

/* The running thread's sums of one event now: reading + cached offset. */
static __always_inline void sums_now(struct counter_val *out, const struct uc_event *u)
{
	cv_sum(out, &u->read, &u->off);
}

/* Push a frame for fn; false when none was (the stack is full). */
static __always_inline bool frame_push(struct ustack *st, const struct cpu_snap *snap,
				       __u32 fn, __u64 sp, __u64 now, __u32 tid)
{
	__u32 d = st->depth;
	struct ucall_frame *f;
	struct counter_val *c;
	__u32 outermost = 1, n = account_cfg.nr_events;

	if (d >= TMABPF_MAX_DEPTH) {
		count_call(st, fn, tid, st->pid, false);	/* not tracked further: counted here */
		st->overflow++;
		stat_inc(STAT_DEPTH_OVERFLOW);
		return false;
	}
	f = frame_at(st, d);
	trace_emit(st->pid, tid, fn, d, TRACE_ENTRY, now);
	f->entry_ns = now;
	f->oncpu_ns = snap->uc_oncpu_base + now;
	f->blocked_ns = snap->uc_blocked_ns;
	f->runq_ns = snap->uc_runq_ns;
	f->child_oncpu_ns = 0;
	f->has_child = 0;
	c = cv_first(f, sizeof(*f));
	for (__u32 e = 0; e < TMABPF_MAX_EVENTS; e++) {
		if (e >= n)
			break;
		sums_now(&c[e], &snap->uc[e]);
	}
	for (__u32 i = 0; i < TMABPF_MAX_DEPTH; i++) {
		if (i >= d)
			break;
		if (st->ent[i].fn == fn)
			outermost = 0;
	}
	st->ent[d].sp = sp;
	st->ent[d].fn = fn;
	st->ent[d].outermost = outermost;
	st->depth = d + 1;
	return true;
}

/* An entry in a call outside the window (enum uprobe_window): its frame is tracked, so that its
 * return finds it, and nothing counted.  0, or 1 when the stack is full (no return wanted). */
static __always_inline int outside_push(struct ustack *st, __u32 fn, __u64 sp)
{
	__u32 d = st->depth;

	if (d >= TMABPF_MAX_DEPTH)
		return 1;
	st->ent[d].sp = sp;
	st->ent[d].fn = fn;
	st->depth = d + 1;
	return 0;
}

/* Close the top frame (index d - 1) at its return and fold it into the
 * function's row and the parent's sums. */
static __always_inline void frame_pop(struct ustack *st, __u32 d, const struct cpu_snap *snap,
				      __u64 now, __u32 tid)
{
	__u32 top = (d - 1) & (TMABPF_MAX_DEPTH - 1);
	struct ucall_frame *f = frame_at(st, top), *up = NULL;
	bool outermost = st->ent[top].outermost;
	struct counter_val *fc, *fchild, *uchild = NULL;
	bool first_child = false;
	struct row_ref row;
	__u32 n = account_cfg.nr_events;
	__u64 oncpu;

	st->depth = d - 1;
	if (!row_get(st, st->ent[top].fn, tid, st->pid, &row))
		return;
	if (d >= 2)
		up = frame_at(st, d - 2);
	oncpu = sub_clamped(snap->uc_oncpu_base + now, f->oncpu_ns);
	row.h->returns++;	/* calls: see func_head */
	percall_fn_return(st->ent[top].fn, st->pid, outermost, sub_clamped(now, f->entry_ns), oncpu);
	if (outermost) {
		row.h->wall_ns += sub_clamped(now, f->entry_ns);
		row.h->oncpu_ns += oncpu;
		row.h->offcpu_blocked_ns += sub_clamped(snap->uc_blocked_ns, f->blocked_ns);
		row.h->offcpu_runqueue_ns += sub_clamped(snap->uc_runq_ns, f->runq_ns);
	}
	/* self - inclusive (func_head): - callees for an outermost call, + its
	 * self for a recursive one; written last (uprobes_read reads it first) */
	if (!outermost)
		row.h->self_oncpu_ns += sub_clamped(oncpu, f->child_oncpu_ns);
	else if (f->has_child)
		row.h->self_oncpu_ns -= f->child_oncpu_ns;
	if (up) {
		up->child_oncpu_ns += oncpu;
		uchild = cv_second(up, sizeof(*up));
		first_child = !up->has_child;
		up->has_child = 1;
	}
	/* in passes with few live pointers (BPF has few registers): first the
	 * inclusive delta, in place of the popped frame's entry sums */
	fc = cv_first(f, sizeof(*f));
	for (__u32 e = 0; e < TMABPF_MAX_EVENTS; e++) {
		struct counter_val v;

		if (e >= n)
			break;
		sums_now(&v, &snap->uc[e]);
		cv_delta(&fc[e], &v, &fc[e]);
	}
	if (outermost) {
		cv_add_n(row.c, fc, n);
		if (f->has_child)
			cv_sub_n(row.self, cv_second(f, sizeof(*f)), n);
	} else if (f->has_child) {
		fchild = cv_second(f, sizeof(*f));
		for (__u32 e = 0; e < TMABPF_MAX_EVENTS; e++) {
			struct counter_val self;

			if (e >= n)
				break;
			cv_delta(&self, &fc[e], &fchild[e]);
			cv_add(&row.self[e], &self);
		}
	} else
		cv_add_n(row.self, fc, n);
	if (uchild) {
		if (first_child)
			cv_copy_n(uchild, fc, n);
		else
			cv_add_n(uchild, fc, n);
	}
}

/* The running thread's cache in this CPU's snapshot, filled when stale, and
 * its reading now in uc[].read.  Returns the snapshot; *rc 1 for an untracked
 * thread, -1 on failure. */
static __always_inline struct cpu_snap *ucache_get(struct task_struct *task, __u32 tid, bool create, __u64 *ts,
						   int *rc)
{
	__u32 zero = 0, cpu, n = account_cfg.nr_events, ncpu = account_cfg.nr_cpus;
	struct cpu_snap *snap = bpf_map_lookup_elem(&snaps, &zero);
	bool ok0 = true;

	*rc = -1;
	if (!snap)
		return NULL;
	if (snap->uc_tid != tid || snap->uc_gen != snap->gen || (create && snap->uc_slot == UPROBE_NO_SLOT)) {
		*rc = ucache_fill(snap, task, create, ts);
		return *rc ? NULL : snap;
	}
	cpu = bpf_get_smp_processor_id();
	for (__u32 e = 0; e < TMABPF_MAX_EVENTS; e++) {
		if (e >= n)
			break;
		if (!account_read_one(snap, e, cpu, ncpu, &snap->uc[e].read) && e == 0)
			ok0 = false;
	}
	*ts = account_clock(snap, snap->uc[0].read.enabled, ok0);
	*rc = 0;
	return snap;
}

/* What a hit works on: the running thread, this CPU's snapshot with the
 * thread's cache and reading (ucache_get), the thread's slot (NULL: none). */
struct hit {
	struct task_struct *task;
	__u32 tid;
	struct cpu_snap *snap;
	struct ustack *st;
	__u64 now;
};

/* false for an untracked thread, or when nothing could be read */
static __always_inline bool hit_begin(struct hit *h, bool create)
{
	int rc;

	h->task = bpf_get_current_task_btf();
	h->tid = h->task->pid;
	h->snap = ucache_get(h->task, h->tid, create, &h->now, &rc);
	if (!h->snap)
		return false;
	h->st = stack_at(h->snap->uc_slot);
	return true;
}

static __always_inline int on_entry(struct pt_regs *ctx, __u64 sp, __u64 cookie)
{
	__u32 fn = (__u32)cookie;
	struct hit h;

	if (!hit_begin(&h, true))
		return 1;
	/* calls are counted where the frame ends (return, unmatched, exit) or
	 * overflows; the reader adds frames still open */
	if (h.st) {
		/* an outermost call decides for everything it calls (enum uprobe_window) */
		if (!h.st->depth)
			h.st->outside = uprobe_window != UWIN_OPEN;
		if (h.st->outside)
			return outside_push(h.st, fn, sp);
		if (!frame_push(h.st, h.snap, fn, sp, h.now, h.tid))
			return 1;
		percall_spin(h.task, h.snap, fn, h.now, true);
		if (cfg_roofline && cookie >> 32 && !roof_enter_slot(ctx, h.st, cookie >> 32, sp)) {
			h.st->roof.frame = h.st->depth - 1;
			h.st->roof.entry_ns = h.now;
		}
		if (percall_is_marker(fn) && !h.st->marker) {
			h.st->marker = h.st->depth;
			percall_emit(PERCALL_BEGIN, fn, ++h.st->iter_seq, bpf_ktime_get_ns());
		}
		return 0;
	}
	if (uprobe_window == UWIN_OPEN)
		count_call(NULL, fn, h.tid, h.task->tgid, false);
	return 1;
}

/* A return in a call outside the window (enum uprobe_window): its frame and those skipped above it
 * are popped, nothing counted. */
static __always_inline int outside_return(struct ustack *st, __u64 sp)
{
	for (__u32 i = 0; i < TMABPF_MAX_DEPTH; i++) {
		__u32 d = st->depth, top;

		if (d == 0 || d > TMABPF_MAX_DEPTH)
			break;
		top = (d - 1) & (TMABPF_MAX_DEPTH - 1);
		if (st->ent[top].sp + RET_SP_DELTA > sp)
			break;	/* an outer frame: this return is not one of ours */
		st->depth = d - 1;
		if (st->ent[top].sp + RET_SP_DELTA == sp)
			break;
	}
	return 0;
}

/* session: the return of an entry that pushed a frame (on_entry() returns 1
 * to skip the others), so the frame is the one its stack pointer matches and
 * fn need not be compared.  cookie: the attach cookie, fn its lower half
 * (unused, 0, for a session); --roofline's open call is the frame's when the
 * slot says so (ustack.roof.frame). */
static __always_inline int on_return_of(__u64 sp, __u64 cookie, bool session)
{
	__u32 fn = (__u32)cookie;
	struct hit h;
	struct ustack *st;
	__u32 tid;
	__u64 now;

	if (!hit_begin(&h, false))
		return 0;
	st = h.st;
	tid = h.tid;
	now = h.now;
	if (!st || !st->depth) {
		stat_inc(STAT_RET_NO_ENTRY);
		return 0;
	}
	if (st->outside)	/* a loop of its own: one branch in the loop below doubles its verification */
		return outside_return(st, sp);
	for (__u32 i = 0; i < TMABPF_MAX_DEPTH; i++) {
		__u32 d = st->depth, top;

		if (d == 0 || d > TMABPF_MAX_DEPTH)
			break;
		top = (d - 1) & (TMABPF_MAX_DEPTH - 1);
		if (st->ent[top].sp + RET_SP_DELTA < sp) {
			/* deeper than the returning call: its return never came */
			count_call(st, st->ent[top].fn, tid, st->pid, true);
			trace_emit(st->pid, tid, st->ent[top].fn, d - 1, TRACE_UNMATCHED, now);
			percall_spin(h.task, h.snap, st->ent[top].fn, now, false);
			if (cfg_roofline && st->roof.entry_ns && st->roof.frame == top) {
				pcpu_inc(&roof_stats, ROOF_STAT_ABANDONED);
				st->roof.entry_ns = 0;
			}
			st->depth = d - 1;
			if (st->marker >= d)
				st->marker = 0;	/* its iteration never ends: dropped */
			continue;
		}
		if (st->ent[top].sp + RET_SP_DELTA == sp && (session || st->ent[top].fn == fn)) {
			__u32 ret_fn = st->ent[top].fn;

			trace_emit(st->pid, tid, ret_fn, d - 1, TRACE_RETURN, now);
			if (cfg_roofline && st->roof.entry_ns && st->roof.frame == top)
				roof_leave_slot(st, now);
			frame_pop(st, d, h.snap, now, tid);
			percall_spin(h.task, h.snap, ret_fn, now, false);
			if (cfg_percall && st->marker == d) {
				st->marker = 0;
				percall_emit(PERCALL_END, ret_fn, st->iter_seq, bpf_ktime_get_ns());
			}
		} else
			stat_inc(STAT_RET_NO_ENTRY);	/* entered before we attached, or past max depth */
		break;
	}
	return 0;
}

static __always_inline int on_return(struct pt_regs *ctx, __u64 sp, __u64 cookie)
{
	return on_return_of(sp, cookie, false);
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
		handler(ctx, sp, bpf_get_attach_cookie(ctx));			\
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
		return on_return_of(sp, 0, true);
	return on_entry(ctx, sp, bpf_get_attach_cookie(ctx));
}

UPROBE_PROG("uprobe.multi", tmabpf_uentry, on_entry)
UPROBE_PROG("uretprobe.multi", tmabpf_uexit, on_return)
/* Classic uprobes, for kernels without uprobe_multi links (< 6.6). */
UPROBE_PROG("uprobe", tmabpf_uentry1, on_entry)
UPROBE_PROG("uretprobe", tmabpf_uexit1, on_return)

/* --itt (uprobes.h): begin(id, key) and end(id, key) of the collector's spans; the key stands for
 * the stack pointer, so that a span nests with probed calls like one (the collector's frame at the
 * begin: below its probed callers'). */
const volatile __u64 cfg_itt_wake = 0;	/* wake user space once this many bytes of names wait */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);	/* set by the loader with --itt */
} itt_rb SEC(".maps");

SEC("uprobe")
int tmabpf_itt_begin(struct pt_regs *ctx)
{
	__u32 id = (__u32)PT_REGS_PARM1(ctx);
	__u64 key = PT_REGS_PARM2(ctx);

	barrier_var(key);
	on_entry(ctx, key, ITT_FN | id);
	return 0;
}

SEC("uprobe")
int tmabpf_itt_end(struct pt_regs *ctx)
{
	__u32 id = (__u32)PT_REGS_PARM1(ctx);
	__u64 key = PT_REGS_PARM2(ctx);

	barrier_var(key);
	on_return_of(key + RET_SP_DELTA, ITT_FN | id, false);
	return 0;
}

/* A pair's names (once per pair and process).  One lost to a full ring buffer leaves its spans
 * unnamed: user space reads the collector's table instead, or says so (collect/itt_run.c). */
SEC("uprobe")
int tmabpf_itt_name(struct pt_regs *ctx)
{
	__u32 id = (__u32)PT_REGS_PARM1(ctx);
	const char *domain = (const char *)PT_REGS_PARM2(ctx), *name = (const char *)PT_REGS_PARM3(ctx);
	__u64 id_tgid = bpf_get_current_pid_tgid();
	struct itt_name_rec *r;

	/* the targets' only: any process that maps the collector runs this (another user's too) */
	if (!task_tracked(id_tgid >> 32, (__u32)id_tgid))
		return 0;
	r = bpf_ringbuf_reserve(&itt_rb, sizeof(*r), 0);
	if (!r)
		return 0;
	r->pid = id_tgid >> 32;
	r->id = id;
	if (bpf_probe_read_user_str(r->domain, sizeof(r->domain), domain) < 0)
		r->domain[0] = 0;
	if (bpf_probe_read_user_str(r->name, sizeof(r->name), name) < 0)
		r->name[0] = 0;
	bpf_ringbuf_submit(r, bpf_ringbuf_query(&itt_rb, BPF_RB_AVAIL_DATA) >= cfg_itt_wake ? BPF_RB_FORCE_WAKEUP
											     : BPF_RB_NO_WAKEUP);
	return 0;
}

static __always_inline void row_add(struct func_stats *fs, struct func_head *h, const struct counter_val *c,
				    const struct counter_val *self)
{
	for (__u32 e = 0; e < TMABPF_MAX_EVENTS; e++) {
		if (e >= account_cfg.nr_events)
			break;
		cv_add(&fs->c[e], &c[e]);
		cv_add(&fs->self[e], &self[e]);
	}
	fs->calls += h->calls;
	fs->returns += h->returns;
	fs->unmatched += h->unmatched;
	fs->wall_ns += h->wall_ns;
	fs->oncpu_ns += h->oncpu_ns;
	fs->self_oncpu_ns += h->self_oncpu_ns;
	fs->offcpu_blocked_ns += h->offcpu_blocked_ns;
	fs->offcpu_runqueue_ns += h->offcpu_runqueue_ns;
}

/* Move a slot's cached row into the funcs hash and free the entry. */
static __always_inline void row_flush(struct ustack *st, __u32 k, __u32 tid)
{
	struct func_head *h = row_at(st, k);
	struct counter_val *c, *self;
	struct func_stats *fs;

	if (!h->fn1)
		return;
	c = cv_first(h, sizeof(*h));
	self = cv_second(h, sizeof(*h));
	fs = func_get_ids(h->fn1 - 1, tid, h->pid);
	if (fs)
		row_add(fs, h, c, self);
	for (__u32 e = 0; e < TMABPF_MAX_EVENTS; e++) {
		if (e >= account_cfg.nr_events)
			break;
		c[e] = (struct counter_val){};
		self[e] = (struct counter_val){};
	}
	__builtin_memset(h, 0, sizeof(*h));
}

/* A thread exits: frames still open never returned; its rows go to the funcs
 * hash and its slot is given back.  The last of its process takes the process'
 * --roofline totals with it. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(tmabpf_uthrexit, struct task_struct *task)
{
	__u32 tid = task->pid, *found = bpf_map_lookup_elem(&uslots, &tid), slot;
	__u64 now = cfg_trace ? bpf_ktime_get_ns() : 0;
	struct ustack *st;

	if (cfg_roof_windows)
		roof_procs_exit(task);
	if (!found)
		return 0;
	slot = *found;
	st = stack_at(slot);
	if (!st)
		return 0;
	for (__u32 i = 0; i < TMABPF_MAX_DEPTH && !st->outside; i++) {
		__u32 d = st->depth;

		if (i >= d || d > TMABPF_MAX_DEPTH)
			break;
		/* innermost first, as the frames would have returned */
		trace_emit(st->pid, tid, st->ent[(d - 1 - i) & (TMABPF_MAX_DEPTH - 1)].fn, d - 1 - i, TRACE_EXIT, now);
		count_call(st, st->ent[i].fn, tid, st->pid, true);
	}
	for (__u32 k = 0; k < TMABPF_ROW_CACHE; k++)
		row_flush(st, k, tid);
	if (cfg_roofline)
		roof_slot_flush(st);
	st->depth = 0;
	st->marker = 0;
	st->outside = 0;
	st->tid = 0;
	bpf_map_delete_elem(&uslots, &tid);
	bpf_map_push_elem(&ufree, &slot, 0);
	return 0;
}
