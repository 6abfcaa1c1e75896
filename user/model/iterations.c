// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* --per-call iterations and their statistics.  See iterations.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/grow.h"
#include "model/iterations.h"

int iterations_add(struct iterations *s, struct iteration *it)
{
	struct iteration *v = grow(s->v, &s->cap, s->n, sizeof(*v), 64);

	if (!v)
		return -ENOMEM;
	s->v = v;
	s->v[s->n++] = *it;
	return 0;
}

int iter_top_add(struct iter_top *v, int n, int max, const char *module, const char *symbol, unsigned int samples)
{
	int i;

	for (i = 0; i < n && (v[i].symbol != symbol || v[i].module != module); i++)
		;
	if (i == n && n < max)
		v[n++] = (struct iter_top){ .module = module, .symbol = symbol };
	if (i < n)
		v[i].samples += samples;
	return n;
}

int iter_top_pick(struct iter_top *v, int n, struct iter_top *out, int want)
{
	int got;

	for (got = 0; got < want; got++) {
		int best = -1;

		for (int i = 0; i < n; i++)
			if (v[i].samples && (best < 0 || v[i].samples > v[best].samples))
				best = i;
		if (best < 0)
			break;
		out[got] = v[best];
		v[best].samples = 0;
	}
	return got;
}

void iterations_free(struct iterations *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].th);
		free(s->v[i].fns);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

void iter_time_add(struct iter_time *to, const struct iter_time *t)
{
	to->compute_ns += t->compute_ns;
	to->spin_ns += t->spin_ns;
	to->blocked_ns += t->blocked_ns;
	to->runq_ns += t->runq_ns;
	to->absent_ns += t->absent_ns;
	to->runtime_ns += t->runtime_ns;
}

unsigned long long iter_time_total(const struct iter_time *t)
{
	return t->compute_ns + t->spin_ns + t->blocked_ns + t->runq_ns + t->absent_ns;
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest value with at least p % of the values at or below it. */
static unsigned long long rank(const unsigned long long *v, size_t n, double p)
{
	size_t k = (size_t)(p / 100.0 * n + 0.999999);

	return v[k ? (k > n ? n : k) - 1 : 0];
}

void iterations_stats(const struct iterations *s, struct iter_stats *st)
{
	unsigned long long *w;

	memset(st, 0, sizeof(*st));
	st->n = s->n;
	if (!s->n || !(w = malloc(s->n * sizeof(*w))))
		return;
	for (size_t i = 0; i < s->n; i++) {
		w[i] = s->v[i].wall_ns;
		st->sum_ns += w[i];
	}
	qsort(w, s->n, sizeof(*w), cmp_ull);
	st->p50_ns = rank(w, s->n, 50);
	st->p90_ns = rank(w, s->n, 90);
	st->p99_ns = rank(w, s->n, 99);
	st->max_ns = w[s->n - 1];
	st->per_s = st->sum_ns ? s->n * 1e9 / st->sum_ns : 0.0;
	free(w);
}

void iterations_hist(const struct iterations *s, struct log2_hist *h)
{
	memset(h, 0, sizeof(*h));
	for (size_t i = 0; i < s->n; i++)
		log2_hist_add(h, s->v[i].wall_ns);
}

static const struct iterations *sort_set;

static int cmp_slower(const void *a, const void *b)
{
	unsigned long long x = sort_set->v[*(const size_t *)a].wall_ns, y = sort_set->v[*(const size_t *)b].wall_ns;

	return x > y ? -1 : x < y;
}

size_t iterations_slowest(const struct iterations *s, size_t *idx, size_t n)
{
	size_t *all = malloc((s->n ? s->n : 1) * sizeof(*all));

	if (!all)
		return 0;
	for (size_t i = 0; i < s->n; i++)
		all[i] = i;
	sort_set = s;
	qsort(all, s->n, sizeof(*all), cmp_slower);
	n = n < s->n ? n : s->n;
	memcpy(idx, all, n * sizeof(*idx));
	free(all);
	return n;
}

unsigned long long iteration_calls(const struct iteration *it, unsigned int fn)
{
	for (int i = 0; i < it->nfns; i++)
		if (it->fns[i].fn == fn)
			return it->fns[i].calls;
	return 0;
}

unsigned long long iterations_median_calls(const struct iterations *s, unsigned int fn)
{
	unsigned long long *c, m;

	if (!s->n || !(c = malloc(s->n * sizeof(*c))))
		return 0;
	for (size_t i = 0; i < s->n; i++)
		c[i] = iteration_calls(&s->v[i], fn);
	qsort(c, s->n, sizeof(*c), cmp_ull);
	m = rank(c, s->n, 50);
	free(c);
	return m;
}
