/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Searching sorted arrays: the one binary search of the symbol tables, and the u32 and double comparators. */
#ifndef TMABPF_SORTED_H
#define TMABPF_SORTED_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* How many elements of base[0..n) (stride bytes each, sorted by the u64 at byte offset off) hold an
 * address <= addr: the index after the last one that starts at or before addr. */
static inline size_t sorted_count_le(const void *base, size_t n, size_t stride, size_t off, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t a;

		memcpy(&a, (const char *)base + mid * stride + off, sizeof(a));
		if (a <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* qsort/bsearch comparator of uint32_t (thread ids). */
static inline int sorted_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* qsort comparator of doubles (no NaN). */
static inline int sorted_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The same on an array of structs by field: SORTED_COUNT_LE(syms, n, addr, x). */
#define SORTED_COUNT_LE(arr, n, field, x) \
	sorted_count_le((arr), (n), sizeof(*(arr)), offsetof(__typeof__(*(arr)), field), (x))

#endif
