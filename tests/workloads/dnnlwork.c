// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * dnnlwork: oneDNN (Debian's libdnnl) primitives executed a known number of times, for --itt
 * (tests/test_itt.py): CONV convolutions (N=1, C=K=32, 56x56, 3x3), MM matmuls (512x512x512)
 * and REORDERS reorders (nchw -> nhwc of the convolution's source), one after another.
 *
 *   dnnlwork CONV MM REORDERS [SIZE [STEPS]]   (SIZE: the convolution's height and width, default 56)
 *
 * STEPS (default 1) calls dnnlwork_step() that many times, a --per-call marker: step i prints
 * "dnnlwork: step i" on stdout, then runs the convolutions, MM + i % 2 matmuls and the reorders
 * (DNNL_VERBOSE's lines after it are the step's executions: the per-token truth).
 *
 * DNNL_VERBOSE=1 prints one "exec" line per execution with its time: the peer of --itt's spans.
 */
#include <dnnl.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x)                                                                       \
	do {                                                                           \
		dnnl_status_t s_ = (x);                                                \
		if (s_ != dnnl_success) {                                              \
			fprintf(stderr, "dnnlwork: %s: status %d\n", #x, (int)s_);     \
			exit(1);                                                       \
		}                                                                      \
	} while (0)

static dnnl_engine_t eng;
static dnnl_stream_t strm;

static dnnl_memory_t mem(const dnnl_memory_desc_t *md)
{
	dnnl_memory_t m;
	size_t n = dnnl_memory_desc_get_size(md);
	float *p;

	CHECK(dnnl_memory_create(&m, md, eng, DNNL_MEMORY_ALLOCATE));
	CHECK(dnnl_memory_get_data_handle(m, (void **)&p));
	for (size_t i = 0; i < n / sizeof(float); i++)
		p[i] = (float)(i % 7) * 0.25f;
	return m;
}

static void run(dnnl_primitive_t p, int n, int nargs, const dnnl_exec_arg_t *args)
{
	for (int i = 0; i < n; i++) {
		CHECK(dnnl_primitive_execute(p, strm, nargs, args));
		CHECK(dnnl_stream_wait(strm));
	}
}

struct step_args {
	dnnl_primitive_t conv, mm, reorder;
	const dnnl_exec_arg_t *conv_args, *mm_args, *re_args;
	int nconv, nmm, nreorder;
};

/* One step (token) of the work: the --per-call marker. */
__attribute__((noinline)) void dnnlwork_step(const struct step_args *s, int i)
{
	printf("dnnlwork: step %d\n", i);
	run(s->conv, s->nconv, 3, s->conv_args);
	run(s->mm, s->nmm + i % 2, 3, s->mm_args);
	run(s->reorder, s->nreorder, 2, s->re_args);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int nconv, nmm, nreorder, hw = argc > 4 ? atoi(argv[4]) : 56, steps = argc > 5 ? atoi(argv[5]) : 0;
	dnnl_memory_desc_t src_md, w_md, dst_md, nhwc_md, a_md, b_md, c_md;
	dnnl_primitive_desc_t pd;
	dnnl_primitive_t conv, mm, reorder;
	dnnl_memory_t src, w, dst, nhwc, a, b, c;

	if (argc < 4 || hw < 8 || steps < 0) {
		fprintf(stderr, "usage: dnnlwork CONV MM REORDERS [SIZE>=8 [STEPS]]\n");
		return 2;
	}
	nconv = atoi(argv[1]);
	nmm = atoi(argv[2]);
	nreorder = atoi(argv[3]);
	CHECK(dnnl_engine_create(&eng, dnnl_cpu, 0));
	CHECK(dnnl_stream_create(&strm, eng, dnnl_stream_default_flags));

	/* convolution: 1x32xHWxHW (nchw) * 32x32x3x3 (oihw), padding 1 */
	{
		dnnl_dims_t sd = { 1, 32, hw, hw }, wd = { 32, 32, 3, 3 }, dd = { 1, 32, hw, hw };
		dnnl_dims_t strides = { 1, 1 }, pad = { 1, 1 };
		dnnl_convolution_desc_t cd;

		CHECK(dnnl_memory_desc_init_by_tag(&src_md, 4, sd, dnnl_f32, dnnl_nchw));
		CHECK(dnnl_memory_desc_init_by_tag(&w_md, 4, wd, dnnl_f32, dnnl_oihw));
		CHECK(dnnl_memory_desc_init_by_tag(&dst_md, 4, dd, dnnl_f32, dnnl_nchw));
		CHECK(dnnl_memory_desc_init_by_tag(&nhwc_md, 4, sd, dnnl_f32, dnnl_nhwc));
		CHECK(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &src_md,
							 &w_md, NULL, &dst_md, strides, pad, pad));
		CHECK(dnnl_primitive_desc_create(&pd, &cd, NULL, eng, NULL));
		CHECK(dnnl_primitive_create(&conv, pd));
		CHECK(dnnl_primitive_desc_destroy(pd));
		CHECK(dnnl_reorder_primitive_desc_create(&pd, &src_md, eng, &nhwc_md, eng, NULL));
		CHECK(dnnl_primitive_create(&reorder, pd));
		CHECK(dnnl_primitive_desc_destroy(pd));
	}
	/* matmul 256x256 * 256x256 */
	{
		dnnl_dims_t d = { 512, 512 };
		dnnl_matmul_desc_t md;

		CHECK(dnnl_memory_desc_init_by_tag(&a_md, 2, d, dnnl_f32, dnnl_ab));
		CHECK(dnnl_memory_desc_init_by_tag(&b_md, 2, d, dnnl_f32, dnnl_ab));
		CHECK(dnnl_memory_desc_init_by_tag(&c_md, 2, d, dnnl_f32, dnnl_ab));
		CHECK(dnnl_matmul_desc_init(&md, &a_md, &b_md, NULL, &c_md));
		CHECK(dnnl_primitive_desc_create(&pd, &md, NULL, eng, NULL));
		CHECK(dnnl_primitive_create(&mm, pd));
		CHECK(dnnl_primitive_desc_destroy(pd));
	}
	src = mem(&src_md);
	w = mem(&w_md);
	dst = mem(&dst_md);
	nhwc = mem(&nhwc_md);
	a = mem(&a_md);
	b = mem(&b_md);
	c = mem(&c_md);
	{
		dnnl_exec_arg_t conv_args[] = { { DNNL_ARG_SRC, src }, { DNNL_ARG_WEIGHTS, w }, { DNNL_ARG_DST, dst } };
		dnnl_exec_arg_t mm_args[] = { { DNNL_ARG_SRC, a }, { DNNL_ARG_WEIGHTS, b }, { DNNL_ARG_DST, c } };
		dnnl_exec_arg_t re_args[] = { { DNNL_ARG_FROM, src }, { DNNL_ARG_TO, nhwc } };

		struct step_args sa = { conv, mm, reorder, conv_args, mm_args, re_args, nconv, nmm, nreorder };

		if (!steps) {
			run(conv, nconv, 3, conv_args);
			run(mm, nmm, 3, mm_args);
			run(reorder, nreorder, 2, re_args);
		}
		for (int i = 0; i < steps; i++)
			dnnlwork_step(&sa, i);
	}
	dnnl_primitive_destroy(conv);
	dnnl_primitive_destroy(mm);
	dnnl_primitive_destroy(reorder);
	dnnl_memory_destroy(src);
	dnnl_memory_destroy(w);
	dnnl_memory_destroy(dst);
	dnnl_memory_destroy(nhwc);
	dnnl_memory_destroy(a);
	dnnl_memory_destroy(b);
	dnnl_memory_destroy(c);
	dnnl_stream_destroy(strm);
	dnnl_engine_destroy(eng);
	return 0;
}
