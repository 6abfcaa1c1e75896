// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * ggmlnodes: ggml 0.25.1's CPU-backend ABI without ggml, for --roofline's
 * checks where llama.cpp is not installed: its own ggml_version() ("0.25.1") and ggml_compute_forward_mul_mat(params, dst), called on tensors laid
 * out as ggml.h 0.25.1 lays out struct ggml_tensor, with random shapes and
 * weight types, as a threadpool of 2 calls it: each node once with ith 0 and
 * once with ith 1.  Then calls that must be counted unreadable: a zero and a
 * negative dimension, a NULL src[1], a removed type (4), a row length that is
 * not a multiple of the block, an unmapped dst.  Prints, as one JSON line, its
 * own nodes, worker entries, bad calls, FLOPs (2 M N K), compulsory bytes
 * (weight + activations + result, ggml_nbytes of each) and weight bytes per
 * type, from its own table of ggml's block sizes (ggml_blck_size and
 * ggml_type_size of that release).
 *
 *   ggmlnodes [N]   N nodes (default 200), seed 1
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ggml_tensor {			/* ggml.h 0.25.1 */
	int type;
	void *buffer;
	int64_t ne[4];
	size_t nb[4];
	int op;
	int32_t op_params[16];
	int32_t flags;
	struct ggml_tensor *src[10];
	struct ggml_tensor *view_src;
	size_t view_offs;
	void *data;
	char name[64];
	void *extra;
	char padding[8];
};
_Static_assert(offsetof(struct ggml_tensor, ne) == 16 && offsetof(struct ggml_tensor, src) == 152 &&
	       sizeof(struct ggml_tensor) == 336, "ggml 0.25.1's struct ggml_tensor");

struct ggml_compute_params {		/* ggml-cpu-impl.h 0.25.1 */
	int ith, nth;
	size_t wsize;
	void *wdata;
	void *threadpool;
	_Bool use_ref;
};

__attribute__((noinline, used)) const char *ggml_version(void)
{
	return "0.25.1";
}

/* the same ABI as ggml's; nothing computed */
__attribute__((noinline, used)) void ggml_compute_forward_mul_mat(const struct ggml_compute_params *params,
								  struct ggml_tensor *dst)
{
	__asm__ volatile("" : : "r"(params), "r"(dst) : "memory");
}

static const struct { int type; const char *name; int64_t blck, size; } types[] = {
	{ 0, "f32", 1, 4 }, { 1, "f16", 1, 2 }, { 2, "q4_0", 32, 18 }, { 8, "q8_0", 32, 34 },
	{ 12, "q4_K", 256, 144 }, { 14, "q6_K", 256, 210 }, { 30, "bf16", 1, 2 },
};
#define NTYPES (sizeof(types) / sizeof(types[0]))

static int64_t nbytes(const struct ggml_tensor *t, int64_t blck, int64_t size)
{
	return t->ne[0] / blck * size * t->ne[1] * t->ne[2] * t->ne[3];
}

static void set(struct ggml_tensor *t, int type, int64_t n0, int64_t n1, int64_t n2, int64_t n3)
{
	memset(t, 0, sizeof(*t));
	t->type = type;
	t->ne[0] = n0, t->ne[1] = n1, t->ne[2] = n2, t->ne[3] = n3;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200, workers = 0, bad = 0;
	unsigned long long flops = 0, bytes = 0, wbytes[NTYPES] = { 0 };
	struct ggml_tensor w, a, d;
	struct ggml_compute_params p0 = { 0, 2, 0, NULL, NULL, 0 }, p1 = { 1, 2, 0, NULL, NULL, 0 };

	srand(1);
	for (int i = 0; i < n; i++) {
		unsigned int t = (unsigned int)rand() % NTYPES;
		int64_t k = types[t].blck * (1 + rand() % 8) * (types[t].blck == 1 ? 32 : 1), m = 1 + rand() % 300;
		int64_t cols = 1 + rand() % 4, heads = 1 + rand() % 3;

		set(&w, types[t].type, k, m, heads, 1);
		set(&a, 0, k, cols, heads, 1);
		set(&d, 0, m, cols, heads, 1);
		d.src[0] = &w;
		d.src[1] = &a;
		ggml_compute_forward_mul_mat(&p0, &d);
		ggml_compute_forward_mul_mat(&p1, &d);
		workers++;
		flops += 2ULL * (unsigned long long)(m * cols * heads * k);
		wbytes[t] += (unsigned long long)nbytes(&w, types[t].blck, types[t].size);
		bytes += (unsigned long long)(nbytes(&w, types[t].blck, types[t].size) + nbytes(&a, 1, 4) + nbytes(&d, 1, 4));
	}
	/* unreadable: each counted once, by the first thread */
	set(&w, 8, 64, 0, 1, 1);		/* zero rows */
	set(&a, 0, 64, 1, 1, 1);
	set(&d, 0, 0, 1, 1, 1);
	d.src[0] = &w, d.src[1] = &a;
	ggml_compute_forward_mul_mat(&p0, &d), bad++;
	w.ne[1] = -5, d.ne[0] = -5;		/* negative */
	ggml_compute_forward_mul_mat(&p0, &d), bad++;
	w.ne[1] = 4, d.ne[0] = 4, d.src[1] = NULL;	/* no activations */
	ggml_compute_forward_mul_mat(&p0, &d), bad++;
	d.src[1] = &a, w.type = 4;		/* a removed type: no blocks */
	ggml_compute_forward_mul_mat(&p0, &d), bad++;
	w.type = 2, w.ne[0] = a.ne[0] = 48;	/* 48 is not a multiple of Q4_0's 32 */
	ggml_compute_forward_mul_mat(&p0, &d), bad++;
	ggml_compute_forward_mul_mat(&p0, (struct ggml_tensor *)16), bad++;	/* unmapped */
	printf("{\"nodes\": %d, \"workers\": %d, \"bad\": %d, \"flops\": %llu, \"bytes\": %llu, \"weight_bytes\": {", n,
	       workers, bad, flops, bytes);
	for (unsigned int t = 0, first = 1; t < NTYPES; t++)
		if (wbytes[t]) {
			printf("%s\"%s\": %llu", first ? "" : ", ", types[t].name, wbytes[t]);
			first = 0;
		}
	printf("}}\n");
	return 0;
}
