// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * gemmwork: known GEMM/GEMV work through BLAS, for --roofline's checks.  It
 * calls cblas_sgemm, cblas_dgemm, cblas_sgemv, sgemm_ and sgemv_ and prints,
 * as one JSON line, its own count per function of calls, FLOPs (2MNK, 2MN)
 * and compulsory bytes (each operand once, the output written, and read too
 * when beta != 0 - for the Fortran routines only: CBLAS passes beta in a
 * floating-point register that a uprobe cannot read, so tmabpf counts C once),
 * then, in mixed mode, the calls per shape ("FUNC MxNxK TATB", GEMV "FUNC MxN T").
 *
 *   gemmwork mixed [N]     N calls (default 400) of random shapes, transposes, strides, beta (seed 1)
 *   gemmwork gemv-big [N]  N sgemv of a 8192 x 8192 matrix (256 MiB: past any L3)
 *   gemmwork gemm [N]      N sgemm of 1024 x 1024 x 1024
 *   gemmwork tiny [N]      N sgemm of 8 x 8 x 8 (default 200000)
 *   gemmwork bad           calls with zero and negative dimensions (BLAS returns at once)
 *   gemmwork batch [N]     N calls of MKL's cblas_sgemm_batch (1-3 groups of 1-4 GEMMs, random
 *                          shapes, transposes, beta) and cblas_sgemm_batch_strided (1-4 GEMMs)
 *                          in turn, each batch's work summed and keyed by its first group's shape;
 *                          exit 3 when the BLAS has none (OpenBLAS)
 *   gemmwork windows K HOW   K children (forked, OPENBLAS_NUM_THREADS=1) each call one 8 x 8 x 8
 *                          sgemm, then 5 windows (--per-call gemmwork_window) of 3 sgemm of 32 x
 *                          32 x 32 each; HOW: exited (each 64 children reaped before the next), alive
 *                          (the children wait until the windows are over), idle (windows 1 and 3
 *                          call none); the counts are the parent's
 *   gemmwork illegal       8 calls BLAS rejects (xerbla: a layout or transpose out of range;
 *                          "illegal" in the JSON) and 4 legal ones at the
 *                          edge of those ranges (row-major, lower-case Fortran transposes,
 *                          a negative increment), counted
 */
#include <dlfcn.h>
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void sgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k, const float *alpha,
	    const float *a, const int *lda, const float *b, const int *ldb, const float *beta, float *c,
	    const int *ldc);
void sgemv_(const char *t, const int *m, const int *n, const float *alpha, const float *a, const int *lda,
	    const float *x, const int *incx, const float *beta, float *y, const int *incy);

enum { F_CSGEMM, F_CDGEMM, F_CSGEMV, F_SGEMM, F_SGEMV, F_BATCH, F_STRIDED, NF };
static const char *const names[NF] = { "cblas_sgemm", "cblas_dgemm", "cblas_sgemv", "sgemm_", "sgemv_",
				       "cblas_sgemm_batch", "cblas_sgemm_batch_strided" };
static unsigned long long calls[NF], flops[NF], bytes[NF];
static unsigned long long rng = 1;
#define MAX_SHAPES 1024
static struct shape {
	char key[64];
	unsigned long long calls;
} shapes[MAX_SHAPES];
static int nshapes;

static void shape_count(int f, int m, int n, int k, int ta, int tb)
{
	char key[64];
	int i;

	if (k)
		snprintf(key, sizeof(key), "%s %dx%dx%d %c%c", names[f], m, n, k, ta ? 'T' : 'N', tb ? 'T' : 'N');
	else
		snprintf(key, sizeof(key), "%s %dx%d %c", names[f], m, n, ta ? 'T' : 'N');
	for (i = 0; i < nshapes && strcmp(shapes[i].key, key); i++)
		;
	if (i == nshapes && nshapes < MAX_SHAPES)
		snprintf(shapes[nshapes++].key, sizeof(key), "%s", key);
	if (i < nshapes)
		shapes[i].calls++;
}

static unsigned int rnd(unsigned int n)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned int)(rng >> 33) % n;
}

static void *buf(size_t bytes)
{
	void *p = calloc(1, bytes);

	if (!p) {
		perror("calloc");
		exit(1);
	}
	return p;
}

static void count(int f, unsigned long long fl, unsigned long long by)
{
	calls[f]++;
	flops[f] += fl;
	bytes[f] += by;
}

/* One GEMM of M x N x K through function f, lda/ldb/ldc padded by pad; beta for the Fortran one. */
static void gemm(int f, int m, int n, int k, int ta, int tb, int pad, float beta)
{
	size_t es = f == F_CDGEMM ? 8 : 4;
	int arows = ta ? k : m, acols = ta ? m : k, brows = tb ? n : k, bcols = tb ? k : n;
	int lda = arows + pad, ldb = brows + pad, ldc = m + pad;	/* column-major */
	void *a = buf(es * (size_t)lda * (size_t)acols), *b = buf(es * (size_t)ldb * (size_t)bcols);
	void *c = buf(es * (size_t)ldc * (size_t)n);
	unsigned long long fl = 2ULL * m * n * k, by = es * ((unsigned long long)m * k + (unsigned long long)k * n +
							     (unsigned long long)m * n);

	if (f == F_CSGEMM)
		cblas_sgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0f,
			    a, lda, b, ldb, beta, c, ldc);
	else if (f == F_CDGEMM)
		cblas_dgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0,
			    a, lda, b, ldb, beta, c, ldc);
	else {
		float alpha = 1.0f;
		char cta = ta ? 'T' : 'N', ctb = tb ? 'T' : 'N';

		sgemm_(&cta, &ctb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
		if (beta != 0)
			by += es * (unsigned long long)m * n;
	}
	count(f, fl, by);
	shape_count(f, m, n, k, ta, tb);
	free(a);
	free(b);
	free(c);
}

static void gemv(int f, int m, int n, int t, float beta, const float *a, int lda)
{
	int xlen = t ? m : n, ylen = t ? n : m;
	float *x = buf(4 * (size_t)xlen), *y = buf(4 * (size_t)ylen);
	unsigned long long by = 4ULL * ((unsigned long long)m * n + xlen + ylen);

	if (f == F_CSGEMV)
		cblas_sgemv(CblasColMajor, t ? CblasTrans : CblasNoTrans, m, n, 1.0f, a, lda, x, 1, beta, y, 1);
	else {
		float alpha = 1.0f;
		int one = 1;
		char ct = t ? 'T' : 'N';

		sgemv_(&ct, &m, &n, &alpha, a, &lda, x, &one, &beta, y, &one);
		if (beta != 0)
			by += 4ULL * ylen;
	}
	count(f, 2ULL * m * n, by);
	shape_count(f, m, n, 0, t, 0);
	free(x);
	free(y);
}

static void mixed(int n)
{
	for (int i = 0; i < n; i++) {
		int f = (int)rnd(F_BATCH), m = 1 + (int)rnd(96), nn = 1 + (int)rnd(96), k = 1 + (int)rnd(96);
		int pad = (int)rnd(3), ta = (int)rnd(2), tb = (int)rnd(2);
		float beta = rnd(2) ? 0.0f : 0.5f;

		if (f == F_CSGEMV || f == F_SGEMV) {
			int lda = m + pad;
			float *a = buf(4 * (size_t)lda * (size_t)nn);

			gemv(f, m, nn, ta, beta, a, lda);
			free(a);
		} else {
			gemm(f, m, nn, k, ta, tb, pad, beta);
		}
	}
}

/* MKL's batch interfaces, found at run time (OpenBLAS has none) */
typedef void batch_fn(int layout, const int *ta, const int *tb, const int *m, const int *n, const int *k,
		      const float *alpha, const float **a, const int *lda, const float **b, const int *ldb,
		      const float *beta, float **c, const int *ldc, int groups, const int *sizes);
typedef void strided_fn(int layout, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
			int stridea, const float *b, int ldb, int strideb, float beta, float *c, int ldc, int stridec,
			int batch);

static void batches(int calls)
{
	batch_fn *bf = (batch_fn *)dlsym(RTLD_DEFAULT, "cblas_sgemm_batch");
	strided_fn *sf = (strided_fn *)dlsym(RTLD_DEFAULT, "cblas_sgemm_batch_strided");

	if (!bf || !sf) {
		fprintf(stderr, "gemmwork: no cblas_sgemm_batch or cblas_sgemm_batch_strided here (MKL has them)\n");
		exit(3);
	}
	for (int i = 0; i < calls; i++) {
		int g = 1 + (int)rnd(3), ta[3], tb[3], m[3], n[3], k[3], ld[3], sizes[3], total = 0;
		float alpha[3] = { 1, 1, 1 }, beta[3];
		const float *ap[12], *bp[12];
		float *cp[12];
		unsigned long long fl = 0, by = 0;
		int j = 0;

		for (int x = 0; x < g; x++) {
			m[x] = 1 + (int)rnd(48), n[x] = 1 + (int)rnd(48), k[x] = 1 + (int)rnd(48);
			ta[x] = rnd(2) ? CblasTrans : CblasNoTrans, tb[x] = rnd(2) ? CblasTrans : CblasNoTrans;
			ld[x] = 48, sizes[x] = 1 + (int)rnd(4), beta[x] = rnd(2) ? 0.0f : 0.5f;
			for (int y = 0; y < sizes[x]; y++, j++) {
				ap[j] = buf(4 * 48 * 48), bp[j] = buf(4 * 48 * 48), cp[j] = buf(4 * 48 * 48);
			}
			total += sizes[x];
			fl += 2ULL * m[x] * n[x] * k[x] * sizes[x];
			by += 4ULL * sizes[x] * ((unsigned long long)m[x] * k[x] + (unsigned long long)k[x] * n[x] +
						 (unsigned long long)m[x] * n[x] * (beta[x] != 0 ? 2 : 1));
		}
		bf(CblasColMajor, ta, tb, m, n, k, alpha, ap, ld, bp, ld, beta, cp, ld, g, sizes);
		count(F_BATCH, fl, by);
		shape_count(F_BATCH, m[0], n[0], k[0], ta[0] == CblasTrans, tb[0] == CblasTrans);
		for (j = 0; j < total; j++) {
			free((void *)ap[j]);
			free((void *)bp[j]);
			free(cp[j]);
		}
		{
			int sm = 1 + (int)rnd(48), sn = 1 + (int)rnd(48), sk = 1 + (int)rnd(48), st = 48 * 48;
			int sta = (int)rnd(2), stb = (int)rnd(2), nb = 1 + (int)rnd(4);
			float *a = buf(4 * (size_t)st * nb), *b = buf(4 * (size_t)st * nb), *c = buf(4 * (size_t)st * nb);

			sf(CblasColMajor, sta ? CblasTrans : CblasNoTrans, stb ? CblasTrans : CblasNoTrans, sm, sn, sk, 1.0f, a,
			   48, st, b, 48, st, rnd(2) ? 0.0f : 0.5f, c, 48, st, nb);
			/* beta travels in a vector register: C counted once */
			count(F_STRIDED, 2ULL * sm * sn * sk * nb,
			      4ULL * nb * ((unsigned long long)sm * sk + (unsigned long long)sk * sn + (unsigned long long)sm * sn));
			shape_count(F_STRIDED, sm, sn, sk, sta, stb);
			free(a);
			free(b);
			free(c);
		}
	}
}

/* a --per-call window: 3 sgemm of 32^3, or none when idle */
__attribute__((noinline)) void gemmwork_window(int idle)
{
	static float a[32 * 32], b[32 * 32], c[32 * 32];

	for (int j = 0; j < 3 && !idle; j++) {
		cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 32, 32, 32, 1.0f, a, 32, b, 32, 0.0f, c, 32);
		count(F_CSGEMM, 2ULL * 32 * 32 * 32, 4ULL * 3 * 32 * 32);
	}
	__asm__ volatile("" : : "r"(idle) : "memory");
}

static void windows(int kids, const char *how)
{
	int alive = !strcmp(how, "alive"), gate[2], ready[2];
	float a[64] = { 0 }, b[64] = { 0 }, c[64];
	char x;

	if (pipe(gate) || pipe(ready))
		exit(1);
	for (int i = 0; i < kids; i++) {
		pid_t p = fork();

		if (p < 0)
			exit(1);
		if (p == 0) {
			close(gate[1]);
			cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 8, 8, 8, 1.0f, a, 8, b, 8, 0.0f, c, 8);
			if (alive && (write(ready[1], "", 1) != 1 || read(gate[0], &x, 1) < 0))	/* EOF: the windows are over */
				_exit(1);
			_exit(0);
		}
		if (!alive && i % 64 == 63)
			while (waitpid(-1, NULL, 0) > 0)
				;
	}
	for (int i = 0; alive && i < kids; i++)
		if (read(ready[0], &x, 1) != 1)
			exit(1);
	if (!alive)
		while (waitpid(-1, NULL, 0) > 0)
			;
	for (int i = 0; i < 5; i++)
		gemmwork_window(!strcmp(how, "idle") && i % 2);
	close(gate[1]);
	while (waitpid(-1, NULL, 0) > 0)
		;
}

/* 8 calls BLAS rejects, 4 legal ones at the edges (16 x 8 x 4, and a 16 x 8 GEMV) */
static int illegal(void)
{
	static float a[256], b[256], c[256], x[16], y[16];
	int m = 16, n = 8, k = 4, one = 1, sixteen = 16, four = 4;
	float alpha = 1, beta = 0;
	unsigned long long fl = 2ULL * 16 * 8 * 4, by = 4ULL * (16 * 4 + 4 * 8 + 16 * 8);

	/* only what the registers (and Fortran's pointers already read) hold is checked: the leading
	 * dimensions and increments are on the stack, not read (docs/roofline.md) */
	cblas_sgemm(CblasColMajor, CblasNoTrans, 110, m, n, k, 1, a, m, b, k, 0, c, m);		/* transpose B */
	cblas_sgemm(100, CblasNoTrans, CblasNoTrans, m, n, k, 1, a, m, b, k, 0, c, m);		/* layout */
	cblas_sgemm(CblasColMajor, 115, CblasNoTrans, m, n, k, 1, a, m, b, k, 0, c, m);		/* transpose */
	cblas_sgemv(CblasColMajor, 110, m, n, 1, a, m, x, 1, 0, y, 1);				/* transpose */
	sgemm_("X", "N", &m, &n, &k, &alpha, a, &m, b, &k, &beta, c, &m);			/* transpose */
	sgemm_("N", "Z", &m, &n, &k, &alpha, a, &m, b, &k, &beta, c, &m);			/* transpose B */
	cblas_sgemv(CblasRowMajor, 116, m, n, 1, a, n, x, 1, 0, y, 1);				/* transpose */
	sgemv_("Y", &m, &n, &alpha, a, &m, x, &one, &beta, y, &one);				/* transpose */
	/* legal: row-major at its smallest leading dimensions, both transposed; Fortran 't' and 'c' */
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1, a, k, b, n, 0, c, n);
	count(F_CSGEMM, fl, by);
	shape_count(F_CSGEMM, m, n, k, 0, 0);
	cblas_sgemm(CblasRowMajor, CblasTrans, CblasTrans, m, n, k, 1, a, m, b, k, 0, c, n);
	count(F_CSGEMM, fl, by);
	shape_count(F_CSGEMM, m, n, k, 1, 1);
	sgemm_("t", "c", &m, &n, &k, &alpha, a, &four, b, &n, &beta, c, &sixteen);
	count(F_SGEMM, fl, by);
	shape_count(F_SGEMM, m, n, k, 1, 1);
	cblas_sgemv(CblasRowMajor, CblasTrans, m, n, 1, a, n, x, -1, 0, y, 1);
	count(F_CSGEMV, 2ULL * 16 * 8, 4ULL * (16 * 8 + 16 + 8));
	shape_count(F_CSGEMV, m, n, 0, 1, 0);
	return 8;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "mixed";
	int n = argc > 2 ? atoi(argv[2]) : 0, nillegal = 0;

	if (!strcmp(mode, "mixed")) {
		mixed(n ? n : 400);
	} else if (!strcmp(mode, "gemv-big")) {
		int dim = 8192;
		float *a = buf(4 * (size_t)dim * dim);

		for (size_t i = 0; i < (size_t)dim * dim; i++)	/* touch every page before the calls */
			a[i] = 1.0f;
		for (int i = 0; i < (n ? n : 20); i++)
			gemv(F_CSGEMV, dim, dim, 0, 0.0f, a, dim);
		free(a);
	} else if (!strcmp(mode, "gemm")) {
		int d = 1024;
		float *a = buf(4 * (size_t)d * d), *b = buf(4 * (size_t)d * d), *c = buf(4 * (size_t)d * d);

		for (size_t i = 0; i < (size_t)d * d; i++)	/* every page touched before the calls */
			a[i] = b[i] = c[i] = 1.0f;
		for (int i = 0; i < (n ? n : 5); i++) {
			cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, d, d, d, 1.0f, a, d, b, d, 0.0f, c, d);
			count(F_CSGEMM, 2ULL * d * d * d, 4ULL * 3 * d * d);
		}
		free(a);
		free(b);
		free(c);
	} else if (!strcmp(mode, "tiny")) {
		float a[64] = { 0 }, b[64] = { 0 }, c[64];

		for (int i = 0; i < (n ? n : 200000); i++) {
			cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 8, 8, 8, 1.0f, a, 8, b, 8, 0.0f, c, 8);
			count(F_CSGEMM, 1024, 4 * 3 * 64);
		}
	} else if (!strcmp(mode, "batch")) {
		batches(n ? n : 100);
	} else if (!strcmp(mode, "windows") && argc > 3) {
		windows(n, argv[3]);
	} else if (!strcmp(mode, "illegal")) {
		nillegal = illegal();
	} else if (!strcmp(mode, "bad")) {
		float a[4] = { 0 }, c[4];
		int zero = 0, neg = -3, one = 1;
		float alpha = 1, beta = 0;

		cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 0, 1, 1, 1.0f, a, 1, a, 1, 0.0f, c, 1);
		sgemm_("N", "N", &neg, &one, &one, &alpha, a, &one, a, &one, &beta, c, &one);
		sgemv_("N", &zero, &one, &alpha, a, &one, a, &one, &beta, c, &one);
	} else {
		fprintf(stderr, "usage: gemmwork mixed|gemv-big|gemm|tiny|bad|illegal|batch [N] | windows K exited|alive|idle\n");
		return 2;
	}
	printf("{");
	for (int f = 0; f < NF; f++)
		printf("%s\"%s\": {\"calls\": %llu, \"flops\": %llu, \"bytes\": %llu}", f ? ", " : "", names[f], calls[f],
		       flops[f], bytes[f]);
	printf(", \"shapes\": {");
	for (int i = 0; i < nshapes; i++)
		printf("%s\"%s\": %llu", i ? ", " : "", shapes[i].key, shapes[i].calls);
	printf("}, \"illegal\": %d}\n", nillegal);
	return 0;
}
