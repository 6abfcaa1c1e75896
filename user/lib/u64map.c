// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include "lib/u64map.h"

#define MIN_CAP 16

static size_t slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;	/* murmur3 finaliser */
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

void *u64map_get(const struct u64map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (!m->vals[i])
			return NULL;
		if (m->keys[i] == key)
			return m->vals[i];
	}
}

static void put_nogrow(struct u64map *m, uint64_t key, void *val)
{
	size_t i = slot_of(key, m->cap);

	while (m->vals[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	if (!m->vals[i])
		m->n++;
	m->keys[i] = key;
	m->vals[i] = val;
}

static int resize(struct u64map *m, size_t cap)
{
	struct u64map nm = { .cap = cap };

	nm.keys = malloc(cap * sizeof(*nm.keys));
	nm.vals = calloc(cap, sizeof(*nm.vals));
	if (!nm.keys || !nm.vals) {
		free(nm.keys);
		free(nm.vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->vals[i])
			put_nogrow(&nm, m->keys[i], m->vals[i]);
	free(m->keys);
	free(m->vals);
	*m = nm;
	return 0;
}

int u64map_put(struct u64map *m, uint64_t key, void *val)
{
	if ((m->n + 1) * 4 > m->cap * 3) {	/* load <= 3/4 */
		int r = resize(m, m->cap ? m->cap * 2 : MIN_CAP);

		if (r)
			return r;
	}
	put_nogrow(m, key, val);
	return 0;
}

void *u64map_del(struct u64map *m, uint64_t key)
{
	size_t i, j, k;
	void *val;

	if (!m->cap)
		return NULL;
	for (i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (!m->vals[i])
			return NULL;
		if (m->keys[i] == key)
			break;
	}
	val = m->vals[i];
	m->vals[i] = NULL;
	m->n--;
	/* backward-shift deletion: move later members of the probe run into the hole */
	for (j = (i + 1) & (m->cap - 1); m->vals[j]; j = (j + 1) & (m->cap - 1)) {
		k = slot_of(m->keys[j], m->cap);
		if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			m->vals[j] = NULL;
			i = j;
		}
	}
	if (m->cap > MIN_CAP && m->n * 8 < m->cap)
		resize(m, m->cap / 2);	/* best effort: a failed shrink keeps the bigger table */
	return val;
}

void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = NULL;
	m->vals = NULL;
	m->cap = m->n = 0;
}
