// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * mklgemm: N calls of cblas_sgemm through Intel MKL's single dynamic library
 * (libmkl_rt.so, opened with dlopen so that this builds without MKL), for the
 * real-stack tests.  MKL picks its kernels' library (libmkl_def, _avx2,
 * _avx512, ...) by CPU at the first call and runs them on its OpenMP threads.
 *
 * usage: mklgemm CALLS [M N K]   (default 64 x 4096 x 4096: decode-shaped, weights transposed)
 * Prints "mklgemm: CALLS calls" to stderr; exit 1 when MKL cannot be loaded.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };
typedef void (*sgemm_fn)(int layout, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
			 const float *b, int ldb, float beta, float *c, int ldc);

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 100;
	int m = argc > 2 ? atoi(argv[2]) : 2, n = argc > 3 ? atoi(argv[3]) : 4096, k = argc > 4 ? atoi(argv[4]) : 4096;
	void *h = dlopen("libmkl_rt.so", RTLD_NOW | RTLD_GLOBAL);
	sgemm_fn sgemm = h ? (sgemm_fn)dlsym(h, "cblas_sgemm") : NULL;
	float *a, *b, *c;

	if (!sgemm) {
		fprintf(stderr, "mklgemm: cannot load MKL: %s\n", dlerror());
		return 1;
	}
	a = malloc(sizeof(float) * m * k);
	b = malloc(sizeof(float) * n * k);
	c = calloc((size_t)m * n, sizeof(float));
	if (!a || !b || !c)
		return 1;
	for (long i = 0; i < (long)m * k; i++)
		a[i] = (float)(i % 7) * 0.25f;
	for (long i = 0; i < (long)n * k; i++)
		b[i] = (float)(i % 5) * 0.125f;
	/* C[m x n] = A[m x k] * B^T, B stored n x k: a decode step against transposed weights */
	for (long i = 0; i < calls; i++)
		sgemm(ROW_MAJOR, NO_TRANS, TRANS, m, n, k, 1.0f, a, k, b, k, 0.0f, c, n);
	fprintf(stderr, "mklgemm: %ld calls (c[0] %g)\n", calls, c[0]);
	return 0;
}
