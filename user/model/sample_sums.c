// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Sampled-function rows: merge, per process, since a snapshot.  See sample_sums.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "model/counters.h"
#include "model/sample_sums.h"

int sample_func_cmp(const void *a, const void *b)
{
	const struct sample_func *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->module != y->module)
		return (uintptr_t)x->module < (uintptr_t)y->module ? -1 : 1;
	if (x->symbol != y->symbol)
		return (uintptr_t)x->symbol < (uintptr_t)y->symbol ? -1 : 1;
	return 0;
}

static int cmp_count_desc(const void *a, const void *b)
{
	const struct sample_func *x = a, *y = b;
	int c;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if ((c = strcmp(x->symbol, y->symbol)))
		return c;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

size_t sample_funcs_merge(struct sample_func *v, size_t n, int nr_events)
{
	size_t out = 0;

	qsort(v, n, sizeof(*v), sample_func_cmp);
	for (size_t i = 0; i < n; i++) {
		if (out && !sample_func_cmp(&v[out - 1], &v[i])) {
			struct sample_func *d = &v[out - 1];

			d->count += v[i].count;
			d->period += v[i].period;
			counters_add(d->c, v[i].c, nr_events);
			for (int e = 0; e < nr_events; e++)
				d->ev_samples[e] += v[i].ev_samples[e];
			continue;
		}
		v[out++] = v[i];
	}
	return out;
}

/* Per-thread rows (sorted by key) -> per-process rows, named after the
 * main thread when it was sampled. */
static size_t per_process(const struct sample_func *thr, size_t n, struct sample_func *out, int nr_events)
{
	struct { unsigned int pid; const char *comm; } *names = calloc(n ? n : 1, sizeof(*names));
	size_t k, nn = 0, j = 0;

	for (size_t i = 0; names && i < n; i++) {
		if (!nn || names[nn - 1].pid != thr[i].pid)
			names[nn++].pid = thr[i].pid;
		if (!names[nn - 1].comm && thr[i].tid == (long long)thr[i].pid)
			names[nn - 1].comm = thr[i].comm;
	}
	for (size_t i = 0; i < n; i++) {
		out[i] = thr[i];
		out[i].tid = -1;
	}
	k = sample_funcs_merge(out, n, nr_events);	/* sorted by pid first, like thr */
	for (size_t i = 0; names && i < k; i++) {
		while (j < nn && names[j].pid < out[i].pid)
			j++;
		if (j < nn && names[j].pid == out[i].pid && names[j].comm)
			memcpy(out[i].comm, names[j].comm, sizeof(out[i].comm));
	}
	free(names);
	return k;
}

int sample_result_fill(struct sample_result *res, const struct sample_func *thr, size_t nthr, int nev)
{
	struct sample_func *all = calloc(2 * nthr + 1, sizeof(*all));

	if (!all)
		return -ENOMEM;
	res->nprocs = per_process(thr, nthr, all, nev);
	qsort(all, res->nprocs, sizeof(*all), cmp_count_desc);
	memcpy(all + res->nprocs, thr, nthr * sizeof(*thr));
	qsort(all + res->nprocs, nthr, sizeof(*all), cmp_count_desc);
	res->funcs = all;
	res->nfuncs = res->nprocs + nthr;
	return 0;
}

static int cmp_caller(const void *a, const void *b)
{
	const struct sample_caller *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->module != y->module)
		return (uintptr_t)x->module < (uintptr_t)y->module ? -1 : 1;
	if (x->symbol != y->symbol)
		return (uintptr_t)x->symbol < (uintptr_t)y->symbol ? -1 : 1;
	if (x->caller != y->caller)
		return (uintptr_t)x->caller < (uintptr_t)y->caller ? -1 : 1;
	return 0;
}

static int cmp_caller_count(const void *a, const void *b)
{
	const struct sample_caller *x = a, *y = b;
	struct sample_caller xf = *x, yf = *y;
	int c;

	xf.caller = yf.caller = NULL;	/* the function first, then its callers by count */
	if ((c = cmp_caller(&xf, &yf)))
		return c;
	return x->count > y->count ? -1 : x->count < y->count ? 1 : cmp_caller(x, y);
}

size_t sample_callers_merge(struct sample_caller *v, size_t n)
{
	size_t out = 0;

	qsort(v, n, sizeof(*v), cmp_caller);
	for (size_t i = 0; i < n; i++) {
		if (out && !cmp_caller(&v[out - 1], &v[i]))
			v[out - 1].count += v[i].count;
		else
			v[out++] = v[i];
	}
	qsort(v, out, sizeof(*v), cmp_caller_count);
	return out;
}

int sample_funcs_since(const struct sample_result *cur, const struct sample_func *prev, size_t nprev, int nev,
		       struct sample_result *out)
{
	struct sample_func *d = malloc((cur->nfuncs ? cur->nfuncs : 1) * sizeof(*d));
	size_t n = 0;
	int r;

	*out = (struct sample_result){ .event = cur->event, .hz = cur->hz, .cpu_clock = cur->cpu_clock,
				       .events = cur->events };
	if (!d)
		return -ENOMEM;
	for (size_t i = 0; i < cur->nfuncs; i++) {
		const struct sample_func *p = prev ? bsearch(&cur->funcs[i], prev, nprev, sizeof(*prev), sample_func_cmp) : NULL;

		d[n] = cur->funcs[i];
		if (p) {
			if (d[n].count <= p->count)
				continue;	/* no new samples */
			d[n].count -= p->count;
			d[n].period = d[n].period > p->period ? d[n].period - p->period : 0;
			counters_sub(d[n].c, p->c, nev);
			for (int e = 0; e < nev; e++)
				d[n].ev_samples[e] -= p->ev_samples[e] < d[n].ev_samples[e] ? p->ev_samples[e] :
						      d[n].ev_samples[e];
		}
		if (d[n].count)
			out->samples += d[n++].count;
	}
	r = sample_result_fill(out, d, n, nev);
	free(d);
	return r;
}

double sample_func_ns(const struct sample_result *r, const struct sample_func *f)
{
	if (r->cpu_clock)
		return (double)f->period;
	return r->hz > 0 ? (double)f->count * 1e9 / r->hz : 0.0;
}
