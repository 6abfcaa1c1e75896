/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Growing an array by doubling: the one copy of the realloc idiom. */
#ifndef TMABPF_GROW_H
#define TMABPF_GROW_H
#include <stdlib.h>

/* v (capacity *cap elements of size bytes) with room for element n: doubled (first elements when
 * empty) when full.  NULL when out of memory: v and *cap are unchanged, v still owned. */
static inline void *grow(void *v, size_t *cap, size_t n, size_t size, size_t first)
{
	size_t c;
	void *p;

	if (n < *cap)
		return v;
	c = *cap ? 2 * *cap : first;
	if (!(p = realloc(v, c * size)))
		return NULL;
	*cap = c;
	return p;
}

#endif
