/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * log2_hist: a power-of-two histogram as bpftrace's hist() makes and prints
 * it: bucket 0 holds 0, bucket 1 holds 1, bucket k >= 2 holds [2^(k-1), 2^k);
 * labels "[0]", "[1]", "[2, 4)", ..., "[1K, 2K)", "[4M, 8M)" (K, M, G, T,
 * P, E: powers of 1024); rows from the first to the last non-empty bucket,
 * each a bar of '@' scaled to the largest count (LOG2_HIST_BAR wide: 40, not
 * bpftrace's 52, so that a row fits 80 columns).
 */
#ifndef TMABPF_LOG2_HIST_H
#define TMABPF_LOG2_HIST_H
#include <stdio.h>

#define LOG2_HIST_BUCKETS 65
#define LOG2_HIST_BAR 40

struct log2_hist {
	unsigned long long count[LOG2_HIST_BUCKETS];
};

int log2_hist_bucket(unsigned long long v);
void log2_hist_add(struct log2_hist *h, unsigned long long v);
/* The bucket's values: [*lo, *hi], both included. */
void log2_hist_range(int b, unsigned long long *lo, unsigned long long *hi);
/* The first and last non-empty buckets; 0 when the histogram is empty. */
int log2_hist_span(const struct log2_hist *h, int *first, int *last);
/* bpftrace's label of bucket b ("[4K, 8K)"). */
void log2_hist_label(int b, char *buf, size_t len);
/* The rows, each after indent. */
void log2_hist_print(const struct log2_hist *h, const char *indent, FILE *f);

#endif
