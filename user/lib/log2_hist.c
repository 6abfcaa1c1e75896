// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* A power-of-two histogram, as bpftrace's hist() (log2_hist.h). */
#include <string.h>
#include "lib/log2_hist.h"

int log2_hist_bucket(unsigned long long v)
{
	return v ? 64 - __builtin_clzll(v) : 0;
}

void log2_hist_add(struct log2_hist *h, unsigned long long v)
{
	h->count[log2_hist_bucket(v)]++;
}

void log2_hist_range(int b, unsigned long long *lo, unsigned long long *hi)
{
	*lo = b ? 1ULL << (b - 1) : 0;
	*hi = b <= 1 ? *lo : b == 64 ? ~0ULL : (1ULL << b) - 1;
}

int log2_hist_span(const struct log2_hist *h, int *first, int *last)
{
	*first = *last = -1;
	for (int b = 0; b < LOG2_HIST_BUCKETS; b++)
		if (h->count[b]) {
			if (*first < 0)
				*first = b;
			*last = b;
		}
	return *first >= 0;
}

/* 2^p as bpftrace writes it: 512, 1K, 2M */
static void power_label(int p, char *buf, size_t len)
{
	static const char suffix[] = " KMGTPE";

	if (p < 10)
		snprintf(buf, len, "%llu", 1ULL << p);
	else
		snprintf(buf, len, "%llu%c", 1ULL << (p % 10), suffix[p / 10]);
}

void log2_hist_label(int b, char *buf, size_t len)
{
	char lo[16], hi[16];

	if (b <= 1) {
		snprintf(buf, len, "[%d]", b);
		return;
	}
	power_label(b - 1, lo, sizeof(lo));
	power_label(b, hi, sizeof(hi));
	snprintf(buf, len, "[%s, %s)", lo, hi);
}

void log2_hist_print(const struct log2_hist *h, const char *indent, FILE *f)
{
	unsigned long long max = 0;
	int first, last;

	if (!log2_hist_span(h, &first, &last))
		return;
	for (int b = first; b <= last; b++)
		max = h->count[b] > max ? h->count[b] : max;
	for (int b = first; b <= last; b++) {
		char label[40], bar[LOG2_HIST_BAR + 1];
		int n = (int)((h->count[b] * LOG2_HIST_BAR + max / 2) / max);

		memset(bar, '@', n);
		bar[n] = 0;
		log2_hist_label(b, label, sizeof(label));
		fprintf(f, "%s%-16s %8llu |%-*s|\n", indent, label, h->count[b], LOG2_HIST_BAR, bar);
	}
}
