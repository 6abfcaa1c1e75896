/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* --roofline: the work of every known GEMM/GEMV call from its arguments, summed per
 * (function, shape) by bpf/roofline.bpf.c and read by user space (collect/roofline_loader.c). */
#ifndef TMABPF_BPF_ROOF_SHAPES_H
#define TMABPF_BPF_ROOF_SHAPES_H
#include "tmabpf.h"

/* The known signatures (the attach cookie's low 8 bits; the function's index is above them).  The
 * --uprobe entry path (bpf/uprobes.bpf.c) gets this cookie in the upper 32 bits of its own. */
enum roof_sig {
	SIG_CBLAS_GEMM = 1,	/* cblas_?gemm(layout, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc) */
	SIG_CBLAS_GEMV,		/* cblas_?gemv(layout, trans, M, N, alpha, A, lda, X, incX, beta, Y, incY) */
	SIG_F77_GEMM,		/* ?gemm_(ta*, tb*, m*, n*, k*, alpha*, a, lda*, b, ldb*, beta*, c, ldc*) */
	SIG_F77_GEMV,		/* ?gemv_(trans*, m*, n*, alpha*, a, lda*, x, incx*, beta*, y, incy*) */
	SIG_DNNL_GEMM,		/* dnnl_sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc): row-major */
	/* MKL's cblas_?gemm_batch(layout, ta[], tb[], M[], N[], K[], alpha[], A[], lda[], B[], ldb[], beta[], C[],
	 * ldc[], group_count, group_size[]): group_count groups of group_size[g] GEMMs */
	SIG_CBLAS_GEMM_BATCH,
	/* MKL's cblas_?gemm_batch_strided(layout, ta, tb, M, N, K, alpha, A, lda, stridea, B, ldb, strideb,
	 * beta, C, ldc, stridec, batch_size) */
	SIG_CBLAS_GEMM_STRIDED,
	SIG_GGML_MUL_MAT,	/* ggml_compute_forward_mul_mat(params, dst): bpf/roof_ggml.bpf.h */
	SIG_GGML_REPACK_MUL_MAT,	/* ggml::cpu::repack::tensor_traits<...>::forward_mul_mat(this, params, dst) */
};

#define ROOF_COOKIE(fn, sig, elem) (((__u64)(fn) << 16) | ((__u64)(elem) << 8) | (__u64)(sig))
#define ROOF_COOKIE_SIG(c) ((__u32)((c) & 0xff))
#define ROOF_COOKIE_ELEM(c) ((__u32)(((c) >> 8) & 0xff))
#define ROOF_COOKIE_FN(c) ((__u32)((c) >> 16))

#define ROOF_MAX_DIM (1u << 20)	/* a dimension above this is absurd: the call is counted unreadable */
#define ROOF_MAX_SHAPES 4096
#define ROOF_MAX_PROCS 1024	/* --per-call: processes with totals at once (roof_procs; an exited one's go) */
#define ROOF_MAX_GROUPS 16	/* a batch of more groups is counted unreadable (its groups are read one by one) */

/* roof_shape.flags */
#define ROOF_TRANS_A 1u		/* op(A) = A^T (GEMV: the matrix is transposed) */
#define ROOF_TRANS_B 2u
#define ROOF_BETA_KNOWN 4u	/* beta was read (behind a pointer): C or y counted as read when non-zero */
#define ROOF_BETA_NONZERO 8u
#define ROOF_ROW_MAJOR 16u
#define ROOF_BATCH 32u		/* a batch call: the shape is its (first group's) GEMMs', the work the batch's */
#define ROOF_GGML 64u		/* a ggml mul_mat node: M x N x K, the weight's ggml type in ROOF_GGML_TYPE */
#define ROOF_GGML_TYPE_SHIFT 8
#define ROOF_GGML_TYPE(flags) (((flags) >> ROOF_GGML_TYPE_SHIFT) & 0xffu)

struct roof_shape {
	__u32 fn;		/* index of the function in the loader's table */
	__u32 flags;
	__u32 m, n, k;		/* GEMV: k = 0 */
	__u32 pid;
};

struct roof_sums {
	__u64 calls;
	__u64 wall_ns;		/* the outermost known call's entry to its return */
	__u64 flops;		/* 2 M N K, 2 M N */
	__u64 bytes;		/* compulsory: each operand once, C/y written (and read when beta != 0) */
	__u64 weight_bytes;	/* ggml: the weight's (src0's) bytes; 0 for BLAS */
};

/* A thread's outermost known call in progress, its work read at entry: in the thread's --uprobe slot
 * (uprobes.h) when a --uprobe entry opened it, else in its task storage (bpf/roof_work.bpf.h);
 * entry_ns 0: none. */
struct roof_open {
	struct roof_shape key;
	__u32 frame;		/* in a slot: the index of the call's frame (its return closes it) */
	__u64 entry_ns;
	__u64 sp;
	__u64 flops, bytes, weight_bytes;
};

/* A shape's sums in a thread's slot (uprobes.h), moved to the roof_shapes hash when another shape
 * takes the row or the thread exits; user space adds those still there. */
#define ROOF_SLOT_ROWS 4	/* power of 2 */
struct roof_row {
	struct roof_shape key;
	struct roof_sums s;	/* s.calls 0: free */
};

/* roof_stats slots */
enum {
	ROOF_STAT_CALLS,	/* known calls seen (targets only) */
	ROOF_STAT_UNREADABLE,	/* arguments unreadable, or dimensions <= 0 or absurd */
	ROOF_STAT_NESTED,	/* known calls inside another known call of the thread: not counted again */
	ROOF_STAT_SHAPES_FULL,	/* calls not summed: the shape table was full */
	ROOF_STAT_ABANDONED,	/* an outermost call whose return never came (longjmp, exception) */
	ROOF_STAT_GGML_WORKERS,	/* a ggml node entered by a thread other than its first: counted once, there */
	ROOF_STAT_PROCS_FULL,	/* --per-call: calls not added to their process' totals (roof_procs full) */
	ROOF_STAT_INVALID,	/* of the unreadable: arguments BLAS rejects (xerbla), so it computes nothing */
	ROOF_STAT_MAX,
};

#endif
