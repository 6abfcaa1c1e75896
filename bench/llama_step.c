// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * llama_step - decode N tokens greedily with llama.cpp's C API, from its
 * shared libraries alone (node-llama-cpp's prebuilt ones: no node, no
 * headers), for bench-percall.py on hosts where node cannot be carried.
 * Each token is one llama_decode call, as in tests/workloads/llama_decode.mjs,
 * and the output is the same JSON line: tokens, decode_s, tokens_per_s.
 *
 * The parameter structs and llama_batch are passed by value without their
 * definitions: on x86-64 and arm64 a struct over 16 bytes is returned
 * through a hidden pointer and passed in memory, so a larger opaque buffer
 * holds the library's own defaults unchanged (llama_*_default_params,
 * llama_batch_get_one) and the library reads its own struct from its start.
 * Threads are set with llama_set_n_threads.
 *
 *   llama_step LIBDIR MODEL.gguf N [THREADS]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct { _Alignas(16) unsigned char b[1024]; } opaque;	/* a parameter struct or llama_batch */

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p) {
		fprintf(stderr, "llama_step: %s: %s\n", name, dlerror());
		exit(2);
	}
	return p;
}

static void quiet(int level, const char *text, void *user)
{
	(void)level, (void)text, (void)user;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	char path[4096];
	void *h, *g, *model, *ctx, *vocab;
	int n, threads, tok = 1, count = 0;
	double t0, secs;

	if (argc < 4) {
		fprintf(stderr, "usage: llama_step LIBDIR MODEL.gguf N [THREADS]\n");
		return 2;
	}
	n = atoi(argv[3]);
	threads = argc > 4 ? atoi(argv[4]) : 1;
	snprintf(path, sizeof(path), "%s/libllama.v0.5.0.so", argv[1]);
	if (!(h = dlopen(path, RTLD_NOW | RTLD_GLOBAL))) {
		snprintf(path, sizeof(path), "%s/libllama.so", argv[1]);
		if (!(h = dlopen(path, RTLD_NOW | RTLD_GLOBAL))) {
			fprintf(stderr, "llama_step: %s\n", dlerror());
			return 2;
		}
	}
	g = dlopen(NULL, RTLD_NOW);
	((void (*)(void (*)(int, const char *, void *), void *))sym(h, "llama_log_set"))(quiet, NULL);
	((void (*)(const char *))sym(g, "ggml_backend_load_all_from_path"))(argv[1]);
	((void (*)(void))sym(h, "llama_backend_init"))();
	opaque mp = ((opaque (*)(void))sym(h, "llama_model_default_params"))();
	model = ((void *(*)(const char *, opaque))sym(h, "llama_model_load_from_file"))(argv[2], mp);
	if (!model) {
		fprintf(stderr, "llama_step: cannot load %s\n", argv[2]);
		return 1;
	}
	opaque cp = ((opaque (*)(void))sym(h, "llama_context_default_params"))();
	ctx = ((void *(*)(void *, opaque))sym(h, "llama_init_from_model"))(model, cp);
	if (!ctx) {
		fprintf(stderr, "llama_step: no context\n");
		return 1;
	}
	((void (*)(void *, int, int))sym(h, "llama_set_n_threads"))(ctx, threads, threads);
	vocab = ((void *(*)(void *))sym(h, "llama_model_get_vocab"))(model);
	int nv = ((int (*)(const void *))sym(h, "llama_vocab_n_tokens"))(vocab);
	opaque (*batch_one)(int *, int) = (opaque (*)(int *, int))sym(h, "llama_batch_get_one");
	int (*decode)(void *, opaque) = (int (*)(void *, opaque))sym(h, "llama_decode");
	float *(*logits)(void *, int) = (float *(*)(void *, int))sym(h, "llama_get_logits_ith");

	t0 = now_s();
	for (; count < n; count++) {
		int r = decode(ctx, batch_one(&tok, 1));
		const float *l;

		if (r) {
			fprintf(stderr, "llama_step: llama_decode: %d at token %d\n", r, count);
			return 1;
		}
		l = logits(ctx, -1);
		tok = 0;
		for (int i = 1; i < nv; i++)
			if (l[i] > l[tok])
				tok = i;
	}
	secs = now_s() - t0;
	fprintf(stderr, "llama_step: %d tokens\n", count);
	printf("{\"tokens\": %d, \"decode_s\": %.6f, \"tokens_per_s\": %.4f}\n", count, secs, count / secs);
	((void (*)(void *))sym(h, "llama_free"))(ctx);
	((void (*)(void *))sym(h, "llama_model_free"))(model);
	return 0;
}
