/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Hash map from a string (copied in) to a non-NULL pointer, on u64map: a
 * seeded 64-bit hash chains the keys that share it, so crafted keys cost
 * time, never a wrong match. */
#ifndef TMABPF_STRMAP_H
#define TMABPF_STRMAP_H
#include <stddef.h>
#include <stdint.h>
#include "lib/u64map.h"

struct strmap {
	struct u64map by_hash;	/* hash -> chain of entries */
	uint64_t seed;
	size_t n;
};

/* The value stored under key, or NULL. */
void *strmap_get(const struct strmap *m, const char *key);
/* Insert or replace (val not NULL); *stored, when not NULL, gets the map's
 * copy of key (valid until strmap_free).  0 or -ENOMEM. */
int strmap_put(struct strmap *m, const char *key, void *val, const char **stored);
/* The map's copy of key, inserted with val when missing (interning); NULL when out of memory. */
const char *strmap_intern(struct strmap *m, const char *key, void *val);
void strmap_free(struct strmap *m);

#endif
