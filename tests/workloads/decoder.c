// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * decoder - a small transformer-decoder inference loop on OpenBLAS, with
 * random weights (no model files). A known number of cblas_sgemm calls
 * makes it a ground truth for profilers that count BLAS calls.
 *
 * Per layer and per forward pass, exactly 6 cblas_sgemm calls: the Q, K, V
 * projections, the attention output projection, FFN up (D->F) and FFN down
 * (F->D). Everything else is plain C or cblas_sgemv: RMSNorm, GELU,
 * causal multi-head attention over the KV cache, and the vocabulary
 * projection (sgemv against the tied embedding) with argmax sampling.
 * One prefill pass over the P prompt tokens, then G decode passes of one
 * token each (M = 1), so cblas_sgemm is called 6 * L * (G + 1) times.
 *
 * Output (stdout), one line:
 *   sgemm_calls=N formula=6*L*(G+1)=N tokens_per_s=X elapsed_s=Y tokens_per_cpu_s=Z
 * or with --json one JSON object with: sgemm_calls, expected_sgemm_calls,
 * layers, dim, heads, ffn, vocab, prompt, gen, seed, tokens_per_s,
 * elapsed_s, prefill_s, decode_s, cpu_s, tokens_per_cpu_s, user_s, sys_s,
 * voluntary_switches, involuntary_switches, checksum.
 *   elapsed_s    wall time of prefill + decode (weight setup excluded)
 *   tokens_per_s generated tokens (G) / elapsed_s
 *   cpu_s        the process's CPU time (CLOCK_PROCESS_CPUTIME_ID) over
 *                prefill + decode; uprobe traps and BPF run in the thread
 *                they interrupt, so they are in it, other load is not
 *   tokens_per_cpu_s  G / cpu_s
 *   user_s, sys_s  cpu_s split by getrusage (in proportion to ticks, so coarse;
 *                  uprobe traps and BPF are in sys_s)
 *   voluntary_switches, involuntary_switches  context switches over the same span
 *   checksum     hash of the generated token ids (same seed, same value)
 * Exit status 1 if the counted calls differ from the formula.
 *
 * Meant to run as OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=Haswell decoder.
 */
#include <cblas.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#define MAX_BYTES (4ULL << 30)

struct config {
	int layers, dim, heads, ffn, prompt, gen, vocab;
	uint64_t seed;
	bool json;
};

struct layer {
	float *wq, *wk, *wv, *wo;  /* D x D */
	float *w1;                 /* D x F */
	float *w2;                 /* F x D */
	float *g_attn, *g_ffn;     /* RMSNorm gains, D */
	float *kcache, *vcache;    /* (P + G) x D */
};

struct model {
	struct config c;
	struct layer *layers;
	float *embed;              /* V x D, tied input/output embedding */
	float *g_final;            /* D */
};

struct acts {
	float *x, *xn, *q, *att;   /* P x D */
	float *h;                  /* P x F */
	float *scores;             /* P + G */
	float *logits;             /* V */
};

static uint64_t g_sgemm_calls;

__attribute__((noreturn, format(printf, 1, 2)))
static void fatal(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "decoder: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* ------------------------------------------------------------------ */
/* random weights                                                      */

static uint64_t xorshift64(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* uniform in [-scale, scale) */
static void fill_uniform(float *p, size_t n, float scale, uint64_t *rng)
{
	for (size_t i = 0; i < n; i++) {
		float u = (float)(xorshift64(rng) >> 40) / (float)(1 << 24);

		p[i] = (2.0f * u - 1.0f) * scale;
	}
}

static void fill_const(float *p, size_t n, float v)
{
	for (size_t i = 0; i < n; i++)
		p[i] = v;
}

static float *alloc_floats(size_t n)
{
	float *p = malloc(n * sizeof(float));

	if (!p)
		fatal("out of memory (%zu floats)", n);
	return p;
}

static float *random_matrix(size_t rows, size_t cols, uint64_t *rng)
{
	float *p = alloc_floats(rows * cols);

	fill_uniform(p, rows * cols, 1.0f / sqrtf((float)rows), rng);
	return p;
}

static void layer_init(struct layer *l, const struct config *c, uint64_t *rng)
{
	size_t d = (size_t)c->dim, f = (size_t)c->ffn;
	size_t ctx = (size_t)c->prompt + (size_t)c->gen;

	l->wq = random_matrix(d, d, rng);
	l->wk = random_matrix(d, d, rng);
	l->wv = random_matrix(d, d, rng);
	l->wo = random_matrix(d, d, rng);
	l->w1 = random_matrix(d, f, rng);
	l->w2 = random_matrix(f, d, rng);
	l->g_attn = alloc_floats(d);
	l->g_ffn = alloc_floats(d);
	fill_const(l->g_attn, d, 1.0f);
	fill_const(l->g_ffn, d, 1.0f);
	l->kcache = alloc_floats(ctx * d);
	l->vcache = alloc_floats(ctx * d);
}

static void model_init(struct model *m, const struct config *c)
{
	uint64_t rng = c->seed * 0x9E3779B97F4A7C15ULL + 1;

	m->c = *c;
	m->layers = calloc((size_t)c->layers, sizeof(*m->layers));
	if (!m->layers)
		fatal("out of memory");
	for (int i = 0; i < c->layers; i++)
		layer_init(&m->layers[i], c, &rng);
	m->embed = alloc_floats((size_t)c->vocab * (size_t)c->dim);
	fill_uniform(m->embed, (size_t)c->vocab * (size_t)c->dim, 1.0f, &rng);
	m->g_final = alloc_floats((size_t)c->dim);
	fill_const(m->g_final, (size_t)c->dim, 1.0f);
}

static void acts_init(struct acts *a, const struct config *c)
{
	size_t p = (size_t)c->prompt, d = (size_t)c->dim;

	a->x = alloc_floats(p * d);
	a->xn = alloc_floats(p * d);
	a->q = alloc_floats(p * d);
	a->att = alloc_floats(p * d);
	a->h = alloc_floats(p * (size_t)c->ffn);
	a->scores = alloc_floats(p + (size_t)c->gen);
	a->logits = alloc_floats((size_t)c->vocab);
}

/* ------------------------------------------------------------------ */
/* kernels                                                             */

/* C[MxN] = A[MxK] * B[KxN] + beta * C, row-major: the only sgemm site */
static void sgemm(int m, int n, int k, const float *a, const float *b,
		  float beta, float *c)
{
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k,
		    1.0f, a, k, b, n, beta, c, n);
	g_sgemm_calls++;
}

static void rmsnorm(float *out, const float *x, const float *gain, int rows,
		    int d)
{
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (size_t)r * d;
		float *o = out + (size_t)r * d;
		float ss = 0.0f;

		for (int i = 0; i < d; i++)
			ss += xr[i] * xr[i];
		ss = 1.0f / sqrtf(ss / (float)d + 1e-5f);
		for (int i = 0; i < d; i++)
			o[i] = xr[i] * ss * gain[i];
	}
}

static void gelu(float *x, size_t n)
{
	const float k = 0.7978845608f; /* sqrt(2/pi) */

	for (size_t i = 0; i < n; i++) {
		float v = x[i];

		x[i] = 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
	}
}

static void softmax(float *x, int n)
{
	float max = x[0], sum = 0.0f;

	for (int i = 1; i < n; i++)
		if (x[i] > max)
			max = x[i];
	for (int i = 0; i < n; i++) {
		x[i] = expf(x[i] - max);
		sum += x[i];
	}
	for (int i = 0; i < n; i++)
		x[i] /= sum;
}

/* one head of one query row against cache rows 0..npos-1 */
static void attend_head(float *out, const float *q, const float *kc,
			const float *vc, int npos, int d, int hd, float *scores)
{
	float scale = 1.0f / sqrtf((float)hd);

	for (int j = 0; j < npos; j++) {
		const float *kj = kc + (size_t)j * d;
		float s = 0.0f;

		for (int i = 0; i < hd; i++)
			s += q[i] * kj[i];
		scores[j] = s * scale;
	}
	softmax(scores, npos);
	memset(out, 0, (size_t)hd * sizeof(float));
	for (int j = 0; j < npos; j++) {
		const float *vj = vc + (size_t)j * d;

		for (int i = 0; i < hd; i++)
			out[i] += scores[j] * vj[i];
	}
}

/* causal attention for rows at positions pos0..pos0+rows-1 */
static void attention(struct acts *a, const struct layer *l,
		      const struct config *c, int rows, int pos0)
{
	int d = c->dim, hd = c->dim / c->heads;

	for (int r = 0; r < rows; r++) {
		int npos = pos0 + r + 1;

		for (int h = 0; h < c->heads; h++) {
			size_t off = (size_t)h * hd;

			attend_head(a->att + (size_t)r * d + off,
				    a->q + (size_t)r * d + off,
				    l->kcache + off, l->vcache + off,
				    npos, d, hd, a->scores);
		}
	}
}

/* 6 sgemm calls; K and V rows go straight into the cache */
static void layer_forward(struct acts *a, const struct layer *l,
			  const struct config *c, int rows, int pos0)
{
	int d = c->dim, f = c->ffn;
	float *kc = l->kcache + (size_t)pos0 * d;
	float *vc = l->vcache + (size_t)pos0 * d;

	rmsnorm(a->xn, a->x, l->g_attn, rows, d);
	sgemm(rows, d, d, a->xn, l->wq, 0.0f, a->q);
	sgemm(rows, d, d, a->xn, l->wk, 0.0f, kc);
	sgemm(rows, d, d, a->xn, l->wv, 0.0f, vc);
	attention(a, l, c, rows, pos0);
	sgemm(rows, d, d, a->att, l->wo, 1.0f, a->x);   /* x += att Wo */

	rmsnorm(a->xn, a->x, l->g_ffn, rows, d);
	sgemm(rows, f, d, a->xn, l->w1, 0.0f, a->h);
	gelu(a->h, (size_t)rows * f);
	sgemm(rows, d, f, a->h, l->w2, 1.0f, a->x);     /* x += h W2 */
}

static int argmax(const float *x, int n)
{
	int best = 0;

	for (int i = 1; i < n; i++)
		if (x[i] > x[best])
			best = i;
	return best;
}

/* run @rows tokens at positions pos0.. and return the next token */
static int forward(const struct model *m, struct acts *a, const int *tokens,
		   int rows, int pos0)
{
	const struct config *c = &m->c;
	int d = c->dim;
	float *last = a->xn + (size_t)(rows - 1) * d;

	for (int r = 0; r < rows; r++)
		memcpy(a->x + (size_t)r * d, m->embed + (size_t)tokens[r] * d,
		       (size_t)d * sizeof(float));
	for (int i = 0; i < c->layers; i++)
		layer_forward(a, &m->layers[i], c, rows, pos0);
	rmsnorm(last, a->x + (size_t)(rows - 1) * d, m->g_final, 1, d);
	cblas_sgemv(CblasRowMajor, CblasNoTrans, c->vocab, d, 1.0f, m->embed,
		    d, last, 1, 0.0f, a->logits, 1);
	return argmax(a->logits, c->vocab);
}

/* ------------------------------------------------------------------ */
/* generation                                                          */

struct result {
	double prefill_s, decode_s;
	double cpu_s;		/* the process's CPU time over prefill + decode */
	double user_s, sys_s;	/* its split (getrusage): uprobe traps and BPF are in sys_s */
	long csw, ics;		/* voluntary and involuntary context switches */
	uint64_t checksum;
};

static void random_prompt(int *tokens, const struct config *c)
{
	uint64_t rng = c->seed ^ 0xD1B54A32D192ED03ULL;

	for (int i = 0; i < c->prompt; i++)
		tokens[i] = (int)(xorshift64(&rng) % (uint64_t)c->vocab);
}

static uint64_t hash_token(uint64_t h, int tok)
{
	return (h ^ (uint64_t)tok) * 0x100000001B3ULL;
}

static double tv_s(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec * 1e-6;
}

static void generate(const struct model *m, struct acts *a, struct result *r)
{
	const struct config *c = &m->c;
	int *prompt = malloc((size_t)c->prompt * sizeof(int));
	uint64_t h = 0xCBF29CE484222325ULL;
	double t0, t1;
	struct rusage ru0, ru1;
	int next;

	if (!prompt)
		fatal("out of memory");
	random_prompt(prompt, c);
	getrusage(RUSAGE_SELF, &ru0);
	double cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);

	t0 = now_s();
	next = forward(m, a, prompt, c->prompt, 0);
	t1 = now_s();
	for (int s = 0; s < c->gen; s++) {
		h = hash_token(h, next);
		next = forward(m, a, &next, 1, c->prompt + s);
	}
	r->prefill_s = t1 - t0;
	r->decode_s = now_s() - t1;
	r->cpu_s = clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
	getrusage(RUSAGE_SELF, &ru1);
	r->user_s = tv_s(&ru1.ru_utime) - tv_s(&ru0.ru_utime);
	r->sys_s = tv_s(&ru1.ru_stime) - tv_s(&ru0.ru_stime);
	r->csw = ru1.ru_nvcsw - ru0.ru_nvcsw;
	r->ics = ru1.ru_nivcsw - ru0.ru_nivcsw;
	r->checksum = hash_token(h, next);
	free(prompt);
}

/* ------------------------------------------------------------------ */
/* command line and output                                             */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: decoder [--layers L] [--dim D] [--heads H] [--ffn F] [--vocab V]\n"
		"               [--prompt P] [--gen G] [--seed S] [--json]\n"
		"Transformer-decoder inference with random weights on OpenBLAS:\n"
		"a prefill over P prompt tokens, then G one-token decode steps;\n"
		"exactly 6*L*(G+1) cblas_sgemm calls.\n"
		"  --layers L   decoder layers (default 4)\n"
		"  --dim D      model width (default 512)\n"
		"  --heads H    attention heads, must divide D (default 8)\n"
		"  --ffn F      FFN hidden width (default 4*D)\n"
		"  --vocab V    vocabulary size (default 8192)\n"
		"  --prompt P   prompt tokens (default 32)\n"
		"  --gen G      generated tokens (default 32)\n"
		"  --seed S     weights / prompt seed (default 1)\n"
		"  --json       print one JSON object instead of the key=value line\n"
		"  -h, --help   this help\n"
		"Run as: OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=Haswell decoder\n");
}

__attribute__((noreturn, format(printf, 1, 2)))
static void bad_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "decoder: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(decoder --help for usage)\n");
	exit(2);
}

static long long parse_int(const char *s, long long min, long long max,
			   const char *what)
{
	long long v;
	char *end;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		bad_usage("%s: '%s' is not an integer in [%lld, %lld]", what, s,
			  min, max);
	return v;
}

static unsigned long long model_bytes(const struct config *c)
{
	unsigned long long d = (unsigned)c->dim, f = (unsigned)c->ffn;
	unsigned long long ctx = (unsigned)c->prompt + (unsigned)c->gen;
	unsigned long long per_layer = 4 * d * d + 2 * d * f + 2 * ctx * d;

	return 4 * ((unsigned)c->layers * per_layer + (unsigned)c->vocab * d +
		    (unsigned)c->prompt * (4 * d + f));
}

static void check_config(const struct config *c)
{
	if (c->dim % c->heads)
		bad_usage("--heads %d does not divide --dim %d", c->heads, c->dim);
	if (model_bytes(c) > MAX_BYTES)
		bad_usage("model needs %llu MiB, more than the %llu MiB limit",
			  model_bytes(c) >> 20, MAX_BYTES >> 20);
}

static void parse_cmdline(int argc, char **argv, struct config *c)
{
	static const struct option longopts[] = {
		{ "layers", required_argument, NULL, 'L' },
		{ "dim", required_argument, NULL, 'D' },
		{ "heads", required_argument, NULL, 'H' },
		{ "ffn", required_argument, NULL, 'F' },
		{ "vocab", required_argument, NULL, 'V' },
		{ "prompt", required_argument, NULL, 'P' },
		{ "gen", required_argument, NULL, 'G' },
		{ "seed", required_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int opt;

	*c = (struct config){ .layers = 4, .dim = 512, .heads = 8, .ffn = 0,
			      .prompt = 32, .gen = 32, .vocab = 8192,
			      .seed = 1 };
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'L': c->layers = (int)parse_int(optarg, 1, 1024, "--layers"); break;
		case 'D': c->dim = (int)parse_int(optarg, 1, 65536, "--dim"); break;
		case 'H': c->heads = (int)parse_int(optarg, 1, 65536, "--heads"); break;
		case 'F': c->ffn = (int)parse_int(optarg, 1, 262144, "--ffn"); break;
		case 'V': c->vocab = (int)parse_int(optarg, 2, 1 << 24, "--vocab"); break;
		case 'P': c->prompt = (int)parse_int(optarg, 1, 65536, "--prompt"); break;
		case 'G': c->gen = (int)parse_int(optarg, 0, 65536, "--gen"); break;
		case 'S': c->seed = (uint64_t)parse_int(optarg, 0, INT64_MAX, "--seed"); break;
		case 'j': c->json = true; break;
		case 'h': usage(stdout); exit(0);
		default: bad_usage("bad option");
		}
	}
	if (optind < argc)
		bad_usage("unexpected argument '%s'", argv[optind]);
	if (c->ffn == 0)
		c->ffn = 4 * c->dim;
	check_config(c);
}

static void print_result(const struct config *c, const struct result *r,
			 uint64_t expected)
{
	double elapsed = r->prefill_s + r->decode_s;
	double tps = elapsed > 0 ? (double)c->gen / elapsed : 0.0;
	double tpcs = r->cpu_s > 0 ? (double)c->gen / r->cpu_s : 0.0;

	if (!c->json) {
		printf("sgemm_calls=%llu formula=6*L*(G+1)=%llu tokens_per_s=%.2f "
		       "elapsed_s=%.6f tokens_per_cpu_s=%.2f\n", (unsigned long long)g_sgemm_calls,
		       (unsigned long long)expected, tps, elapsed, tpcs);
		return;
	}
	printf("{\"sgemm_calls\": %llu, \"expected_sgemm_calls\": %llu, "
	       "\"layers\": %d, \"dim\": %d, \"heads\": %d, \"ffn\": %d, "
	       "\"vocab\": %d, \"prompt\": %d, \"gen\": %d, \"seed\": %llu, "
	       "\"tokens_per_s\": %.3f, \"elapsed_s\": %.6f, "
	       "\"prefill_s\": %.6f, \"decode_s\": %.6f, \"cpu_s\": %.6f, \"tokens_per_cpu_s\": %.3f, "
	       "\"user_s\": %.6f, \"sys_s\": %.6f, \"voluntary_switches\": %ld, \"involuntary_switches\": %ld, "
	       "\"checksum\": %llu}\n",
	       (unsigned long long)g_sgemm_calls, (unsigned long long)expected,
	       c->layers, c->dim, c->heads, c->ffn, c->vocab, c->prompt, c->gen,
	       (unsigned long long)c->seed, tps, elapsed, r->prefill_s,
	       r->decode_s, r->cpu_s, tpcs, r->user_s, r->sys_s, r->csw, r->ics,
	       (unsigned long long)r->checksum);
}

int main(int argc, char **argv)
{
	struct config c;
	struct model m;
	struct acts a;
	struct result r;
	uint64_t expected;

	parse_cmdline(argc, argv, &c);
	model_init(&m, &c);
	acts_init(&a, &c);
	generate(&m, &a, &r);
	expected = 6ULL * (uint64_t)c.layers * ((uint64_t)c.gen + 1);
	print_result(&c, &r, expected);
	if (g_sgemm_calls != expected) {
		fprintf(stderr, "decoder: %llu sgemm calls, expected %llu\n",
			(unsigned long long)g_sgemm_calls,
			(unsigned long long)expected);
		return 1;
	}
	return 0;
}
