// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The Prometheus text writer (label escaping, UTF-8 repair, number format) and
 * the daemon's hash map (against a plain array under random inserts/deletes,
 * shrinking after a burst).
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "lib/prom.h"
#include "lib/u64map.h"

static char *render(void (*fn)(FILE *, const void *), const void *arg)
{
	static char buf[4096];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	fn(f, arg);
	fclose(f);
	return buf;
}

static void label(FILE *f, const void *v)
{
	prom_label_value(f, v);
}

static void value(FILE *f, const void *v)
{
	prom_value(f, *(const double *)v);
}

static void sample(FILE *f, const void *v)
{
	const char *labels[] = { "comm", "x\"y", "pid", NULL, "cgroup", "/a", NULL };

	prom_sample(f, "m_total", labels, 3);
	prom_sample(f, "plain", NULL, 0.5);
}

static void family(FILE *f, const void *v)
{
	prom_family(f, "m_total", "counter", "a\\b\nc");
}

static const char *val(double v)
{
	return render(value, &v);
}

static void test_prom(void)
{
	check(!strcmp(render(label, "plain"), "plain"), "plain label value unchanged");
	check(!strcmp(render(label, "a\"b\\c\nd"), "a\\\"b\\\\c\\nd"), "quote, backslash, newline escaped");
	check(!strcmp(render(label, "d\xff"), "d\xef\xbf\xbd"), "invalid byte replaced by U+FFFD");
	check(!strcmp(render(label, "\x1b]52;c;eA==\x07\x1b[2J\t\x7f\xc2\x9b"), "?]52;c;eA==??[2J???"),
	      "control bytes (ESC, BEL, tab, DEL, C1 CSI) become '?' (%s)", render(label, "\x1b]52;c;eA==\x07\x1b[2J\t\x7f\xc2\x9b"));
	check(!strcmp(render(label, "\xc3\xa9t\xc3"), "\xc3\xa9t\xef\xbf\xbd"), "valid UTF-8 kept, truncated sequence replaced");
	check(!strcmp(render(label, "\xe2\x82\xac\xf0\x9f\x98\x80"), "\xe2\x82\xac\xf0\x9f\x98\x80"), "3- and 4-byte sequences kept");
	check(!strcmp(render(label, "\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd"), "overlong encoding rejected");
	check(!strcmp(render(label, "\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"), "surrogate rejected");
	check(!strcmp(val(0), "0") && !strcmp(val(42), "42") && !strcmp(val(-3), "-3"), "integers plain");
	check(!strcmp(val(0.1), "0.1") && !strcmp(val(1.5e-9), "1.5e-09"), "shortest exact decimals (%s)", val(0.1));
	check(strtod(val(1.0 / 3), NULL) == 1.0 / 3, "round-trips exactly (%s)", val(1.0 / 3));
	check(!strcmp(val(NAN), "NaN") && !strcmp(val(INFINITY), "+Inf") && !strcmp(val(-INFINITY), "-Inf"),
	      "NaN and infinities as Prometheus spells them");
	check(!strcmp(val(1e20), "1e+20"), "big numbers with an exponent (%s)", val(1e20));
	check(!strcmp(render(sample, NULL), "m_total{comm=\"x\\\"y\",cgroup=\"/a\"} 3\nplain 0.5\n"),
	      "sample lines, NULL label values left out (%s)", render(sample, NULL));
	check(!strcmp(render(family, NULL), "# HELP m_total a\\\\b\\nc\n# TYPE m_total counter\n"), "HELP escaped, TYPE line");
}

static void test_map(void)
{
	enum { N = 20000 };
	static int present[N];
	struct u64map m = {};
	unsigned int seed = 7;
	bool ok = true;
	size_t n = 0, peak_cap;

	for (int round = 0; round < 200000; round++) {
		seed = seed * 1103515245u + 12345u;
		uint64_t k = (seed >> 8) % N;
		void *v = (void *)(uintptr_t)(k + 1);

		if ((seed >> 4) & 1) {
			if (!present[k])
				n++;
			present[k] = 1;
			u64map_put(&m, k * 0x9e3779b97f4a7c15ULL, v);
		} else {
			void *got = u64map_del(&m, k * 0x9e3779b97f4a7c15ULL);

			if ((got != NULL) != (present[k] != 0) || (got && got != v))
				ok = false;
			if (present[k])
				n--;
			present[k] = 0;
		}
	}
	for (int k = 0; k < N; k++) {
		void *got = u64map_get(&m, k * 0x9e3779b97f4a7c15ULL);

		if ((got != NULL) != (present[k] != 0) || (got && got != (void *)(uintptr_t)(k + 1)))
			ok = false;
	}
	check(ok && m.n == n, "200k random puts/dels agree with a plain array (%zu entries)", m.n);
	peak_cap = m.cap;
	for (int k = 0; k < N; k++)
		u64map_del(&m, k * 0x9e3779b97f4a7c15ULL);
	check(m.n == 0 && m.cap <= 32 && m.cap < peak_cap, "emptied map shrinks (cap %zu from %zu)", m.cap, peak_cap);
	check(u64map_get(&m, 5) == NULL && u64map_del(&m, 5) == NULL, "lookups in an empty map");
	u64map_free(&m);
}

int main(void)
{
	test_prom();
	test_map();
	return check_exit();
}
