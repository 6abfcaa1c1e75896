// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The --per-call report sections from iterations built here: each
 * iteration's TMA is the tree of the process' counter deltas over its window,
 * not the calling thread's (the skylakex recipe on a known memory-bound
 * profile, as in test_view.c: this host has no PMU, so no live run shows
 * TMA), in JSON and as the slowest tokens' bottleneck path; no TMA plan gives an empty object;
 * the windows' top functions (--sample) are written as given, null without
 * --sample, and added up over the windows in the text.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "section_render.h"
#include "output/report_sections.h"
#include "output/tma_output.h"
#include "tma/tma.h"
#include "skx_profile.h"
#include "pmu/key_encode.h"

static struct tma_plan plan;
static struct event_list evs;
static struct host_info host = { .cpu = "Test CPU", .ncpus = 2, .ncpus_online = 2, .pmu = true };
static struct report rep;
static struct uprobe_set uset;

static double value_of(int e)
{
	char a[TMA_KEY_LEN], b[TMA_KEY_LEN];

	tma_event_key(evs.ev[e].name, b, sizeof(b));
	for (size_t k = 0; skx_llm_decode[k].k; k++) {
		tma_event_key(skx_llm_decode[k].k, a, sizeof(a));
		if (!strcmp(a, b))
			return skx_llm_decode[k].v;
	}
	return -1;
}

static bool setup(void)
{
	const struct tma_cpu *cpu = tma_cpu_by_name("skylakex");
	struct tma_env env = { 0 };
	char err[256];

	if (!cpu || tma_plan(&plan, cpu, 3, TMABPF_MAX_EVENTS, &env, tma_encode_key, err, sizeof(err)) ||
	    tma_plan_append(&plan, &evs, err, sizeof(err))) {
		printf("not ok - planning skylakex --tma=3: %s\n", err);
		return false;
	}
	for (int e = 0; e < evs.n; e++)
		if (value_of(e) < 0) {
			printf("not ok - no profile value for planned event %s\n", evs.ev[e].name);
			return false;
		}
	uset.nr_libs = 1;
	uset.libs[0].module = "/usr/lib/libtest.so";
	uset.nr_funcs = 1;
	uset.funcs = calloc(1, sizeof(*uset.funcs));
	uset.funcs[0].symbol = "decode_step";
	return true;
}

/* Two iterations: the first with the profile's counts over its window, its top functions sampled;
 * the second (slower) with half of them. */
static void fill(struct iterations *s, bool sampled)
{
	static struct iter_thread th[2][1];
	static struct iter_fn fn[2][1];

	memset(s, 0, sizeof(*s));
	s->v = calloc(2, sizeof(*s->v));
	s->n = s->cap = 2;
	for (int k = 0; k < 2; k++) {
		struct iteration *it = &s->v[k];

		*it = (struct iteration){ .pid = 100, .tid = 100, .start_ns = 1000000 + k * 50000000ULL,
					  .wall_ns = (k + 1) * 10000000ULL, .nthreads = 1, .th = th[k], .nfns = 1,
					  .fns = fn[k] };
		th[k][0] = (struct iter_thread){ .tid = 100, .t = { .compute_ns = it->wall_ns } };
		it->sum = th[k][0].t;
		fn[k][0] = (struct iter_fn){ .fn = 0, .calls = 1, .wall_ns = it->wall_ns, .oncpu_ns = it->wall_ns };
		for (int e = 0; e < evs.n; e++) {
			/* the calling thread did a tenth of it: the TMA is the process' */
			it->pc[e] = (struct counter_val){ .value = (unsigned long long)(value_of(e) / (k + 1)),
							  .enabled = 1000, .running = 1000 };
			it->c[e] = (struct counter_val){ .value = it->pc[e].value / 10 + (e == 0 ? 12345 : 0),
							 .enabled = 1000, .running = 1000 };
		}
		if (sampled) {
			it->sampled = true;
			it->samples = 10 * (k + 1);
			it->ntop = 2;
			it->top[0] = (struct iter_top){ .module = "libtest.so", .symbol = k ? "gemv_slow" : "gemv",
							.samples = 8 * (k + 1) };
			it->top[1] = (struct iter_top){ .module = "[kernel.kallsyms]", .symbol = "clear_page",
							.samples = 2 * (k + 1) };
		}
	}
}

/* iterations_free, the arrays fill() gave being static */
static void drop(struct iterations *s)
{
	for (size_t k = 0; k < s->n; k++)
		s->v[k].th = NULL, s->v[k].fns = NULL;
	iterations_free(s);
}

static char *render(bool json)
{
	return section_render(&rep, json ? report_iterations_json : NULL, report_iterations_text, 1000);
}

static void test_tma_per_iteration(void)
{
	struct iterations s;
	struct tma_result want;
	struct thread_stats sums = {};
	char *out, path[256];
	const char *it0, *it1;

	fill(&s, true);
	rep = (struct report){ .host = &host, .recipe = "skylakex", .evs = &evs, .tma_plan = &plan, .tma_level = 3,
			       .uset = &uset, .iters = &s, .per_call = "libtest.so:decode_step" };
	memcpy(sums.c, s.v[0].pc, sizeof(sums.c));
	{
		int r = report_tma(&rep, &sums, &want);

		check(r == 0 && want.n > 0, "the profile's TMA computes (%d nodes)", r ? -1 : want.n);
	}
	out = render(true);
	it0 = strstr(out, "\"index\":0");
	it1 = strstr(out, "\"index\":1");
	check(it0 && it1, "two iterations in the JSON");
	for (int i = 0; i < want.n && it0; i++) {
		const char *tma = strstr(it0, "\"tma\":{");
		double got = num_after(tma, want.node[i].name);

		if (isnan(want.node[i].value))
			continue;
		if (fabs(got - want.node[i].value) > 1e-6 * (1 + fabs(want.node[i].value))) {
			check(0, "iteration 0 %s: %g, the tree of its counters says %g", want.node[i].name, got,
			      want.node[i].value);
			break;
		}
		if (i == want.n - 1)
			check(1, "iteration 0: every TMA node equals the tree of its counters (%d nodes)", want.n);
	}
	check(num_after(strstr(out, "\"index\":0"), "samples") == 10 && strstr(out, "\"function\":\"gemv\"") &&
	      strstr(out, "\"function\":\"gemv_slow\"") && strstr(out, "\"module\":\"[kernel.kallsyms]\""),
	      "top functions and samples written per iteration");
	free(out);

	out = render(false);
	check(tma_bottleneck_path(&want, path, sizeof(path)) > 0 && strstr(out, "TMA ") != NULL,
	      "the slowest tokens carry their bottleneck path");
	/* the slowest is iteration 1: half the counts, the same ratios: the same path */
	check(strstr(out, path) != NULL, "slowest token's path is its counters' (%s)", path);
	check(strstr(out, "top: gemv_slow 80%") != NULL, "slowest token's top function and share");
	check(strstr(out, "top functions in them (30 samples): gemv_slow 53.3%, gemv 26.7%, clear_page 20.0%") != NULL,
	      "top functions over the windows:\n%s", out);
	free(out);

	rep.tma_plan = NULL;	/* no PMU: TMA not shown */
	out = render(true);
	check(strstr(out, "\"tma\":{}") != NULL, "no TMA: an empty object");
	free(out);
	out = render(false);
	check(strstr(out, "TMA ") == NULL, "no TMA: no path in the text");
	free(out);
	drop(&s);

	fill(&s, false);
	out = render(true);
	check(strstr(out, "\"samples\":null") && strstr(out, "\"top_functions\":null"), "no --sample: null top functions");
	free(out);
	out = render(false);
	check(strstr(out, "top functions") == NULL && strstr(out, "top:") == NULL, "no --sample: no top in the text");
	free(out);
	drop(&s);
}

/* bpftrace's hist() buckets and labels: 0, 1, [2^(k-1), 2^k); K, M, G are powers of 1024 */
static void test_log2_hist(void)
{
	static const unsigned long long walls[] = { 0, 1, 2, 3, 4, 1048575, 1048576, 2097151, 2097152 };
	struct iteration v[sizeof(walls) / sizeof(walls[0])] = {};
	struct iterations s = { .v = v, .n = sizeof(walls) / sizeof(walls[0]) };
	struct log2_hist h;
	unsigned long long lo, hi;
	char label[40], *out;
	size_t len;
	FILE *f;
	int first, last;

	for (size_t i = 0; i < s.n; i++)
		v[i].wall_ns = walls[i];
	iterations_hist(&s, &h);
	check(h.count[0] == 1 && h.count[1] == 1 && h.count[2] == 2 && h.count[3] == 1 && h.count[20] == 1 &&
	      h.count[21] == 2 && h.count[22] == 1, "each wall in its bucket");
	check(log2_hist_span(&h, &first, &last) && first == 0 && last == 22, "span: first and last non-empty");
	log2_hist_range(21, &lo, &hi);
	check(lo == 1048576 && hi == 2097151, "bucket 21 is [1M, 2M)");
	log2_hist_range(64, &lo, &hi);
	check(lo == 1ULL << 63 && hi == ~0ULL && log2_hist_bucket(~0ULL) == 64, "the last bucket ends at 2^64 - 1");
	log2_hist_label(21, label, sizeof(label));
	check(!strcmp(label, "[1M, 2M)"), "label %s", label);
	log2_hist_label(10, label, sizeof(label));
	check(!strcmp(label, "[512, 1K)"), "label %s", label);
	log2_hist_label(1, label, sizeof(label));
	check(!strcmp(label, "[1]"), "label %s", label);
	f = open_memstream(&out, &len);
	log2_hist_print(&h, "  ", f);
	fclose(f);
	check(strstr(out, "  [2, 4)                  2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n") &&
	      strstr(out, "  [4K, 8K)                0 |                                        |\n") &&
	      strstr(out, "  [1]                     1 |@@@@@@@@@@@@@@@@@@@@                    |\n"), "rows: empty buckets between, bars scaled:\n%s", out);
	free(out);
}

int main(void)
{
	if (!setup())
		return 1;
	test_tma_per_iteration();
	test_log2_hist();
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
