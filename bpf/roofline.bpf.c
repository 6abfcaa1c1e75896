// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * --roofline: the work of every known GEMM/GEMV call, from its arguments.
 *
 * One uprobe session program on the known entries (cblas_?gemm, cblas_?gemv,
 * ?gemm_, ?gemv_, dnnl_sgemm); the attach cookie says which signature, the
 * element size and the function (bpf/roof_shapes.h).  At entry the integer
 * arguments are read from the registers and the stack (floating-point ones,
 * CBLAS's alpha and beta, travel in vector registers a uprobe cannot read),
 * the Fortran ones through their pointers; the call's FLOPs (2MNK, 2MN) and
 * compulsory bytes (every operand once, the output written, and read too when
 * a readable beta is non-zero) are added to its (function, shape, process)
 * sums.  Only a thread's outermost known call is counted and timed: a CBLAS
 * wrapper calling the Fortran routine is one call, and its nested entries
 * return 1 so that their returns do not even trap.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "maps.bpf.h"
#include "roof_shapes.h"
#include "target_filter.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

extern bool bpf_session_is_return(void) __weak __ksym;

/* the target filter: the spine's pids map, reused by fd, and its rule */
TARGET_FILTER_SHARED()

/* per CPU: plain adds, no atomics (user space sums the CPUs) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, ROOF_MAX_SHAPES);
	__type(key, struct roof_shape);
	__type(value, struct roof_sums);
} roof_shapes SEC(".maps");

/* a thread's outermost known call in progress, in the thread's own storage (no hash update or
 * delete per call); entry_ns 0: none */
struct roof_open {
	struct roof_shape key;
	__u64 entry_ns;
	__u64 sp;
	__u64 flops, bytes;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct roof_open);
} roof_open SEC(".maps");

STAT_MAP(roof_stats, ROOF_STAT_MAX);

#if defined(__TARGET_ARCH_x86)
#define ARG_REGS 6
#define STACK_ARGS_AT 8		/* above the return address */
#elif defined(__TARGET_ARCH_arm64)
#define ARG_REGS 8
#define STACK_ARGS_AT 0
#else
#error "roofline.bpf.c: the argument registers of this architecture"
#endif
#define ARGS_MAX (ARG_REGS + 8)

/* The integer (and pointer) arguments in order: registers, then stack slots of 8 bytes. */
static __always_inline int args_read(struct pt_regs *ctx, __u64 *a)
{
	__u64 sp = PT_REGS_SP(ctx);

	a[0] = PT_REGS_PARM1(ctx);
	a[1] = PT_REGS_PARM2(ctx);
	a[2] = PT_REGS_PARM3(ctx);
	a[3] = PT_REGS_PARM4(ctx);
	a[4] = PT_REGS_PARM5(ctx);
#if ARG_REGS > 5
	a[5] = PT_REGS_PARM6(ctx);
#endif
#if ARG_REGS > 6
	a[6] = PT_REGS_PARM7(ctx);
	a[7] = PT_REGS_PARM8(ctx);
#endif
	return bpf_probe_read_user(&a[ARG_REGS], 8 * sizeof(__u64), (void *)(sp + STACK_ARGS_AT));
}

/* *p as a 32-bit Fortran INTEGER (LP64); false when unreadable. */
static __always_inline bool f77_int(__u64 p, __s64 *v)
{
	__s32 x;

	if (bpf_probe_read_user(&x, sizeof(x), (void *)p))
		return false;
	*v = x;
	return true;
}

static __always_inline bool f77_char_trans(__u64 p, __u32 bit, __u32 *flags)
{
	char c;

	if (bpf_probe_read_user(&c, sizeof(c), (void *)p))
		return false;
	if (c != 'N' && c != 'n')
		*flags |= bit;
	return true;
}

/* Is the Fortran beta (a float or a double behind p) non-zero?  false when unreadable. */
static __always_inline bool f77_beta(__u64 p, __u32 elem, __u32 *flags)
{
	__u64 bits = 0;

	if (bpf_probe_read_user(&bits, elem == 8 ? 8 : 4, (void *)p))
		return false;
	bits &= elem == 8 ? 0x7fffffffffffffffULL : 0x7fffffffULL;	/* -0.0 is zero */
	*flags |= ROOF_BETA_KNOWN | (bits ? ROOF_BETA_NONZERO : 0);
	return true;
}

static __always_inline bool dim_ok(__s64 d)
{
	return d > 0 && d <= ROOF_MAX_DIM;
}

/* The call's shape, FLOPs and compulsory bytes from its arguments; false when unreadable. */
static __always_inline bool call_work(struct pt_regs *ctx, __u32 sig, __u32 elem, struct roof_open *o)
{
	__u64 a[ARGS_MAX] = {};
	__s64 m = 0, n = 0, k = 0;
	__u32 fl = 0;
	__u64 out;

	if (args_read(ctx, a))
		return false;
	switch (sig) {
	case SIG_CBLAS_GEMM:	/* 101 RowMajor, 111 NoTrans */
		fl |= ((__u32)a[0] == 101 ? ROOF_ROW_MAJOR : 0) | ((__u32)a[1] != 111 ? ROOF_TRANS_A : 0) |
		      ((__u32)a[2] != 111 ? ROOF_TRANS_B : 0);
		m = (__s32)a[3], n = (__s32)a[4], k = (__s32)a[5];
		break;
	case SIG_DNNL_GEMM:
		fl |= ROOF_ROW_MAJOR | ((char)a[0] != 'N' && (char)a[0] != 'n' ? ROOF_TRANS_A : 0) |
		      ((char)a[1] != 'N' && (char)a[1] != 'n' ? ROOF_TRANS_B : 0);
		m = (__s64)a[2], n = (__s64)a[3], k = (__s64)a[4];
		break;
	case SIG_F77_GEMM:
		if (!f77_char_trans(a[0], ROOF_TRANS_A, &fl) || !f77_char_trans(a[1], ROOF_TRANS_B, &fl) ||
		    !f77_int(a[2], &m) || !f77_int(a[3], &n) || !f77_int(a[4], &k) || !f77_beta(a[10], elem, &fl))
			return false;
		break;
	case SIG_CBLAS_GEMV:
		fl |= ((__u32)a[0] == 101 ? ROOF_ROW_MAJOR : 0) | ((__u32)a[1] != 111 ? ROOF_TRANS_A : 0);
		m = (__s32)a[2], n = (__s32)a[3], k = 1;
		break;
	case SIG_F77_GEMV:
		if (!f77_char_trans(a[0], ROOF_TRANS_A, &fl) || !f77_int(a[1], &m) || !f77_int(a[2], &n) ||
		    !f77_beta(a[8], elem, &fl))
			return false;
		k = 1;
		break;
	default:
		return false;
	}
	if (!dim_ok(m) || !dim_ok(n) || !dim_ok(k))
		return false;
	o->key.flags = fl;
	o->key.m = (__u32)m;
	o->key.n = (__u32)n;
	if (sig == SIG_CBLAS_GEMV || sig == SIG_F77_GEMV) {
		/* y = op(A) x: A is M x N; x has N elements (M transposed), y the other */
		__u64 xlen = fl & ROOF_TRANS_A ? (__u64)m : (__u64)n, ylen = fl & ROOF_TRANS_A ? (__u64)n : (__u64)m;

		o->key.k = 0;
		o->flops = 2 * (__u64)m * (__u64)n;
		out = ylen;
		o->bytes = elem * ((__u64)m * (__u64)n + xlen + ylen);
	} else {
		o->key.k = (__u32)k;
		o->flops = 2 * (__u64)m * (__u64)n * (__u64)k;
		out = (__u64)m * (__u64)n;
		o->bytes = elem * ((__u64)m * (__u64)k + (__u64)k * (__u64)n + out);
	}
	if (fl & ROOF_BETA_NONZERO)
		o->bytes += elem * out;
	return true;
}

static __always_inline int on_entry(struct pt_regs *ctx, __u64 cookie)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, tgid = id >> 32;
	__u64 sp = PT_REGS_SP(ctx);
	struct roof_open *o;

	if (!shared_tracked(tgid, tid))
		return 1;
	pcpu_inc(&roof_stats, ROOF_STAT_CALLS);
	o = bpf_task_storage_get(&roof_open, bpf_get_current_task_btf(), 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!o)
		return 1;
	if (o->entry_ns) {
		if (sp < o->sp) {	/* deeper than the open call: nested, its return is not needed */
			pcpu_inc(&roof_stats, ROOF_STAT_NESTED);
			return 1;
		}
		pcpu_inc(&roof_stats, ROOF_STAT_ABANDONED);	/* at or above it: that one never returned */
		o->entry_ns = 0;
	}
	if (!call_work(ctx, ROOF_COOKIE_SIG(cookie), ROOF_COOKIE_ELEM(cookie), o)) {
		pcpu_inc(&roof_stats, ROOF_STAT_UNREADABLE);
		return 1;
	}
	o->key.fn = ROOF_COOKIE_FN(cookie);
	o->key.pid = tgid;
	o->sp = sp;
	o->entry_ns = bpf_ktime_get_ns();
	return 0;
}

static __always_inline void on_return(void)
{
	struct roof_open *o = bpf_task_storage_get(&roof_open, bpf_get_current_task_btf(), 0, 0);
	struct roof_sums zero = {}, *s;
	__u64 now = bpf_ktime_get_ns();

	if (!o || !o->entry_ns)
		return;
	s = bpf_map_lookup_elem(&roof_shapes, &o->key);
	if (!s) {
		bpf_map_update_elem(&roof_shapes, &o->key, &zero, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&roof_shapes, &o->key);
	}
	if (s) {
		s->calls++;
		s->wall_ns += now - o->entry_ns;
		s->flops += o->flops;
		s->bytes += o->bytes;
	} else {
		pcpu_inc(&roof_stats, ROOF_STAT_SHAPES_FULL);
	}
	o->entry_ns = 0;
}

SEC("uprobe.multi")
int tmabpf_roofline(struct pt_regs *ctx)
{
	if (bpf_session_is_return()) {
		on_return();
		return 0;
	}
	return on_entry(ctx, bpf_get_attach_cookie(ctx));
}
