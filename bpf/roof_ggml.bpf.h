/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The work of one ggml matrix-multiply node on the CPU backend, from the
 * tensor structs, for bpf/roof_work.bpf.h: ggml_compute_forward_mul_mat(params,
 * dst) and the repacked weights' tensor_traits<...>::forward_mul_mat(this,
 * params, dst).  dst->src[0] is the weight (M rows of K elements, any type of
 * bpf/roof_ggml_types.h), dst->src[1] the activations (N columns, every batch
 * dimension), dst the M x N result.  Every thread of the threadpool enters the
 * same node: only the first (params->ith == 0) counts it, once per node, and
 * times it; the others are counted apart (ROOF_STAT_GGML_WORKERS).
 *
 * The offsets are ggml 0.25.1's (roof_ggml_types.h says how they were
 * verified); user space probes no other version.
 */
#ifndef TMABPF_ROOF_GGML_BPF_H
#define TMABPF_ROOF_GGML_BPF_H
#include "roof_ggml_types.h"
#include "roof_shapes.h"

#define ROOF_GGML_PARAMS_ITH 0		/* struct ggml_compute_params: int ith */
#define ROOF_GGML_TENSOR_SRC 152	/* struct ggml_tensor: struct ggml_tensor *src[GGML_MAX_SRC] */

/* struct ggml_tensor's first 48 bytes: type at 0, ne[4] at 16 */
struct roof_ggml_tensor {
	__s32 type;
	__u32 pad;
	__u64 buffer;
	__s64 ne[4];
};

#define ROOF_GGML_BLCK(id, name, blck, size) [id] = blck,
#define ROOF_GGML_SIZE(id, name, blck, size) [id] = size,
static const __u16 roof_ggml_blck[ROOF_GGML_NTYPES] = { ROOF_GGML_TYPE_LIST(ROOF_GGML_BLCK) };
static const __u16 roof_ggml_size[ROOF_GGML_NTYPES] = { ROOF_GGML_TYPE_LIST(ROOF_GGML_SIZE) };

/* The tensor at p into t, and its bytes: ggml_nbytes of it contiguous, rows of ne[0] / block
 * elements blocks.  false when unreadable, of a type without blocks, or of absurd dimensions. */
static __always_inline bool roof_ggml_tensor(__u64 p, struct roof_ggml_tensor *t, __u64 *bytes)
{
	__u64 blck, size;
	__u32 ty;

	if (!p || bpf_probe_read_user(t, sizeof(*t), (void *)p))
		return false;
	ty = (__u32)t->type;
	if (ty >= ROOF_GGML_NTYPES)
		return false;
	blck = roof_ggml_blck[ty];
	size = roof_ggml_size[ty];
	if (!blck || !roof_dim_ok(t->ne[0]) || !roof_dim_ok(t->ne[1]) || !roof_dim_ok(t->ne[2]) ||
	    !roof_dim_ok(t->ne[3]) || t->ne[2] * t->ne[3] > ROOF_MAX_DIM || (__u64)t->ne[0] % blck)
		return false;
	*bytes = (__u64)t->ne[0] / blck * size * (__u64)t->ne[1] * (__u64)(t->ne[2] * t->ne[3]);
	return true;
}

/* A mul_mat node's shape (M rows of the weight, N columns of the activations, K), its weight type,
 * FLOPs (2 M N K) and compulsory bytes (weight, activations and result, each once) into o: 1; 0
 * when unreadable; -1 on a thread other than the node's first.  The tensors are read into scratch,
 * the caller's argument array (8 u64 at least), whose arguments are read by then: no stack of its
 * own, where arm64's verifier bounds the uprobe entry's call chain at 512 bytes. */
static __always_inline int roof_ggml_work(__u64 params, __u64 dst, struct roof_open *o, __u64 *scratch)
{
	struct roof_ggml_tensor *t = (struct roof_ggml_tensor *)scratch;	/* scratch[0..5] */
	__u64 *src = &scratch[6], wbytes, abytes, dbytes, m, n, k;		/* dst->src[0], src[1] */
	__s32 ith;
	__u32 wtype;

	if (bpf_probe_read_user(&ith, sizeof(ith), (void *)(params + ROOF_GGML_PARAMS_ITH)))
		return 0;
	if (ith != 0)
		return -1;
	if (bpf_probe_read_user(src, 2 * sizeof(*src), (void *)(dst + ROOF_GGML_TENSOR_SRC)) ||
	    !roof_ggml_tensor(dst, t, &dbytes) || !roof_ggml_tensor(src[1], t, &abytes))
		return 0;
	n = (__u64)t->ne[1] * (__u64)(t->ne[2] * t->ne[3]);
	if (!roof_ggml_tensor(src[0], t, &wbytes) || n > ROOF_MAX_DIM)
		return 0;
	m = (__u64)t->ne[1];
	k = (__u64)t->ne[0];
	wtype = (__u32)t->type;
	o->key.flags = ROOF_GGML | (wtype << ROOF_GGML_TYPE_SHIFT);
	o->key.m = (__u32)m;
	o->key.n = (__u32)n;
	o->key.k = (__u32)k;
	if (wbytes + abytes < wbytes || wbytes + abytes + dbytes < dbytes)
		return 0;	/* absurd: the sum would wrap (each alone is below 2^64) */
	o->flops = 2 * m * n * k;
	o->bytes = wbytes + abytes + dbytes;
	o->weight_bytes = wbytes;
	return 1;
}

#endif
