// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include "lib/strmap.h"

struct strmap_entry {
	struct strmap_entry *next;	/* same hash */
	void *val;
	char key[];
};

static uint64_t hash(const struct strmap *m, const char *s)
{
	uint64_t h = 1469598103934665603ULL ^ m->seed;	/* FNV-1a, seeded */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static struct strmap_entry *find(const struct strmap *m, const char *key)
{
	struct strmap_entry *e = u64map_get(&m->by_hash, hash(m, key));

	while (e && strcmp(e->key, key))
		e = e->next;
	return e;
}

void *strmap_get(const struct strmap *m, const char *key)
{
	struct strmap_entry *e = m->n ? find(m, key) : NULL;

	return e ? e->val : NULL;
}

int strmap_put(struct strmap *m, const char *key, void *val, const char **stored)
{
	struct strmap_entry *e, *head;
	size_t len = strlen(key);
	uint64_t h;

	if (!m->n && !m->by_hash.cap && getrandom(&m->seed, sizeof(m->seed), GRND_NONBLOCK) != sizeof(m->seed))
		m->seed = (uint64_t)(uintptr_t)m;
	if ((e = find(m, key))) {
		e->val = val;
		goto out;
	}
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return -ENOMEM;
	memcpy(e->key, key, len + 1);
	e->val = val;
	h = hash(m, key);
	head = u64map_get(&m->by_hash, h);
	e->next = head;
	if (u64map_put(&m->by_hash, h, e)) {
		free(e);
		return -ENOMEM;
	}
	m->n++;
out:
	if (stored)
		*stored = e->key;
	return 0;
}

const char *strmap_intern(struct strmap *m, const char *key, void *val)
{
	struct strmap_entry *e = m->n ? find(m, key) : NULL;
	const char *stored = NULL;

	if (e)
		return e->key;
	return strmap_put(m, key, val, &stored) ? NULL : stored;
}

void strmap_free(struct strmap *m)
{
	for (size_t i = 0; i < m->by_hash.cap; i++)
		for (struct strmap_entry *e = m->by_hash.vals[i], *next; e; e = next) {
			next = e->next;
			free(e);
		}
	u64map_free(&m->by_hash);
	memset(m, 0, sizeof(*m));
}
