/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The work of a known GEMM/GEMV call from its arguments (bpf/roof_shapes.h),
 * one definition for both programs that see such calls: --roofline's own
 * (bpf/roofline.bpf.c, on the known entries nobody probes with --uprobe) and
 * the --uprobe entry path (bpf/uprobes.bpf.c), which reads them in the frame it
 * opens anyway.  Both share these maps (the second loaded reuses the first's by
 * fd), and the roofline program sees the --uprobe slots (bpf/uslots.bpf.h), so
 * that a thread's outermost known call is one, whichever program saw it.
 *
 * At entry the integer arguments are read from the registers (and from the
 * stack only for the signatures that need a stack argument); floating-point
 * ones, CBLAS's alpha and beta, travel in vector registers a uprobe cannot
 * read; the Fortran ones, and the batch interfaces' group arrays, are read
 * through their pointers.  The call's FLOPs (2MNK, 2MN, summed over a batch)
 * and compulsory bytes (every operand once, the output written, and read too
 * when a readable beta is non-zero) wait for its return, when they are added to
 * its (function, shape, process) sums with its time.
 *
 * Where they wait.  A call the roofline program opened: in the thread's task
 * storage, summed into roof_shapes (a per-CPU hash) at its return.  A call a
 * --uprobe entry opened: in the thread's slot (uprobes.h: ustack.roof, its frame
 * index there), summed into one of the slot's few shape rows (ustack.roof_rows)
 * that user space reads too: a probed known call's entry and return then look
 * up nothing the uprobe program does not look up anyway (each lookup was ~20-65
 * ns a call here: bench/bench-roofline.py).  Each program tells the other what
 * it has open: the slot's call is read by the roofline program, the roofline
 * program's stack pointer is written into the slot (ustack.roof_other_sp).
 */
#ifndef TMABPF_ROOF_WORK_BPF_H
#define TMABPF_ROOF_WORK_BPF_H
#include <bpf/bpf_core_read.h>
#include "maps.bpf.h"
#include "roof_shapes.h"
#include "uprobes.h"

/* per CPU: plain adds, no atomics (user space sums the CPUs) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, ROOF_MAX_SHAPES);
	__type(key, struct roof_shape);
	__type(value, struct roof_sums);
} roof_shapes SEC(".maps");

/* the outermost known call in progress of a thread the roofline program opened it on, in the
 * thread's own storage (no hash update or delete per call); entry_ns 0: none.  A --uprobe entry
 * opens its own in the thread's slot instead (uprobes.h), where its return finds it. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct roof_open);
} roof_open SEC(".maps");

STAT_MAP(roof_stats, ROOF_STAT_MAX);

/* --per-call with --roofline: each process' work so far (every thread, atomic adds), which the
 * marker's snapshots carry (percall_rec.roof) so that a window's work is their difference */
const volatile bool cfg_roof_windows = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ROOF_MAX_PROCS);
	__type(key, __u32);	/* tgid */
	__type(value, struct roof_sums);
} roof_procs SEC(".maps");

/* The process' totals so far into out, for a marker's snapshot (tgid and out in its record): true;
 * false when roof_procs is full and has none for it, so that its windows' work is unknown (out
 * zero).  A process without any yet gets its zero totals here, so that later calls are added. */
static const struct roof_sums roof_procs_zero;	/* .rodata: no stack, and not the record the key is in */

static __always_inline bool roof_procs_read(const __u32 *tgid, struct roof_sums *out)
{
	struct roof_sums *s = bpf_map_lookup_elem(&roof_procs, tgid);

	*out = (struct roof_sums){};
	if (!s) {
		bpf_map_update_elem(&roof_procs, tgid, &roof_procs_zero, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&roof_procs, tgid);
	}
	if (!s)
		return false;
	*out = *s;
	return true;
}

/* A thread exits: when it is its process' last, the process' totals go (its pid may come back). */
static __always_inline void roof_procs_exit(struct task_struct *task)
{
	__u32 tgid = task->tgid;

	if (!task->signal || task->signal->live.counter)
		return;
	bpf_map_delete_elem(&roof_procs, &tgid);
}

#if defined(__TARGET_ARCH_x86)
#define ROOF_ARG_REGS 6
#define ROOF_STACK_ARGS_AT 8		/* above the return address */
#elif defined(__TARGET_ARCH_arm64)
#define ROOF_ARG_REGS 8
#define ROOF_STACK_ARGS_AT 0
#else
#error "roof_work.bpf.h: the argument registers of this architecture"
#endif
#define ROOF_STACK_ARGS 10
#define ROOF_ARGS_MAX (ROOF_ARG_REGS + ROOF_STACK_ARGS)	/* the batch interfaces' 16 integer arguments */

/* Does the signature read an argument past the registers?  (The Fortran ones' beta, the batches'
 * arrays.)  CBLAS's and oneDNN's leading dimensions and increments are past them too, and are not
 * read: one more read of the stack made the uprobe's BPF time per call 1.21 times that without the
 * roofline, against 1.05 without it (bench/bench-roofline.py; the bound is 1.10).  A call
 * BLAS rejects for those alone is counted as its shape's work (docs/roofline.md). */
static __always_inline bool roof_sig_stack(__u32 sig)
{
	return sig == SIG_F77_GEMM || sig == SIG_F77_GEMV || sig == SIG_CBLAS_GEMM_BATCH ||
	       sig == SIG_CBLAS_GEMM_STRIDED;
}

/* The integer (and pointer) arguments in order: registers, then stack slots of 8 bytes. */
static __always_inline int roof_args_read(struct pt_regs *ctx, __u32 sig, __u64 *a)
{
	a[0] = PT_REGS_PARM1(ctx);
	a[1] = PT_REGS_PARM2(ctx);
	a[2] = PT_REGS_PARM3(ctx);
	a[3] = PT_REGS_PARM4(ctx);
	a[4] = PT_REGS_PARM5(ctx);
#if ROOF_ARG_REGS > 5
	a[5] = PT_REGS_PARM6(ctx);
#endif
#if ROOF_ARG_REGS > 6
	a[6] = PT_REGS_PARM7(ctx);
	a[7] = PT_REGS_PARM8(ctx);
#endif
	if (!roof_sig_stack(sig))
		return 0;
	return bpf_probe_read_user(&a[ROOF_ARG_REGS], ROOF_STACK_ARGS * sizeof(__u64),
				   (void *)(PT_REGS_SP(ctx) + ROOF_STACK_ARGS_AT));
}

/* *p as a 32-bit INTEGER (LP64, MKL_INT); false when unreadable. */
static __always_inline bool roof_int(__u64 p, __s64 *v)
{
	__s32 x;

	if (bpf_probe_read_user(&x, sizeof(x), (void *)p))
		return false;
	*v = x;
	return true;
}

/* A Fortran transpose character behind p into flags: false when unreadable; *bad set when BLAS
 * rejects it (not 'N', 'T' or 'C', either case, as LSAME compares them). */
static __always_inline bool roof_f77_trans(__u64 p, __u32 bit, __u32 *flags, __u32 *bad)
{
	char c;

	if (bpf_probe_read_user(&c, sizeof(c), (void *)p))
		return false;
	c |= 0x20;	/* lower case */
	if (c == 't' || c == 'c')
		*flags |= bit;
	else if (c != 'n')
		*bad = 1;
	return true;
}

/* oneDNN's transpose character c into flags: false unless 'N' or 'T', either case. */
static __always_inline bool roof_dnnl_trans(char c, __u32 bit, __u32 *flags)
{
	c |= 0x20;
	if (c == 't')
		*flags |= bit;
	return c == 'n' || c == 't';
}

/* Is the beta (a float or a double behind p) non-zero?  false when unreadable. */
static __always_inline bool roof_beta(__u64 p, __u32 elem, __u32 *flags)
{
	__u64 bits = 0;

	if (bpf_probe_read_user(&bits, elem == 8 ? 8 : 4, (void *)p))
		return false;
	bits &= elem == 8 ? 0x7fffffffffffffffULL : 0x7fffffffULL;	/* -0.0 is zero */
	*flags |= ROOF_BETA_KNOWN | (bits ? ROOF_BETA_NONZERO : 0);
	return true;
}

static __always_inline bool roof_dim_ok(__s64 d)
{
	return d > 0 && d <= ROOF_MAX_DIM;
}

/* Would n copies of x wrap a u64?  (The quotient kept opaque: clang turns the plain comparison
 * into a 128-bit multiply BPF has not.) */
static __always_inline bool roof_wraps(__u64 x, __u64 n)
{
	__u64 most = ~0ULL / n;

	barrier_var(most);
	return x > most;
}

/* One GEMM's FLOPs and compulsory bytes (M x N x K, C read too when beta is known non-zero). */
static __always_inline void roof_gemm(__u64 m, __u64 n, __u64 k, __u32 elem, __u32 fl, __u64 *flops, __u64 *bytes)
{
	*flops = 2 * m * n * k;
	*bytes = elem * (m * k + k * n + m * n + (fl & ROOF_BETA_NONZERO ? m * n : 0));
}

/* CBLAS's transpose t into flags: false when CBLAS rejects it (111 NoTrans, 112 Trans, 113
 * ConjTrans; OpenBLAS takes 114, ConjNoTrans, too). */
static __always_inline bool roof_cblas_trans_ok(__s64 t, __u32 bit, __u32 *flags)
{
	if (t == 112 || t == 113)
		*flags |= bit;
	return t >= 111 && t <= 114;
}

/* CBLAS's layout l into flags: false unless 101 RowMajor or 102 ColMajor. */
static __always_inline bool roof_cblas_layout_ok(__s64 l, __u32 *flags)
{
	if (l == 101)
		*flags |= ROOF_ROW_MAJOR;
	return l == 101 || l == 102;
}

/* CBLAS's transpose enum behind p; false when unreadable or rejected. */
static __always_inline bool roof_cblas_trans(__u64 p, __u32 bit, __u32 *flags)
{
	__s64 t;

	return roof_int(p, &t) && roof_cblas_trans_ok(t, bit, flags);
}

static __always_inline __s64 roof_max1(__s64 x)
{
	return x > 1 ? x : 1;
}

/* xerbla's checks of a GEMM's leading dimensions (op(A) M x K, op(B) K x N, C M x N; fl's layout
 * and transposes): false when BLAS rejects the call and computes nothing. */
static __always_inline bool roof_gemm_lds_ok(__u32 fl, __s64 m, __s64 n, __s64 k, __s64 lda, __s64 ldb, __s64 ldc)
{
	bool row = fl & ROOF_ROW_MAJOR, ta = fl & ROOF_TRANS_A, tb = fl & ROOF_TRANS_B;

	/* the stored rows of A: column-major M (K transposed), row-major K (M transposed); B alike */
	return lda >= roof_max1(row == ta ? m : k) && ldb >= roof_max1(row == tb ? k : n) && ldc >= roof_max1(row ? n : m);
}

/* A call BLAS rejects (its arguments, of those read, as xerbla checks them; a dimension < 0 is an unreadable
 * one's, as a 0 or an absurd one is): counted, of the unreadable ones; 0 for roof_call_work. */
static __always_inline int roof_invalid(void)
{
	pcpu_inc(&roof_stats, ROOF_STAT_INVALID);
	return 0;
}

/* cblas_?gemm_batch: group_count groups behind pointers (a[1..5] the transposes and M, N, K
 * arrays, a[8], a[10], a[13] the leading dimensions', a[11] beta's, a[14] the count, a[15] the
 * sizes); the shape is the first group's, the work the whole batch's.  1; 0 when unreadable or
 * rejected. */
static __always_inline int roof_batch(__u64 *a, __u32 elem, struct roof_open *o)
{
	__s64 groups = (__s32)a[14];
	__u64 fsum = 0, bsum = 0;
	__u32 layout = o->key.flags;	/* and ROOF_BATCH */

	if (groups <= 0 || groups > ROOF_MAX_GROUPS)
		return 0;
	/* each group's transposes and leading dimensions in the slots of arguments read by then (the
	 * layout, alpha's, A's, B's, C's, the count): no more stack */
	__s64 *v = (__s64 *)a;

	for (__u32 g = 0; g < ROOF_MAX_GROUPS; g++) {
		__s64 m, n, k, size;
		__u32 fl = layout;
		__u64 f, b;

		if (g >= groups)
			break;
		if (!roof_int(a[1] + 4 * g, &v[0]) || !roof_int(a[2] + 4 * g, &v[6]) || !roof_int(a[3] + 4 * g, &m) ||
		    !roof_int(a[4] + 4 * g, &n) || !roof_int(a[5] + 4 * g, &k) || !roof_int(a[15] + 4 * g, &size) ||
		    !roof_int(a[8] + 4 * g, &v[7]) || !roof_int(a[10] + 4 * g, &v[9]) || !roof_int(a[13] + 4 * g, &v[12]) ||
		    !roof_beta(a[11] + elem * g, elem, &fl))
			return 0;
		if (!roof_cblas_trans_ok(v[0], ROOF_TRANS_A, &fl) || !roof_cblas_trans_ok(v[6], ROOF_TRANS_B, &fl) ||
		    !roof_gemm_lds_ok(fl, m, n, k, v[7], v[9], v[12]))
			return roof_invalid();
		if (!roof_dim_ok(m) || !roof_dim_ok(n) || !roof_dim_ok(k) || !roof_dim_ok(size))
			return 0;
		roof_gemm(m, n, k, elem, fl, &f, &b);
		if (roof_wraps(f, size) || fsum + f * size < fsum || roof_wraps(b, size) || bsum + b * size < bsum)
			return 0;	/* absurd: the sums would wrap */
		fsum += f * size;
		bsum += b * size;
		if (g == 0) {
			o->key.flags = fl;
			o->key.m = m;
			o->key.n = n;
			o->key.k = k;
		}
	}
	o->flops = fsum;
	o->bytes = bsum;
	return 1;
}

#include "roof_ggml.bpf.h"

/* The call's shape, FLOPs and compulsory bytes from its arguments into o: 1; 0 when unreadable; -1
 * for a ggml node on a thread other than its first (roof_ggml_work). */
static __always_inline int roof_call_work(struct pt_regs *ctx, __u32 sig, __u32 elem, struct roof_open *o)
{
	__u64 a[ROOF_ARGS_MAX] = {};
	__s64 m = 0, n = 0, k = 0, batch = 1;
	__u32 fl = 0;

	if (roof_args_read(ctx, sig, a))
		return false;
	o->weight_bytes = 0;
	switch (sig) {
	case SIG_GGML_MUL_MAT:
		return roof_ggml_work(a[0], a[1], o, a);
	case SIG_GGML_REPACK_MUL_MAT:
		return roof_ggml_work(a[1], a[2], o, a);
	case SIG_CBLAS_GEMM:	/* integer arguments: layout, ta, tb, M, N, K, A, lda, B, ldb, C, ldc */
	case SIG_CBLAS_GEMM_STRIDED:	/* ... A, lda, stridea, B, ldb, strideb, C, ldc, stridec, batch */
		m = (__s32)a[3], n = (__s32)a[4], k = (__s32)a[5];
		if (!roof_cblas_layout_ok((__s32)a[0], &fl) || !roof_cblas_trans_ok((__s32)a[1], ROOF_TRANS_A, &fl) ||
		    !roof_cblas_trans_ok((__s32)a[2], ROOF_TRANS_B, &fl))
			return roof_invalid();
		if (sig == SIG_CBLAS_GEMM_STRIDED) {	/* its arguments past the registers are read */
			fl |= ROOF_BATCH;
			batch = (__s32)a[15];	/* alpha and beta are in vector registers, not counted here */
			if (!roof_gemm_lds_ok(fl, m, n, k, (__s32)a[7], (__s32)a[10], (__s32)a[13]))
				return roof_invalid();
		}
		break;
	case SIG_CBLAS_GEMM_BATCH:
		o->key.flags = ROOF_BATCH;
		if (!roof_cblas_layout_ok((__s32)a[0], &o->key.flags))
			return roof_invalid();
		return roof_batch(a, elem, o);
	case SIG_DNNL_GEMM:	/* row-major: ta, tb, M, N, K, A, lda, B, ldb, C, ldc (64-bit), 'N' or 'T' */
		fl |= ROOF_ROW_MAJOR;
		m = (__s64)a[2], n = (__s64)a[3], k = (__s64)a[4];
		if (!roof_dnnl_trans((char)a[0], ROOF_TRANS_A, &fl) || !roof_dnnl_trans((char)a[1], ROOF_TRANS_B, &fl))
			return roof_invalid();
		break;
	case SIG_F77_GEMM: {	/* ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc: all behind pointers */
		__u32 bad = 0;	/* the leading dimensions not read, as CBLAS's are not */

		if (!roof_f77_trans(a[0], ROOF_TRANS_A, &fl, &bad) || !roof_f77_trans(a[1], ROOF_TRANS_B, &fl, &bad) ||
		    !roof_int(a[2], &m) || !roof_int(a[3], &n) || !roof_int(a[4], &k) || !roof_beta(a[10], elem, &fl))
			return 0;
		if (bad)
			return roof_invalid();
		break;
	}
	case SIG_CBLAS_GEMV:	/* layout, trans, M, N, A, lda, X, incX, Y, incY */
		m = (__s32)a[2], n = (__s32)a[3], k = 1;
		if (!roof_cblas_layout_ok((__s32)a[0], &fl) || !roof_cblas_trans_ok((__s32)a[1], ROOF_TRANS_A, &fl))
			return roof_invalid();
		break;
	case SIG_F77_GEMV: {	/* trans, m, n, alpha, a, lda, x, incx, beta, y, incy */
		__u32 bad = 0;

		if (!roof_f77_trans(a[0], ROOF_TRANS_A, &fl, &bad) || !roof_int(a[1], &m) || !roof_int(a[2], &n) ||
		    !roof_beta(a[8], elem, &fl))
			return 0;
		if (bad)
			return roof_invalid();
		k = 1;
		break;
	}
	default:
		return 0;
	}
	if (!roof_dim_ok(m) || !roof_dim_ok(n) || !roof_dim_ok(k) || !roof_dim_ok(batch))
		return 0;
	o->key.flags = fl;
	o->key.m = (__u32)m;
	o->key.n = (__u32)n;
	if (sig == SIG_CBLAS_GEMV || sig == SIG_F77_GEMV) {
		/* y = op(A) x: A is M x N; x has N elements (M transposed), y the other */
		__u64 xlen = fl & ROOF_TRANS_A ? (__u64)m : (__u64)n, ylen = fl & ROOF_TRANS_A ? (__u64)n : (__u64)m;

		o->key.k = 0;
		o->flops = 2 * (__u64)m * (__u64)n;
		o->bytes = elem * ((__u64)m * (__u64)n + xlen + ylen + (fl & ROOF_BETA_NONZERO ? ylen : 0));
		return true;
	}
	o->key.k = (__u32)k;
	roof_gemm(m, n, k, elem, fl, &o->flops, &o->bytes);
	if (batch > 1) {
		if (roof_wraps(o->flops, batch) || roof_wraps(o->bytes, batch))
			return false;
		o->flops *= batch;
		o->bytes *= batch;
	}
	return true;
}

/* The call's work from its arguments into o, for process tgid at stack pointer sp: 0; 1 when
 * unreadable (counted).  o->entry_ns is the caller's to set. */
static __always_inline int roof_open_work(struct pt_regs *ctx, struct roof_open *o, __u64 rc, __u32 tgid, __u64 sp)
{
	int work = roof_call_work(ctx, ROOF_COOKIE_SIG(rc), ROOF_COOKIE_ELEM(rc), o);

	if (work <= 0) {
		pcpu_inc(&roof_stats, work ? ROOF_STAT_GGML_WORKERS : ROOF_STAT_UNREADABLE);
		return 1;
	}
	o->key.fn = ROOF_COOKIE_FN(rc);
	o->key.pid = tgid;
	o->sp = sp;
	return 0;
}

/*
 * A known call's entry (rc: the roofline cookie, ROOF_COOKIE) on thread task at stack pointer sp,
 * seen by the roofline program: opens the thread's outermost known call in its task storage.  st:
 * the thread's --uprobe slot (NULL: none), where a probed known call may be open, and where the
 * one opened here is announced (ustack.roof_other_sp).  0 when it opened (its return is wanted),
 * 1 when it is nested in an open one, unreadable, or without storage.
 */
/* not inlined: its locals stay off the uprobe entry's own frame, whose call chain through
 * percall_emit the verifier bounds at 512 bytes (arm64's build went over: 576, with --per-call) */
/*
 * Is the frame of a call the roofline program opened at stack pointer sp still on the stack, its
 * return not yet run?  A call entered deeper is nested in it then; else the call was left without
 * returning (a longjmp, an exception) and the new one is not nested.  x86-64: the kernel put its
 * return trampoline (the first slot of the mm's XOL area) where the return address was, at sp,
 * when the return was asked for; a longjmp out of the frame and the deeper calls after it write
 * over it.  arm64 keeps the return address in a register: taken as live (nested), as is anything
 * not readable.  Only met at a call entered below an open one.
 */
static __always_inline bool roof_frame_live(__u64 sp)
{
#if defined(__TARGET_ARCH_x86)
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 ra = 0, tramp = BPF_CORE_READ(t, mm, uprobes_state.xol_area, vaddr);

	if (!tramp || bpf_probe_read_user(&ra, sizeof(ra), (void *)sp))
		return true;
	return ra == tramp;
#else
	return true;
#endif
}

static __noinline int roof_enter(struct pt_regs *ctx, struct task_struct *task, __u64 rc, __u64 sp,
				 struct ustack *st)
{
	__u64 now = bpf_ktime_get_ns();
	struct roof_open *o;
	bool opened;

	pcpu_inc(&roof_stats, ROOF_STAT_CALLS);
	if (st && st->roof.entry_ns && sp < st->roof.sp) {
		pcpu_inc(&roof_stats, ROOF_STAT_NESTED);
		return 1;
	}
	o = bpf_task_storage_get(&roof_open, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!o)
		return 1;
	if (o->entry_ns) {
		if (sp < o->sp && roof_frame_live(o->sp)) {	/* deeper than the open call: nested */
			pcpu_inc(&roof_stats, ROOF_STAT_NESTED);
			return 1;
		}
		pcpu_inc(&roof_stats, ROOF_STAT_ABANDONED);	/* its frame is gone: that one never returned */
		o->entry_ns = 0;
	}
	opened = !roof_open_work(ctx, o, rc, task->tgid, sp);
	if (opened)
		o->entry_ns = now;
	if (st)
		st->roof_other_sp = opened ? sp : 0;
	return !opened;
}

/* The stack pointer of the call the roofline program has open on task (its task storage), 0: none:
 * what a new slot of the thread starts with (ustack.roof_other_sp). */
static __always_inline __u64 roof_storage_sp(struct task_struct *task)
{
	struct roof_open *o = bpf_task_storage_get(&roof_open, task, 0, 0);

	return o && o->entry_ns ? o->sp : 0;
}

/*
 * The same at a --uprobe entry at stack pointer sp, in the thread's slot st (ustack.roof: its
 * return finds the call there, no lookup).  A call open in the slot has its frame below this one,
 * one the roofline program opened is below when its stack pointer is above: this call is nested.
 * 0 when opened; the caller sets the frame and the time.
 */
static __noinline int roof_enter_slot(struct pt_regs *ctx, struct ustack *st, __u64 rc, __u64 sp)
{
	pcpu_inc(&roof_stats, ROOF_STAT_CALLS);
	if (st->roof_other_sp && !(sp < st->roof_other_sp && roof_frame_live(st->roof_other_sp)))
		st->roof_other_sp = 0;	/* the roofline program's call left without returning */
	if (st->roof.entry_ns || st->roof_other_sp) {
		pcpu_inc(&roof_stats, ROOF_STAT_NESTED);
		return 1;
	}
	return roof_open_work(ctx, &st->roof, rc, st->pid, sp);
}

/* add into the sums of key in roof_shapes (this CPU's); calls not summed (the table is full) are
 * counted.  Not inlined: the uprobe return's stack stays as it was. */
static __noinline void roof_shape_add(const struct roof_shape *key, const struct roof_sums *add)
{
	struct roof_sums *s = bpf_map_lookup_elem(&roof_shapes, key);
	__u32 full = ROOF_STAT_SHAPES_FULL;
	__u64 *lost;

	if (!s) {
		if (!bpf_map_update_elem(&roof_shapes, key, add, BPF_NOEXIST))
			return;	/* inserted as add (the other CPUs' values zero) */
		s = bpf_map_lookup_elem(&roof_shapes, key);
	}
	if (s) {
		s->calls += add->calls;
		s->wall_ns += add->wall_ns;
		s->flops += add->flops;
		s->bytes += add->bytes;
		s->weight_bytes += add->weight_bytes;
	} else if ((lost = bpf_map_lookup_elem(&roof_stats, &full))) {
		*lost += add->calls;
	}
}

/* --per-call: the call into its process' work so far (roof_procs). */
static __always_inline void roof_procs_add(const struct roof_open *o, __u64 now)
{
	struct roof_sums zero = {}, *s;

	s = bpf_map_lookup_elem(&roof_procs, &o->key.pid);
	if (!s) {
		bpf_map_update_elem(&roof_procs, &o->key.pid, &zero, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&roof_procs, &o->key.pid);
	}
	if (s) {
		__sync_fetch_and_add(&s->calls, 1);
		__sync_fetch_and_add(&s->wall_ns, now - o->entry_ns);
		__sync_fetch_and_add(&s->flops, o->flops);
		__sync_fetch_and_add(&s->bytes, o->bytes);
	} else {
		pcpu_inc(&roof_stats, ROOF_STAT_PROCS_FULL);
	}
}

/* The roofline program's known call returns: the thread's open call (its task storage) is added
 * to its shape's sums.  st: the thread's --uprobe slot (NULL: none), told it is closed. */
static __always_inline void roof_leave(struct task_struct *task, __u64 now, struct ustack *st)
{
	struct roof_open *o = bpf_task_storage_get(&roof_open, task, 0, 0);
	struct roof_sums one = {};

	if (!o || !o->entry_ns)
		return;
	if (st)
		st->roof_other_sp = 0;
	one.calls = 1;
	one.wall_ns = now - o->entry_ns;
	one.flops = o->flops;
	one.bytes = o->bytes;
	one.weight_bytes = o->weight_bytes;
	roof_shape_add(&o->key, &one);
	if (cfg_roof_windows)
		roof_procs_add(o, now);
	o->entry_ns = 0;
}

static __always_inline bool roof_key_eq(const struct roof_shape *a, const struct roof_shape *b)
{
	return a->fn == b->fn && a->flags == b->flags && a->m == b->m && a->n == b->n && a->k == b->k &&
	       a->pid == b->pid;
}

/* A --uprobe known call (open in the thread's slot st) returns: added to its shape's row among the
 * slot's rows (ROOF_SLOT_ROWS, by the shape's hash); a row another shape holds goes to roof_shapes
 * first. */
static __always_inline void roof_leave_slot(struct ustack *st, __u64 now)
{
	struct roof_open *o = &st->roof;
	__u64 i = (o->key.m * 0x9e3779b1u ^ o->key.n * 0x85ebca6bu ^ o->key.k * 0xc2b2ae35u ^ o->key.fn) &
		  (ROOF_SLOT_ROWS - 1);
	struct roof_row *r;

	asm volatile("%0 &= %1" : "+r"(i) : "i"(ROOF_SLOT_ROWS - 1));	/* a bound the verifier sees */
	r = &st->roof_rows[i];
	if (r->s.calls && !roof_key_eq(&r->key, &o->key)) {
		roof_shape_add(&r->key, &r->s);
		r->s = (struct roof_sums){};
	}
	if (!r->s.calls)
		r->key = o->key;
	r->s.calls++;
	r->s.wall_ns += now - o->entry_ns;
	r->s.flops += o->flops;
	r->s.bytes += o->bytes;
	r->s.weight_bytes += o->weight_bytes;
	if (cfg_roof_windows)
		roof_procs_add(o, now);
	o->entry_ns = 0;
}

/* A thread's slot st is given back (its thread exited): its rows go to roof_shapes, and a call
 * still open there is dropped. */
static __always_inline void roof_slot_flush(struct ustack *st)
{
	for (__u32 i = 0; i < ROOF_SLOT_ROWS; i++) {
		if (!st->roof_rows[i].s.calls)
			continue;
		roof_shape_add(&st->roof_rows[i].key, &st->roof_rows[i].s);
		st->roof_rows[i].s = (struct roof_sums){};
	}
	st->roof.entry_ns = 0;
	st->roof_other_sp = 0;
}

#endif
