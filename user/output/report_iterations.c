// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The --per-call section of the reports: JSON "iterations" (one object per
 * iteration) and "per_call" (their statistics), the per-token text. */
#include <stdlib.h>
#include <string.h>
#include "lib/sorted.h"
#include "lib/text_fit.h"
#include "lib/text_safe.h"
#include "model/counters.h"
#include "output/report_sections.h"

#define SLOWEST 5

static const char *fn_name(const struct report *r, unsigned int fn)
{
	return r->uset && (int)fn < r->uset->nr_funcs ? r->uset->funcs[fn].symbol : "?";
}

/* "library file name:symbol" of probed function fn into buf */
static const char *lib_fn_key(const struct report *r, unsigned int fn, char *buf, size_t len)
{
	const char *mod = r->uset->libs[r->uset->funcs[fn].lib].module, *base = strrchr(mod, '/');

	snprintf(buf, len, "%s:%s", base ? base + 1 : mod, fn_name(r, fn));
	return buf;
}

static void time_json(struct json *j, const struct iter_time *t)
{
	json_u64(j, "oncpu_ns", t->compute_ns + t->spin_ns);
	json_u64(j, "compute_ns", t->compute_ns);
	json_u64(j, "spin_ns", t->spin_ns);
	json_u64(j, "blocked_ns", t->blocked_ns);
	json_u64(j, "runqueue_ns", t->runq_ns);
	json_u64(j, "absent_ns", t->absent_ns);
	json_u64(j, "runtime_ns", t->runtime_ns);
}

static void iteration_json(const struct report *r, struct json *j, const struct iteration *it, size_t k)
{
	json_obj_begin(j, NULL);
	json_u64(j, "index", k);
	report_json_ids(j, it->pid, it->tid);
	json_u64(j, "start_ns", it->start_ns);
	json_u64(j, "wall_ns", it->wall_ns);
	json_u64(j, "threads", (uint64_t)it->nthreads);
	json_bool(j, "threads_truncated", it->threads_truncated);
	json_u64(j, "torn_reads", (uint64_t)it->torn);
	json_u64(j, "untracked_threads", (uint64_t)it->untracked);
	json_u64(j, "exited_threads", (uint64_t)it->exited);
	time_json(j, &it->sum);
	json_arr_begin(j, "per_thread");
	for (int i = 0; i < it->nthreads; i++) {
		json_obj_begin(j, NULL);
		json_u64(j, "tid", it->th[i].tid);
		time_json(j, &it->th[i].t);
		json_obj_end(j);
	}
	json_arr_end(j);
	report_counters_json(r, j, "counters", it->c);
	report_counters_json(r, j, "process_counters", it->pc);
	json_u64(j, "process_counters_unfolded_ns", it->pc_unfolded_ns);
	report_roofline_window_json(r, it, j);
	{
		struct thread_stats sums = {};

		memcpy(sums.c, it->pc, sizeof(sums.c));
		report_tma_json(r, &sums, j);	/* the process' */
	}
	if (it->sampled) {
		json_u64(j, "samples", it->samples);
		json_arr_begin(j, "top_functions");
		for (int k = 0; k < it->ntop; k++) {
			json_obj_begin(j, NULL);
			json_str(j, "module", it->top[k].module);
			json_str(j, "function", it->top[k].symbol);
			json_u64(j, "samples", it->top[k].samples);
			json_obj_end(j);
		}
		json_arr_end(j);
	} else {
		json_null(j, "samples");
		json_null(j, "top_functions");
	}
	json_obj_begin(j, "calls");
	for (int f = 0; f < it->nfns; f++) {
		char key[600];

		snprintf(key, sizeof(key), "%s:%s", r->uset->libs[r->uset->funcs[it->fns[f].fn].lib].module,
			 fn_name(r, it->fns[f].fn));
		json_obj_begin(j, key);
		json_u64(j, "calls", it->fns[f].calls);
		json_u64(j, "wall_ns", it->fns[f].wall_ns);
		json_u64(j, "oncpu_ns", it->fns[f].oncpu_ns);
		json_obj_end(j);
	}
	json_obj_end(j);
	json_obj_end(j);
}

static int called_fns(const struct iterations *s, unsigned int *ids, int max);

/* fn's calls over every iteration */
static unsigned long long total_calls(const struct iterations *s, unsigned int fn)
{
	unsigned long long n = 0;

	for (size_t k = 0; k < s->n; k++)
		n += iteration_calls(&s->v[k], fn);
	return n;
}

/* the walls' log2 histogram, first to last non-empty bucket */
static void wall_hist_json(const struct iterations *s, struct json *j)
{
	struct log2_hist h;
	int first, last;

	iterations_hist(s, &h);
	json_arr_begin(j, "wall_hist");
	for (int b = 0; log2_hist_span(&h, &first, &last) && b <= last; b++) {
		unsigned long long lo, hi;

		if (b < first)
			continue;
		log2_hist_range(b, &lo, &hi);
		json_obj_begin(j, NULL);
		json_u64(j, "lo_ns", lo);
		json_u64(j, "hi_ns", hi);
		json_u64(j, "count", h.count[b]);
		json_obj_end(j);
	}
	json_arr_end(j);
}

void report_iterations_json(const struct report *r, struct json *j)
{
	unsigned int ids[PERCALL_MAX_FUNCS];
	int nids;
	const struct iterations *s = r->iters;
	struct iter_stats st;

	if (!s) {
		json_null(j, "per_call");
		return;
	}
	iterations_stats(s, &st);
	json_obj_begin(j, "per_call");
	json_str(j, "marker", r->per_call);
	json_u64(j, "iterations", st.n);
	json_u64(j, "open", s->open);
	json_u64(j, "dropped", s->dropped);
	json_u64(j, "lost", s->lost);
	json_u64(j, "samples_lost", s->samples_lost);
	json_u64(j, "wall_ns", st.sum_ns);
	json_u64(j, "p50_ns", st.p50_ns);
	json_u64(j, "p90_ns", st.p90_ns);
	json_u64(j, "p99_ns", st.p99_ns);
	json_u64(j, "max_ns", st.max_ns);
	json_double(j, "per_s", st.per_s);
	wall_hist_json(s, j);
	/* mean calls per iteration, by "library file name:symbol" ('tmabpf diff' iteration.calls[LIB:FUNC]) */
	json_obj_begin(j, "calls");
	nids = called_fns(s, ids, PERCALL_MAX_FUNCS);
	for (int k = 0; k < nids && st.n; k++) {
		char key[600];

		json_double(j, lib_fn_key(r, ids[k], key, sizeof(key)), (double)total_calls(s, ids[k]) / st.n);
	}
	json_obj_end(j);
	json_arr_begin(j, "spin_probes");
	for (int i = 0; r->uset && i < r->uset->nr_funcs; i++)
		if (r->uset->funcs[i].spin) {
			char key[600];

			json_str(j, NULL, lib_fn_key(r, (unsigned int)i, key, sizeof(key)));
		}
	json_arr_end(j);
	json_obj_end(j);
	json_arr_begin(j, "iterations");
	for (size_t k = 0; k < s->n; k++)
		iteration_json(r, j, &s->v[k], k);
	json_arr_end(j);
}

/* probed functions in the spin set */
static int spin_probes(const struct report *r)
{
	int n = 0;

	for (int i = 0; r->uset && i < r->uset->nr_funcs; i++)
		n += r->uset->funcs[i].spin;
	return n;
}

static double ms(unsigned long long ns)
{
	return ns / 1e6;
}

static double pct(unsigned long long part, unsigned long long whole)
{
	return whole ? 100.0 * part / whole : 0.0;
}

/* The function ids called in any iteration (any id: a span's comes as its name does), in id
 * order, at most max; how many. */
static int called_fns(const struct iterations *s, unsigned int *ids, int max)
{
	int n = 0;

	for (size_t k = 0; k < s->n; k++)
		for (int x = 0; x < s->v[k].nfns; x++) {
			int i = 0;

			while (i < n && ids[i] != s->v[k].fns[x].fn)
				i++;
			if (i == n && n < max && s->v[k].fns[x].calls)
				ids[n++] = s->v[k].fns[x].fn;
		}
	qsort(ids, n, sizeof(*ids), sorted_cmp_u32);
	return n;
}

static void print_slowest(const struct report *r, FILE *f, const unsigned int *ids, int nids,
			  const unsigned long long *median)
{
	const struct iterations *s = r->iters;
	size_t idx[SLOWEST], n = iterations_slowest(s, idx, SLOWEST);
	struct iter_stats st;

	iterations_stats(s, &st);
	fprintf(f, "  slowest:\n");
	for (size_t i = 0; i < n; i++) {
		const struct iteration *it = &s->v[idx[i]];
		unsigned long long all = iter_time_total(&it->sum);
		int shown = 0;
		char safe[512];

		fprintf(f, "    #%-5zu tid %-7u %9.3f ms (%+.3f vs p50)  compute %4.1f%% spin %4.1f%% blocked %4.1f%% "
			"runq %4.1f%%", idx[i], it->tid, ms(it->wall_ns), ms(it->wall_ns) - ms(st.p50_ns),
			pct(it->sum.compute_ns, all), pct(it->sum.spin_ns, all), pct(it->sum.blocked_ns, all),
			pct(it->sum.runq_ns, all));
		for (int k = 0; k < nids; k++) {
			unsigned long long c = iteration_calls(it, ids[k]);

			if (c != median[k])
				fprintf(f, "%s %s %llu (median %llu)", shown++ ? "," : "; calls:",
					text_safe(fn_name(r, ids[k]), safe, sizeof(safe)), c, median[k]);
		}
		if (it->sampled && it->samples) {
			fprintf(f, "; top:");
			for (int k = 0; k < it->ntop && k < 3; k++)
				fprintf(f, "%s %s %.0f%%", k ? "," : "", text_safe(it->top[k].symbol, safe, sizeof(safe)),
					pct(it->top[k].samples, it->samples));
		}
		{
			struct thread_stats sums = {};
			char path[256];

			memcpy(sums.c, it->pc, sizeof(sums.c));
			if (!report_tma_path(r, &sums, path, sizeof(path)))
				fprintf(f, "; TMA %s", path);
		}
		fputc('\n', f);
	}
}

/* The top functions over every window (--sample), from the windows' own top lists. */
static void print_top(const struct iterations *s, FILE *f)
{
	struct iter_top all[64], top[ITER_TOP];
	unsigned long long samples = 0;
	int n = 0, nt;
	char safe[512];

	for (size_t k = 0; k < s->n; k++) {
		samples += s->v[k].samples;
		for (int t = 0; t < s->v[k].ntop; t++)
			n = iter_top_add(all, n, 64, s->v[k].top[t].module, s->v[k].top[t].symbol,
					 s->v[k].top[t].samples);
	}
	if (!samples)
		return;
	fprintf(f, "  top functions in them (%llu samples):", samples);
	nt = iter_top_pick(all, n, top, ITER_TOP);
	for (int k = 0; k < nt; k++)
		fprintf(f, "%s %s %.1f%%", k ? "," : "", text_safe(top[k].symbol, safe, sizeof(safe)),
			pct(top[k].samples, samples));
	fputc('\n', f);
}

static void iterations_text(const struct report *r, FILE *f, int width)
{
	const struct iterations *s = r->iters;
	struct iter_time sum = {};
	unsigned int ids[PERCALL_MAX_FUNCS];
	unsigned long long median[PERCALL_MAX_FUNCS];
	struct iter_stats st;
	struct log2_hist h;
	unsigned long long all;
	char safe[512], fit[512];
	int nids;

	if (!s->n) {
		fprintf(f, "per call (%s): no iterations%s\n", r->per_call,
			s->open ? ": the marker was entered but never returned" : ": the marker was never called");
		return;
	}
	iterations_stats(s, &st);
	for (size_t k = 0; k < s->n; k++)
		iter_time_add(&sum, &s->v[k].sum);
	all = iter_time_total(&sum);
	fprintf(f, "per call (%s): %zu iterations, %.2f/s; p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms",
		r->per_call, st.n, st.per_s, ms(st.p50_ns), ms(st.p90_ns), ms(st.p99_ns), ms(st.max_ns));
	if (s->open || s->dropped)
		fprintf(f, " (%llu still open at the end, %llu never returned)", s->open, s->dropped);
	fprintf(f, "\n  process time in them (wall x threads): compute %.1f%%, spin %.1f%%%s, blocked %.1f%%, "
		"runqueue %.1f%%, absent %.1f%%\n", pct(sum.compute_ns, all), pct(sum.spin_ns, all),
		r->samples || spin_probes(r) ? "" : " (no --sample or probed spin function: not measured)", pct(sum.blocked_ns, all), pct(sum.runq_ns, all),
		pct(sum.absent_ns, all));
	fprintf(f, "  wall time per iteration, ns (log2 buckets, as bpftrace's hist()):\n");
	iterations_hist(s, &h);
	log2_hist_print(&h, "  ", f);
	print_top(s, f);
	nids = called_fns(s, ids, PERCALL_MAX_FUNCS);
	if (nids) {
		int nw = width - 4 - 3 * 13 < 40 ? width - 4 - 3 * 13 : 40;

		nw = nw < 16 ? 16 : nw;
		fprintf(f, "  per iteration:%-*s %12s %12s %12s\n", nw - 12, "", "calls", "wall ms", "on-CPU ms");
		for (int k = 0; k < nids; k++) {
			unsigned long long calls = 0, wall = 0, oncpu = 0;

			for (size_t i = 0; i < s->n; i++)
				for (int x = 0; x < s->v[i].nfns; x++)
					if (s->v[i].fns[x].fn == ids[k]) {
						calls += s->v[i].fns[x].calls;
						wall += s->v[i].fns[x].wall_ns;
						oncpu += s->v[i].fns[x].oncpu_ns;
					}
			median[k] = iterations_median_calls(s, ids[k]);
			text_elide_middle(text_safe(fn_name(r, ids[k]), safe, sizeof(safe)), nw, fit, sizeof(fit));
			fprintf(f, "    %s%*s %12.2f %12.3f %12.3f\n", fit, nw - text_columns(fit), "", (double)calls / s->n,
				ms(wall) / s->n, ms(oncpu) / s->n);
		}
	}
	print_slowest(r, f, ids, nids, median);
}

/* A sparkline of walls (8 levels, scaled to the largest). */
static void sparkline(const struct iterations *s, size_t from, char *out, size_t len)
{
	static const char *const level[8] = { "\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587",
					      "\u2588" };
	unsigned long long max = 1;
	size_t o = 0;

	out[0] = 0;
	for (size_t k = from; k < s->n; k++)
		max = s->v[k].wall_ns > max ? s->v[k].wall_ns : max;
	for (size_t k = from; k < s->n && o + 4 < len; k++)
		o += snprintf(out + o, len - o, "%s", level[(s->v[k].wall_ns * 7 + max / 2) / max]);
}

int report_iterations_live(const struct report *r, int last, char *line1, char *line2, size_t len)
{
	const struct iterations *s = r->iters;
	size_t from;
	struct iter_time sum = {};
	struct iter_stats st;
	unsigned long long all;
	char spark[4 * 64 + 1];

	if (!s)
		return 0;
	if (!s->n) {
		snprintf(line1, len, "tokens (%s): none yet", r->per_call);
		line2[0] = 0;
		return 1;
	}
	last = last > 64 ? 64 : last;
	from = s->n > (size_t)last ? s->n - last : 0;
	iterations_stats(s, &st);
	sparkline(s, from, spark, sizeof(spark));
	for (size_t k = from; k < s->n; k++)
		iter_time_add(&sum, &s->v[k].sum);
	all = iter_time_total(&sum);
	snprintf(line1, len, "tokens: %zu (%.2f/s)  last %zu: %s  last %.3f ms  p50 %.3f ms  p99 %.3f ms", s->n, st.per_s,
		 s->n - from, spark, ms(s->v[s->n - 1].wall_ns), ms(st.p50_ns), ms(st.p99_ns));
	snprintf(line2, len, "  their wall x threads: compute %.1f%%  spin %.1f%%  blocked %.1f%%  runqueue %.1f%%  "
		 "absent %.1f%%", pct(sum.compute_ns, all), pct(sum.spin_ns, all), pct(sum.blocked_ns, all),
		 pct(sum.runq_ns, all), pct(sum.absent_ns, all));
	return 1;
}

void report_iterations_text(const struct report *r, FILE *f, int width)
{
	char *buf = NULL, *line, *next;
	size_t len = 0;
	FILE *m;

	if (!r->iters)
		return;
	if (!(m = open_memstream(&buf, &len))) {	/* no memory: as it comes */
		iterations_text(r, f, width);
		return;
	}
	iterations_text(r, m, width);
	fclose(m);
	for (line = buf; line && *line; line = next) {	/* a line wider than width wraps, indented under itself */
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		text_wrap(f, width, (int)strspn(line, " ") + 4, line);
	}
	free(buf);
}
