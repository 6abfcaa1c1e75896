// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * TMA engine tests:
 *  1. perf expression semantics (expr.y): precedence, if/else, d_ratio, min/max
 *     with NaN, division by zero aborting, escapes, literals;
 *  2. every metric of every recipe evaluated against the reference JSON's own
 *     MetricExpr (../shared/pmu-reference, TMABPF_PMU_REF overrides) on many
 *     counter vectors and perf literals (#SMT_on, #core_wide, #has_pmem), and
 *     zero counters;
 *  3. profiles with hand-computed expected values: memory-bound LLM decode,
 *     compute-bound GEMM, frontend-bound, mispredict-heavy, zero cycles,
 *     slightly negative nodes, SMT on; bottleneck paths; JSON null for x/0.
 */
#include <math.h>
#include <stdint.h>
#include <strings.h>
#include "test_tma_refjson.h"
#include "tma.h"
#include "tma_expr.h"
#include "tma_recipes.h"
#include "skx_profile.h"

/* ---------- 1. expression semantics ---------- */
struct simple { struct tma_expr_ctx x; };
static int simple_resolve(struct tma_expr_ctx *x, enum tma_expr_kind k, const char *id, struct tma_expr_val *out)
{
	out->cnst = false;
	out->ids = 0;
	if (k == TMA_EXPR_LITERAL) {
		out->cnst = true;
		if (!strcasecmp(id, "SMT_on")) { out->v = 1; return 0; }
		return -1;
	}
	if (!strcmp(id, "A")) out->v = 10;
	else if (!strcmp(id, "B")) out->v = 4;
	else if (!strcmp(id, "Z")) out->v = 0;
	else if (!strcmp(id, "cpu/EV.X,cmask=1,edge/")) out->v = 7;
	else if (!strcmp(id, "topdown-be-bound")) out->v = 3;
	else if (!strcmp(id, "EXE_ACTIVITY.1_PORTS_UTIL")) out->v = 5;
	else return -1;
	return 0;
}

static double ev(const char *s, int *rc)
{
	struct simple c;
	struct tma_expr_val v;
	char err[200];
	memset(&c, 0, sizeof(c));
	c.x.resolve = simple_resolve;
	*rc = tma_expr_eval(&c.x, s, &v, err, sizeof(err));
	return v.v;
}

static void test_expr(void)
{
	int rc;
	CHECK(ev("A + B * 2", &rc) == 18 && rc == 0, "precedence * over +");
	CHECK(ev("A - B - 2", &rc) == 4, "left associative -");
	CHECK(ev("-A * 2", &rc) == -20, "unary minus");
	CHECK(ev("A / B", &rc) == 2.5, "division");
	CHECK(isnan(ev("A / Z", &rc)) && rc == 1, "division by zero aborts the expression (perf prints nothing)");
	CHECK(isnan(ev("max(A / Z, 0)", &rc)) && rc == 1, "abort is not rescued by max()");
	CHECK(ev("d_ratio(A, Z)", &rc) == 0 && rc == 0, "d_ratio(x, 0) = 0");
	CHECK(ev("d_ratio(A, B)", &rc) == 2.5, "d_ratio");
	CHECK(ev("A if Z else B", &rc) == 4, "if: zero condition takes else");
	CHECK(ev("A if B > 3 else B", &rc) == 10, "if with comparison");
	CHECK(ev("1 if #SMT_on else 2", &rc) == 1, "#SMT_on literal");
	CHECK(ev("A if Z else B if 1 else 3", &rc) == 4, "nested else-if");
	CHECK(ev("min(A, B)", &rc) == 4 && ev("max(A, B)", &rc) == 10, "min/max");
	CHECK(ev("min(NOPE, B)", &rc) == 4, "min(NaN, b) = b as in expr.y (a < b ? a : b)");
	CHECK(isnan(ev("min(B, NOPE)", &rc)), "min(b, NaN) = NaN as in expr.y");
	CHECK(isnan(ev("NOPE < 3", &rc)), "comparison with NaN is NaN (BINARY_OP)");
	CHECK(ev("A if NOPE else B", &rc) == 10, "NaN condition counts as true");
	CHECK(ev("cpu@EV.X\\,cmask\\=1\\,edge@ * 2", &rc) == 14, "escaped pmu@terms@ identifier");
	CHECK(ev("topdown\\-be\\-bound + 1", &rc) == 4, "escaped '-' in identifier");
	CHECK(ev("EXE_ACTIVITY.1_PORTS_UTIL + 1e2", &rc) == 105, "identifier with digits, 1e2 number");
	CHECK(ev("0.5 * 4", &rc) == 2, "decimal number");
	CHECK(ev("(A | 1) + (B & 6) + (A ^ 2)", &rc) == 11 + 4 + 8, "bit operators on (long)");
	ev("A + * B", &rc);
	CHECK(rc == -1, "syntax error reported");
	{
		struct simple c;
		struct tma_expr_val v;
		char err[200];
		memset(&c, 0, sizeof(c));
		c.x.resolve = simple_resolve;
		tma_expr_eval(&c.x, "A + (B * ", &v, err, sizeof(err));
		CHECK(strstr(err, "position") != NULL, "syntax error names a position: %s", err);
	}
	CHECK(isnan(ev("#bogus_literal + 1", &rc)) && rc == 1, "unknown literal fails the metric");
}

/* ---------- 2. recipes vs reference JSON ---------- */
struct refset {
	struct rj_file f[3];
	int nf;
};
static const char *ref_files(const char *cpu, int i)
{
	static const struct { const char *cpu, *f[3]; } t[] = {
		{ "skylake", { "skylake/skl-metrics.json" } },
		{ "skylakex", { "skylakex/skx-metrics.json" } },
		{ "cascadelakex", { "cascadelakex/clx-metrics.json" } },
		{ "icelakex", { "icelakex/icx-metrics.json" } },
		{ "sapphirerapids", { "sapphirerapids/spr-metrics.json" } },
		{ "amdzen4", { "amdzen4/pipeline.json" } },
		{ "amdzen5", { "amdzen5/pipeline.json" } },
		{ "neoverse-v1", { "neoverse-v1/metrics.json", "arm64-common/sbsa.json" } },
		{ "neoverse-n2", { "neoverse-n2-v2/metrics.json", "arm64-common/sbsa.json" } },
		{ "neoverse-v2", { "neoverse-n2-v2/metrics.json", "arm64-common/sbsa.json" } },
	};
	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++)
		if (!strcmp(t[k].cpu, cpu))
			return t[k].f[i];
	return NULL;
}

/* the reference metric: MetricName == name, or ArchStdEvent == name with a MetricExpr */
static const struct rj_obj *ref_metric(const struct refset *rs, const char *name)
{
	for (int i = 0; i < rs->nf; i++)
		for (int k = 0; k < rs->f[i].n; k++) {
			const struct rj_obj *o = &rs->f[i].o[k];
			const char *mn = rj_get(o, "MetricName"), *as = rj_get(o, "ArchStdEvent");
			if (!rj_get(o, "MetricExpr"))
				continue;
			if ((mn && !strcmp(mn, name)) || (!mn && as && !strcmp(as, name)))
				return o;
		}
	return NULL;
}

static double ref_scale(const struct rj_obj *o)
{
	const char *s = rj_get(o, "ScaleUnit");
	return s ? atof(s) : 1;
}

struct tctx {
	struct tma_expr_ctx x;
	const struct tma_cpu *c;
	const struct refset *rs;	/* NULL: resolve metrics from our table */
	uint64_t seed;
	int zero;			/* 1: all events 0; 2: events whose hash is even are 0 */
	int smt, core_wide, pmem;
};

static uint64_t hash(const char *s, uint64_t seed)
{
	uint64_t h = 1469598103934665603ULL ^ seed;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	h ^= h >> 29;
	return h;
}

static const struct tma_metric *our_metric(const struct tma_formulation *f, const char *name)
{
	for (; f; f = f->base)
		for (int i = 0; i < f->n; i++)
			if (!strcmp(f->m[i].name, name))
				return &f->m[i];
	return NULL;
}

static int t_resolve(struct tma_expr_ctx *x, enum tma_expr_kind k, const char *id, struct tma_expr_val *out)
{
	struct tctx *t = (struct tctx *)x;
	out->cnst = false;
	out->ids = 0;
	if (k == TMA_EXPR_LITERAL) {
		out->cnst = true;
		if (!strcasecmp(id, "SMT_on")) out->v = t->smt;
		else if (!strcasecmp(id, "core_wide")) out->v = t->core_wide;
		else if (!strcasecmp(id, "has_pmem")) out->v = t->pmem;
		else if (!strcasecmp(id, "slots")) out->v = t->c->slots;
		else return -1;
		return 0;
	}
	if (k == TMA_EXPR_CPUID) {
		out->cnst = true;
		out->v = !strcmp(t->c->name, "neoverse-n2");
		return 0;
	}
	if (k == TMA_EXPR_ID) {
		const char *expr = NULL;
		if (t->rs) {
			const struct rj_obj *o = ref_metric(t->rs, id);
			if (o && strcmp(id, "ipc")) /* "ipc" in n2 files is a metric too */
				expr = rj_get(o, "MetricExpr");
		} else {
			const struct tma_metric *m = our_metric(t->c->perf, id);
			if (m)
				expr = m->expr;
		}
		if (expr) {
			struct tma_expr_val v;
			x->depth++;
			int r = tma_expr_eval(x, expr, &v, NULL, 0);
			x->depth--;
			*out = v;
			if (r)
				out->v = NAN;
			return 0;
		}
	}
	char key[TMA_KEY_LEN];
	if (tma_event_key(id, key, sizeof(key)))
		snprintf(key, sizeof(key), "%s", id);
	uint64_t h = hash(key, t->seed);
	if (t->zero == 1 || (t->zero == 2 && !(h & 1)))
		out->v = 0;
	else
		out->v = (double)(h % 1000000000ULL) + 1000;
	return 0;
}

static void test_reference(void)
{
	char path[512];
	int compared_cpus = 0;

	for (int ci = 0; ci < tma_ncpus; ci++) {
		const struct tma_cpu *c = tma_cpus[ci];
		struct refset rs;
		memset(&rs, 0, sizeof(rs));
		bool ok = true;
		for (int i = 0; i < 3 && ref_files(c->name, i); i++) {
			snprintf(path, sizeof(path), "%s/%s", refdir(), ref_files(c->name, i));
			if (rj_load(path, &rs.f[rs.nf++])) {
				CHECK(0, "read reference %s", path);
				ok = false;
			}
		}
		if (!ok)
			continue;
		compared_cpus++;
		int nmetrics = 0, mism = 0, nvec = 0, nfinite = 0;
		char first_bad[300] = "";
		for (const struct tma_formulation *f = c->perf; f; f = f->base)
			for (int mi = 0; mi < f->n; mi++) {
				const struct tma_metric *m = &f->m[mi];
				const struct rj_obj *ro = ref_metric(&rs, m->name);
				if (!ro) {
					CHECK(0, "%s: metric %s exists in the reference JSON", c->name, m->name);
					continue;
				}
				nmetrics++;
				if (m->tma)
					CHECK(fabs(ref_scale(ro) - m->scale) < 1e-9 || (m->scale == 1 && ref_scale(ro) == 1),
					      "%s: %s scale %g matches ScaleUnit %s", c->name, m->name, m->scale,
					      rj_get(ro, "ScaleUnit") ? rj_get(ro, "ScaleUnit") : "(none)");
				for (int seed = 0; seed < 40; seed++)
					for (int envi = 0; envi < 8; envi++) {
						struct tctx a, b;
						memset(&a, 0, sizeof(a));
						a.x.resolve = t_resolve;
						a.c = c;
						a.seed = (uint64_t)seed;
						a.zero = seed == 0 ? 1 : seed == 1 ? 2 : 0;
						a.smt = envi & 1;
						a.core_wide = envi >> 1 & 1;
						a.pmem = envi >> 2 & 1;
						b = a;
						b.rs = &rs;
						struct tma_expr_val va, vb;
						int ra = tma_expr_eval(&a.x, m->expr, &va, NULL, 0);
						int rb = tma_expr_eval(&b.x, rj_get(ro, "MetricExpr"), &vb, NULL, 0);
						double x = ra ? NAN : va.v, y = rb ? NAN : vb.v;
						nvec++;
						nfinite += isfinite(y);
						bool same = (isnan(x) && isnan(y)) ||
							    fabs(x - y) <= 1e-9 * fmax(1, fabs(y));
						if (!same) {
							mism++;
							if (!first_bad[0])
								snprintf(first_bad, sizeof(first_bad), "%s seed %d env %d: ours %g ref %g",
									 m->name, seed, envi, x, y);
						}
					}
			}
		CHECK(mism == 0 && nmetrics > 0 && nfinite > nvec / 2,
		      "%s: %d metrics x %d vectors equal perf's reference MetricExpr (%d finite)%s%s",
		      c->name, nmetrics, nvec / (nmetrics ? nmetrics : 1), nfinite, first_bad[0] ? "; first mismatch: " : "", first_bad);
	}
	CHECK(compared_cpus == tma_ncpus, "reference data found for all %d recipes (dir %s)", tma_ncpus, refdir());
}

/* ---------- 3. profiles ---------- */

static void run(const char *cpu, int level, const struct kv *kv, struct tma_result *r)
{
	const char *names[96];
	double vals[96], pct[96];
	int n = 0;
	for (; kv[n].k; n++) {
		names[n] = kv[n].k;
		vals[n] = kv[n].v;
		pct[n] = 100;
	}
	tma_compute_named(tma_cpu_by_name(cpu), level, n, names, vals, pct, r);
}

static bool near(double a, double b)
{
	return fabs(a - b) < 1e-6 * fmax(1, fabs(b));
}


static void test_skx_profiles(void)
{
	struct tma_env e;
	struct tma_result r;
	char path[256];

	tma_env_host(&e);
	e.smt_on = 0;
	e.core_wide = 1;
	e.has_pmem = 0;
	tma_set_env(&e);

	run("skylakex", 3, skx_llm_decode, &r);
	double slots = 4 * CLK;
	double fe = 4e8 / slots, bad = (8e8 - 7e8 + 4 * 1e7) / slots, ret = 7e8 / slots;
	double be = 1 - fe - (8e8 + 4 * 1e7) / slots;
	double mem = (7e8 + 2e7) / (8e8 + (5e7 + ret * 4e7) + 2e7) * be;
	double fbf = 1 + 2e5 / 5e6;
	double l2 = 1e6 * fbf / (1e6 * fbf + 1e7) * ((6.5e8 - 5.6e8) / CLK);
	double dram = 5e8 / CLK + (6.5e8 - 5.6e8) / CLK - l2;
	CHECK(near(tma_result_get(&r, "tma_frontend_bound"), 100 * fe), "SKX LLM decode: Frontend_Bound %.3f%%", 100 * fe);
	CHECK(near(tma_result_get(&r, "tma_bad_speculation"), 100 * bad), "SKX LLM decode: Bad_Speculation %.3f%%", 100 * bad);
	CHECK(near(tma_result_get(&r, "tma_retiring"), 100 * ret), "SKX LLM decode: Retiring %.3f%%", 100 * ret);
	CHECK(near(tma_result_get(&r, "tma_backend_bound"), 100 * be), "SKX LLM decode: Backend_Bound %.3f%%", 100 * be);
	CHECK(near(tma_result_get(&r, "tma_memory_bound"), 100 * mem), "SKX LLM decode: Memory_Bound %.3f%%", 100 * mem);
	CHECK(near(tma_result_get(&r, "tma_core_bound"), 100 * (be - mem)), "SKX LLM decode: Core_Bound");
	CHECK(near(tma_result_get(&r, "tma_l2_bound"), 100 * l2), "SKX LLM decode: L2_Bound %.4f%%", 100 * l2);
	CHECK(near(tma_result_get(&r, "tma_dram_bound"), 100 * dram), "SKX LLM decode: DRAM_Bound %.3f%%", 100 * dram);
	CHECK(near(tma_result_get(&r, "tma_mem_bandwidth"), 60) && near(tma_result_get(&r, "tma_mem_latency"), 20),
	      "SKX LLM decode: MEM_Bandwidth 60%%, MEM_Latency 20%%");
	CHECK(near(tma_result_get(&r, "tma_l3_bound"), 100 * (5.6e8 - 5e8) / CLK), "SKX LLM decode: L3_Bound");
	CHECK(near(tma_result_get(&r, "tma_l1_bound"), 100 * (7e8 - 6.5e8) / CLK), "SKX LLM decode: L1_Bound");
	CHECK(near(tma_result_get(&r, "tma_store_bound"), 100 * 2e7 / CLK), "SKX LLM decode: Store_Bound");
	tma_bottleneck_path(&r, path, sizeof(path));
	CHECK(!strncmp(path, "Backend_Bound ", 14) && strstr(path, " \xe2\x80\xba Memory_Bound ") &&
	      strstr(path, "\xe2\x80\xba DRAM_Bound ") && strstr(path, "\xe2\x80\xba MEM_Bandwidth 60.0%"),
	      "SKX LLM decode bottleneck path: %s", path);
	CHECK(r.n == 4 + 8 + 7, "SKX --tma=3 tree has 19 nodes (got %d)", r.n);
	run("skylakex", 1, skx_llm_decode, &r);
	CHECK(r.n == 4, "SKX --tma=1 gives the 4 level-1 nodes");

	/* compute-bound GEMM: high retiring, core-bound backend */
	struct kv gemm[64];
	int n = 0;
	for (; skx_llm_decode[n].k; n++)
		gemm[n] = skx_llm_decode[n];
	gemm[n] = (struct kv){ NULL, 0 };
#define SET(K_, V_) for (int i_ = 0; gemm[i_].k; i_++) if (!strcmp(gemm[i_].k, K_)) gemm[i_].v = V_
	SET("IDQ_UOPS_NOT_DELIVERED.CORE", 1e8);
	SET("UOPS_ISSUED.ANY", 2.7e9); SET("UOPS_RETIRED.RETIRE_SLOTS", 2.6e9);
	SET("CYCLE_ACTIVITY.STALLS_MEM_ANY", 5e7); SET("CYCLE_ACTIVITY.STALLS_TOTAL", 2e8);
	SET("EXE_ACTIVITY.1_PORTS_UTIL", 3e8); SET("EXE_ACTIVITY.2_PORTS_UTIL", 3e8);
	SET("CYCLE_ACTIVITY.STALLS_L1D_MISS", 3e7); SET("CYCLE_ACTIVITY.STALLS_L2_MISS", 1e7); SET("CYCLE_ACTIVITY.STALLS_L3_MISS", 2e6);
	run("skylakex", 2, gemm, &r);
	tma_bottleneck_path(&r, path, sizeof(path));
	CHECK(!strncmp(path, "Retiring ", 9), "GEMM profile: Retiring leads: %s", path);
	CHECK(tma_result_get(&r, "tma_core_bound") > tma_result_get(&r, "tma_memory_bound"), "GEMM profile: Core_Bound > Memory_Bound");

	/* frontend-bound */
	SET("IDQ_UOPS_NOT_DELIVERED.CORE", 2.4e9); SET("IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE", 5e8);
	SET("UOPS_ISSUED.ANY", 9e8); SET("UOPS_RETIRED.RETIRE_SLOTS", 8.5e8);
	run("skylakex", 2, gemm, &r);
	tma_bottleneck_path(&r, path, sizeof(path));
	CHECK(!strncmp(path, "Frontend_Bound 60.0% \xe2\x80\xba Fetch_Latency 50.0%", 40), "frontend-bound profile: %s", path);

	/* mispredict-heavy: wasted issue */
	SET("IDQ_UOPS_NOT_DELIVERED.CORE", 2e8);
	SET("UOPS_ISSUED.ANY", 2.6e9); SET("UOPS_RETIRED.RETIRE_SLOTS", 1.2e9); SET("INT_MISC.RECOVERY_CYCLES", 1.5e8);
	SET("BR_MISP_RETIRED.ALL_BRANCHES", 4e7); SET("MACHINE_CLEARS.COUNT", 1e5);
	run("skylakex", 2, gemm, &r);
	tma_bottleneck_path(&r, path, sizeof(path));
	double badm = (2.6e9 - 1.2e9 + 4 * 1.5e8) / slots;
	CHECK(near(tma_result_get(&r, "tma_bad_speculation"), 100 * badm) && strstr(path, "Bad_Speculation") == path &&
	      strstr(path, "Branch_Mispredicts"), "mispredict-heavy profile: %s", path);

	/* slightly negative node: perf prints it as is (no clamping on SKX) */
	SET("BR_MISP_RETIRED.ALL_BRANCHES", 4e7); SET("MACHINE_CLEARS.COUNT", -1e4);
	run("skylakex", 2, gemm, &r);
	CHECK(tma_result_get(&r, "tma_machine_clears") < 0 && tma_result_get(&r, "tma_machine_clears") > -0.1,
	      "slightly negative Machine_Clears kept as perf computes it (%.4f%%)", tma_result_get(&r, "tma_machine_clears"));
	{
		/* ICX clamps with max(0, ...) where perf does */
		struct tma_env e2 = e;
		tma_set_env(&e2);
	}

	/* zero cycles: every ratio divides by zero -> null */
	SET("CPU_CLK_UNHALTED.THREAD", 0);
	run("skylakex", 3, gemm, &r);
	int nn = 0;
	for (int i = 0; i < r.n; i++)
		nn += isnan(r.node[i].value);
	CHECK(nn == r.n, "zero cycles: all %d nodes null (x/0), got %d", r.n, nn);
	CHECK(tma_bottleneck_path(&r, path, sizeof(path)) < 0, "zero cycles: no bottleneck path");
	{
		char buf[4096];
		FILE *f = fmemopen(buf, sizeof(buf), "w");
		struct json j;
		json_init(&j, f, false);
		json_obj_begin(&j, NULL);
		tma_result_json(&r, &j, "tma");
		json_obj_end(&j);
		fclose(f);
		CHECK(strstr(buf, "\"tma_frontend_bound\":null") != NULL, "JSON gives null for x/0: %.80s", buf);
	}
	SET("CPU_CLK_UNHALTED.THREAD", CLK);

	/* SMT on, core-wide: perf uses THREAD_ANY/2 and RECOVERY_CYCLES_ANY/2 */
	e.smt_on = 1;
	e.core_wide = 1;
	tma_set_env(&e);
	struct kv smt[64];
	n = 0;
	for (; skx_llm_decode[n].k; n++)
		smt[n] = skx_llm_decode[n];
	smt[n++] = (struct kv){ "CPU_CLK_UNHALTED.THREAD_ANY", 1.6e9 };
	smt[n++] = (struct kv){ "INT_MISC.RECOVERY_CYCLES_ANY", 3e7 };
	smt[n] = (struct kv){ NULL, 0 };
	run("skylakex", 1, smt, &r);
	double sslots = 4 * (1.6e9 / 2);
	CHECK(near(tma_result_get(&r, "tma_frontend_bound"), 100 * 4e8 / sslots) &&
	      near(tma_result_get(&r, "tma_bad_speculation"), 100 * (8e8 - 7e8 + 4 * (3e7 / 2)) / sslots),
	      "SMT on + core-wide: slots from THREAD_ANY/2, recovery from RECOVERY_CYCLES_ANY/2");
	/* SMT on, per-thread (core_wide 0): THREAD/2*(1+ONE_THREAD_ACTIVE/REF_XCLK) */
	e.core_wide = 0;
	tma_set_env(&e);
	for (int i = 0; smt[i].k; i++)
		if (!strcmp(smt[i].k, "CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE"))
			smt[i].v = 1e7;
	run("skylakex", 1, smt, &r);
	double cc = CLK / 2 * (1 + 1e7 / 2.5e7);
	CHECK(near(tma_result_get(&r, "tma_retiring"), 100 * 7e8 / (4 * cc)), "SMT on, not core-wide: core clocks from ONE_THREAD_ACTIVE/REF_XCLK");
	e.smt_on = 0;
	e.core_wide = 1;
	tma_set_env(&e);
}

static void test_spr(void)
{
	struct tma_result r;
	char path[256];
	/* perf's own topdown events, as perf stat -M TopdownL2 prints them */
	static const struct kv td[] = {
		{ "slots", 6e9 }, { "topdown-retiring", 1.2e9 }, { "topdown-bad-spec", 3e8 }, { "topdown-fe-bound", 6e8 },
		{ "topdown-be-bound", 3.9e9 }, { "topdown-heavy-ops", 2e8 }, { "topdown-br-mispredict", 2.4e8 },
		{ "topdown-fetch-lat", 4e8 }, { "topdown-mem-bound", 3.3e9 }, { "INT_MISC.UOP_DROPPING", 6e7 },
		{ "CPU_CLK_UNHALTED.THREAD", CLK }, { NULL, 0 },
	};
	run("sapphirerapids", 2, td, &r);
	double sum = 6e8 + 3e8 + 1.2e9 + 3.9e9;
	CHECK(!strcmp(r.formulation, "perf"), "SPR analyze with topdown-* events uses perf's formulation");
	CHECK(near(tma_result_get(&r, "tma_frontend_bound"), 100 * (6e8 / sum - 6e7 / 6e9)), "SPR perf: Frontend_Bound");
	CHECK(near(tma_result_get(&r, "tma_backend_bound"), 100 * 3.9e9 / sum), "SPR perf: Backend_Bound");
	CHECK(near(tma_result_get(&r, "tma_memory_bound"), 100 * 3.3e9 / sum), "SPR perf: Memory_Bound");
	double fe = 6e8 / sum - 6e7 / 6e9, be = 3.9e9 / sum, ret = 1.2e9 / sum;
	CHECK(near(tma_result_get(&r, "tma_bad_speculation"), 100 * fmax(1 - (fe + be + ret), 0)), "SPR perf: Bad_Speculation = max(1 - others, 0)");
	double bad = fmax(1 - (fe + be + ret), 0), br = 2.4e8 / sum;
	CHECK(near(tma_result_get(&r, "tma_machine_clears"), 100 * fmax(0, bad - br)), "SPR perf: Machine_Clears clamps at 0 like perf");
	tma_bottleneck_path(&r, path, sizeof(path));
	CHECK(!strncmp(path, "Backend_Bound 65.0% \xe2\x80\xba Memory_Bound 55.0%", 40), "SPR perf path: %s", path);

	/* general-counter formulation (BPF path) */
	static const struct kv gc[] = {
		{ "TOPDOWN.SLOTS_P", 6e9 }, { "TOPDOWN.BACKEND_BOUND_SLOTS", 3.9e9 }, { "TOPDOWN.MEMORY_BOUND_SLOTS", 3.3e9 },
		{ "IDQ_BUBBLES.CORE", 6e8 }, { "INT_MISC.UOP_DROPPING", 6e7 }, { "UOPS_RETIRED.SLOTS", 1.2e9 },
		{ "UOPS_RETIRED.HEAVY", 2e8 }, { "TOPDOWN.BR_MISPREDICT_SLOTS", 2.4e8 },
		{ "IDQ_BUBBLES.CYCLES_0_UOPS_DELIV.CORE", 6e7 }, { "CPU_CLK_UNHALTED.THREAD", CLK },
		{ "MEMORY_ACTIVITY.STALLS_L1D_MISS", 6e8 }, { "MEMORY_ACTIVITY.STALLS_L2_MISS", 5.5e8 },
		{ "MEMORY_ACTIVITY.STALLS_L3_MISS", 5e8 }, { "EXE_ACTIVITY.BOUND_ON_LOADS", 6.5e8 },
		{ "EXE_ACTIVITY.BOUND_ON_STORES", 1e7 }, { "OFFCORE_REQUESTS_OUTSTANDING.ALL_DATA_RD:c4", 7e8 },
		{ "OFFCORE_REQUESTS_OUTSTANDING.CYCLES_WITH_DATA_RD", 9e8 }, { NULL, 0 },
	};
	run("sapphirerapids", 3, gc, &r);
	CHECK(!strcmp(r.formulation, "gc"), "SPR with general counters uses the gc formulation");
	CHECK(near(tma_result_get(&r, "tma_frontend_bound"), 100 * (6e8 - 6e7) / 6e9) &&
	      near(tma_result_get(&r, "tma_backend_bound"), 65) && near(tma_result_get(&r, "tma_retiring"), 20) &&
	      near(tma_result_get(&r, "tma_memory_bound"), 55) && near(tma_result_get(&r, "tma_heavy_operations"), 100 * 2e8 / 6e9),
	      "SPR gc: L1/L2 from TOPDOWN.*_SLOTS over TOPDOWN.SLOTS_P");
	CHECK(near(tma_result_get(&r, "tma_dram_bound"), 50) && near(tma_result_get(&r, "tma_mem_bandwidth"), 70),
	      "SPR gc: DRAM_Bound 50%%, MEM_Bandwidth 70%%");
	tma_bottleneck_path(&r, path, sizeof(path));
	CHECK(strstr(path, "DRAM_Bound 50.0% \xe2\x80\xba MEM_Bandwidth 70.0%") != NULL, "SPR gc path: %s", path);
}

static void test_amd_arm(void)
{
	struct tma_result r;
	char path[256];
	static const struct kv z4[] = {
		{ "ls_not_halted_cyc", 1e9 }, { "de_no_dispatch_per_slot.no_ops_from_frontend", 6e8 },
		{ "cpu/de_no_dispatch_per_slot.no_ops_from_frontend,cmask=0x6/", 5e7 },
		{ "de_src_op_disp.all", 2.2e9 }, { "ex_ret_ops", 2e9 }, { "de_no_dispatch_per_slot.backend_stalls", 3e9 },
		{ "de_no_dispatch_per_slot.smt_contention", 2e8 }, { "ex_ret_brn_misp", 1e6 }, { "resyncs_or_nc_redirects", 1e5 },
		{ "ex_no_retire.load_not_complete", 4e8 }, { "ex_no_retire.not_complete", 5e8 }, { "ex_ret_ucode_ops", 1e7 },
		{ NULL, 0 },
	};
	run("amdzen4", 2, z4, &r);
	CHECK(near(tma_result_get(&r, "backend_bound"), 50) && near(tma_result_get(&r, "backend_bound_memory"), 40) &&
	      near(tma_result_get(&r, "smt_contention"), 100 * 2e8 / 6e9), "Zen 4: backend_bound 50%%, memory 40%%, smt_contention");
	tma_bottleneck_path(&r, path, sizeof(path));
	CHECK(!strcmp(path, "Backend_Bound 50.0% \xe2\x80\xba Memory 40.0%"), "Zen 4 path: %s", path);
	static const struct kv zero[] = { { "ls_not_halted_cyc", 0 }, { "ex_ret_ops", 0 }, { NULL, 0 } };
	run("amdzen4", 1, zero, &r);
	CHECK(tma_result_get(&r, "retiring") == 0, "Zen 4 zero cycles: d_ratio gives 0, not null (perf's d_ratio)");

	static const struct kv v1[] = {
		{ "CPU_CYCLES", 1e9 }, { "STALL_SLOT_FRONTEND", 8e8 }, { "STALL_SLOT_BACKEND", 4e9 }, { "STALL_SLOT", 4.8e9 },
		{ "BR_MIS_PRED", 1e6 }, { "OP_RETIRED", 2.9e9 }, { "OP_SPEC", 3.1e9 }, { NULL, 0 },
	};
	run("neoverse-v1", 1, v1, &r);
	CHECK(near(tma_result_get(&r, "backend_bound"), 50) && near(tma_result_get(&r, "frontend_bound"), 100 * (8e8 / 8e9 - 4e6 / 1e9)),
	      "Neoverse V1: backend_bound 50%%, frontend_bound");
	run("neoverse-n2", 1, v1, &r);
	CHECK(near(tma_result_get(&r, "backend_bound"), 100 * (4e9 / 5e9 - 3e6 / 1e9)), "Neoverse N2: #slots = 5");
}

/* the BPF path: plan, then compute from the planned event list with percent-running */
static void test_plan_compute(void)
{
	static struct event_list el;
	static struct tma_result r;
	double vals[TMABPF_MAX_EVENTS], pct[TMABPF_MAX_EVENTS];
	char err[256], path[256];
	struct tma_env e;

	tma_env_host(&e);
	e.smt_on = 0;
	e.core_wide = 0;
	e.nmi_watchdog = 0;
	tma_set_env(&e);
	el.n = 0;
	int rc = tma_plan_events(tma_cpu_by_name("skylakex"), 3, &el, err, sizeof(err));
	CHECK(rc == 0, "plan skylakex --tma=3 %s", rc ? err : "");
	for (int i = 0; i < el.n; i++) {
		vals[i] = -1;
		for (int k = 0; skx_llm_decode[k].k; k++) {
			char a[TMA_KEY_LEN], b[TMA_KEY_LEN];
			tma_event_key(skx_llm_decode[k].k, a, sizeof(a));
			tma_event_key(el.ev[i].name, b, sizeof(b));
			if (!strcmp(a, b))
				vals[i] = skx_llm_decode[k].v;
		}
		pct[i] = el.ev[i].group == 0 ? 100 : 50;
	}
	bool allset = true;
	for (int i = 0; i < el.n; i++)
		allset &= vals[i] >= 0;
	CHECK(allset, "every planned event has a profile value");
	tma_compute(tma_cpu_by_name("skylakex"), 3, &el, vals, pct, &r);
	CHECK(isnan(tma_result_get(&r, "tma_fetch_latency")) && r.n == 4 + 2 + 7,
	      "nodes the level-3 plan left out are not reported (%d nodes)", r.n);
	tma_bottleneck_path(&r, path, sizeof(path));
	CHECK(strstr(path, "MEM_Bandwidth 60.0%") != NULL, "BPF-path bottleneck path: %s", path);
	bool flag_ok = true;
	for (int i = 0; i < r.n; i++)
		if (!strcmp(r.node[i].name, "tma_dram_bound"))
			flag_ok = r.node[i].scaled && r.node[i].ungrouped && r.node[i].min_running == 50;
	CHECK(flag_ok, "DRAM_Bound from multiplexed counters of two groups is marked scaled+ungrouped");
	/* ICX general-counter L1 */
	el.n = 0;
	rc = tma_plan_events(tma_cpu_by_name("icelakex"), 1, &el, err, sizeof(err));
	static const struct kv icx[] = {
		{ "TOPDOWN.SLOTS_P", 5e9 }, { "IDQ_UOPS_NOT_DELIVERED.CORE", 1e9 }, { "INT_MISC.UOP_DROPPING", 5e7 },
		{ "TOPDOWN.BACKEND_BOUND_SLOTS", 2e9 }, { "INT_MISC.CLEARS_COUNT", 1e7 }, { "UOPS_RETIRED.SLOTS", 1.5e9 },
		{ NULL, 0 },
	};
	for (int i = 0; i < el.n; i++) {
		vals[i] = NAN;
		for (int k = 0; icx[k].k; k++)
			if (!strcmp(icx[k].k, el.ev[i].name))
				vals[i] = icx[k].v;
		pct[i] = 100;
	}
	tma_compute(tma_cpu_by_name("icelakex"), 1, &el, vals, pct, &r);
	double fe = (1e9 - 5e7) / 5e9, be = 2e9 / 5e9 + 5 * 1e7 / 5e9, ret = 1.5e9 / 5e9;
	CHECK(rc == 0 && !strcmp(r.formulation, "gc") && near(tma_result_get(&r, "tma_frontend_bound"), 100 * fe) &&
	      near(tma_result_get(&r, "tma_backend_bound"), 100 * be) &&
	      near(tma_result_get(&r, "tma_bad_speculation"), 100 * fmax(1 - fe - be - ret, 0)) && !r.node[0].scaled,
	      "ICX general-counter L1 from the planned events (%d events)", el.n);
}

static void test_detect(void)
{
	char desc[256], why[256];
	const struct tma_cpu *c;
	c = tma_cpu_detect_text("vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\nmodel name\t: Intel Xeon\nstepping\t: 8\n",
				false, desc, sizeof(desc), why, sizeof(why));
	CHECK(c && !strcmp(tma_cpu_name(c), "sapphirerapids") && strstr(desc, "model 143"), "detect SPR: %s", desc);
	c = tma_cpu_detect_text("vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\nstepping\t: 7\n", false, desc, sizeof(desc), why, sizeof(why));
	CHECK(c && !strcmp(tma_cpu_name(c), "cascadelakex"), "detect CLX (model 85 stepping 7)");
	c = tma_cpu_detect_text("vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\nstepping\t: 4\n", false, desc, sizeof(desc), why, sizeof(why));
	CHECK(c && !strcmp(tma_cpu_name(c), "skylakex"), "detect SKX (model 85 stepping 4)");
	c = tma_cpu_detect_text("vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 151\nstepping\t: 2\n", false, desc, sizeof(desc), why, sizeof(why));
	CHECK(!c && strstr(why, "hybrid") && strstr(desc, "hybrid"), "detect hybrid Alder Lake: %s", why);
	c = tma_cpu_detect_text("vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\nstepping\t: 8\n", true, desc, sizeof(desc), why, sizeof(why));
	CHECK(!c && strstr(why, "hybrid"), "cpu_core/cpu_atom PMUs reported as hybrid");
	c = tma_cpu_detect_text("vendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nstepping\t: 1\n", false, desc, sizeof(desc), why, sizeof(why));
	CHECK(c && !strcmp(tma_cpu_name(c), "amdzen4"), "detect Zen 4 (family 0x19)");
	c = tma_cpu_detect_text("vendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\n", false, desc, sizeof(desc), why, sizeof(why));
	CHECK(c && !strcmp(tma_cpu_name(c), "amdzen5"), "detect Zen 5 (family 0x1a)");
	c = tma_cpu_detect_text("processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd4f\n", false, desc, sizeof(desc), why, sizeof(why));
	CHECK(c && !strcmp(tma_cpu_name(c), "neoverse-v2"), "detect Neoverse V2 from MIDR part");
	c = tma_cpu_detect_text("vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 167\nstepping\t: 1\n", false, desc, sizeof(desc), why, sizeof(why));
	CHECK(!c && strstr(why, "no TMA recipe") && strstr(desc, "model 167"), "no recipe for Rocket Lake: %s", why);
	CHECK(tma_cpu_by_name("SapphireRapids") && !tma_cpu_by_name("pentium4"), "tma_cpu_by_name");
	for (int i = 0; i < tma_ncpus; i++)
		CHECK(tma_cpu_by_name(tma_cpus[i]->name) == tma_cpus[i], "by name: %s", tma_cpus[i]->name);
}

static void test_keys(void)
{
	char k[TMA_KEY_LEN];
	tma_event_key("cpu/L1D_PEND_MISS.FB_FULL,cmask=1/", k, sizeof(k));
	CHECK(!strcmp(k, "L1D_PEND_MISS.FB_FULL:c1"), "key of cpu/EV,cmask=1/: %s", k);
	tma_event_key("cpu@ICACHE_16B.IFDATA_STALL,cmask=1,edge@", k, sizeof(k));
	CHECK(!strcmp(k, "ICACHE_16B.IFDATA_STALL:c1:e1"), "key of cpu@..,edge@: %s", k);
	tma_event_key("cpu_core/TOPDOWN.SLOTS/", k, sizeof(k));
	CHECK(!strcmp(k, "TOPDOWN.SLOTS"), "hybrid pmu prefix stripped");
	tma_event_key("slots", k, sizeof(k));
	CHECK(!strcmp(k, "TOPDOWN.SLOTS"), "slots alias");
	tma_event_key("TOPDOWN.SLOTS:perf_metrics", k, sizeof(k));
	CHECK(!strcmp(k, "TOPDOWN.SLOTS"), "perf modifier dropped");
	tma_event_key("exe_activity.2_ports_util:u0xc", k, sizeof(k));
	CHECK(!strcmp(k, "EXE_ACTIVITY.2_PORTS_UTIL:u0xc"), "lower case + umask override: %s", k);
	CHECK(tma_event_key("cpu/event=0x3c,umask=0x0/", k, sizeof(k)) != 0, "raw term spec is not a name");
}

int main(void)
{
	struct tma_env e;
	tma_env_host(&e);
	tma_set_env(&e);
	test_expr();
	test_keys();
	test_detect();
	test_reference();
	test_skx_profiles();
	test_spr();
	test_amd_arm();
	test_plan_compute();
	return t_done();
}
