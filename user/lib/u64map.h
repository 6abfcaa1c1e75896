/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Open-addressing hash map from a 64-bit key to a pointer; shrinks as it empties
 * so that a burst of entries does not pin memory (the daemon's tables). */
#ifndef TMABPF_U64MAP_H
#define TMABPF_U64MAP_H
#include <stddef.h>
#include <stdint.h>

struct u64map {
	uint64_t *keys;
	void **vals;		/* NULL: free slot */
	size_t cap;		/* power of two, or 0 */
	size_t n;
};

/* The value stored for key, or NULL. */
void *u64map_get(const struct u64map *m, uint64_t key);
/* Insert or replace (val must not be NULL); 0 or -ENOMEM. */
int u64map_put(struct u64map *m, uint64_t key, void *val);
/* Remove key; returns its value or NULL. */
void *u64map_del(struct u64map *m, uint64_t key);
void u64map_free(struct u64map *m);
/* Iterate: for (size_t i = 0; i < m->cap; i++) if (m->vals[i]) ... ; do not
 * insert or delete while iterating (collect first). */

#endif
