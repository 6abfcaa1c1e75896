// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "collect/map_batch.h"
#include "lib/warn.h"

void map_iter_init(struct map_iter *it, int fd, size_t key_size, size_t val_size)
{
	memset(it, 0, sizeof(*it));
	it->fd = fd;
	it->key_size = key_size;
	it->val_size = val_size;
}

static void note_fallback(int err)
{
	static bool noted;

	if (noted)
		return;
	noted = true;
	warn_add("this kernel lacks BPF batch map lookups (%s): reading maps key by key (slower refreshes)",
		 strerror(err));
}

static int next_each(struct map_iter *it, unsigned char *keys, unsigned char *vals, size_t cap, size_t *n)
{
	unsigned char next[64];

	while (*n < cap) {
		if (bpf_map_get_next_key(it->fd, it->started ? it->last_key : NULL, next)) {
			it->done = true;
			return errno == ENOENT ? 0 : -errno;
		}
		it->started = true;
		memcpy(it->last_key, next, it->key_size);
		if (bpf_map_lookup_elem(it->fd, next, vals + *n * it->val_size))
			continue;	/* deleted meanwhile */
		memcpy(keys + *n * it->key_size, next, it->key_size);
		(*n)++;
	}
	return 0;
}

/* TMABPF_TEST_NO_BATCH=1: tests take the key-by-key path kernels without batch ops need. */
static int lookup_batch(struct map_iter *it, void *keys, void *vals, __u32 *count)
{
	static int force = -1;

	if (force < 0)
		force = getenv("TMABPF_TEST_NO_BATCH") != NULL;
	if (force) {
		errno = EOPNOTSUPP;
		return -1;
	}
	return bpf_map_lookup_batch(it->fd, it->started ? it->token : NULL, it->token, keys, vals, count, NULL);
}

int map_iter_next(struct map_iter *it, void *keys, void *vals, size_t cap, size_t *n)
{
	__u32 count = (__u32)cap;
	int r;

	*n = 0;
	if (it->done || !cap)
		return 0;
	if (it->key_size > sizeof(it->token))
		return -EINVAL;
	if (it->each)
		return next_each(it, keys, vals, cap, n);
	r = lookup_batch(it, keys, vals, &count);
	if (r && !it->started && (errno == EINVAL || errno == ENOTSUP || errno == EOPNOTSUPP)) {
		note_fallback(errno);
		it->each = true;
		return next_each(it, keys, vals, cap, n);
	}
	it->started = true;
	*n = count;
	if (r) {
		it->done = true;
		return errno == ENOENT ? 0 : -errno;
	}
	return 0;
}

int map_read_all(int fd, size_t key_size, size_t val_size, void *keys, void *vals, size_t cap, size_t *n)
{
	struct map_iter it;
	size_t got;
	int r = 0;

	map_iter_init(&it, fd, key_size, val_size);
	*n = 0;
	while (*n < cap) {
		r = map_iter_next(&it, (unsigned char *)keys + *n * key_size, (unsigned char *)vals + *n * val_size,
				  cap - *n, &got);
		*n += got;
		if (r || it.done)
			break;
	}
	return r;
}

int map_read_new(int fd, size_t key_size, size_t val_size, size_t cap, void **keys, void **vals, size_t *n)
{
	int r;

	*n = 0;
	*keys = calloc(cap ? cap : 1, key_size);
	*vals = calloc(cap ? cap : 1, val_size);
	r = *keys && *vals ? map_read_all(fd, key_size, val_size, *keys, *vals, cap, n) : -ENOMEM;
	if (r) {
		free(*keys);
		free(*vals);
		*keys = *vals = NULL;
		*n = 0;
	}
	return r;
}

void *map_read_rows(int fd, size_t key_size, size_t val_size, size_t val_off, size_t row_size, size_t cap, size_t *n,
		    int *err)
{
	void *keys, *vals;
	unsigned char *rows;

	*err = map_read_new(fd, key_size, val_size, cap, &keys, &vals, n);
	rows = *err ? NULL : calloc(*n ? *n : 1, row_size);
	for (size_t i = 0; rows && i < *n; i++) {
		memcpy(rows + i * row_size, (unsigned char *)keys + i * key_size, key_size);
		memcpy(rows + i * row_size + val_off, (unsigned char *)vals + i * val_size, val_size);
	}
	free(keys);
	free(vals);
	if (!*err && !rows)
		*err = -ENOMEM;
	if (*err)
		*n = 0;
	return rows;
}
