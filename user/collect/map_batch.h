/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Reading whole BPF maps: bpf_map_lookup_batch in chunks (one syscall per
 * chunk), key by key where the kernel lacks batch operations (said once). */
#ifndef TMABPF_MAP_BATCH_H
#define TMABPF_MAP_BATCH_H
#include <stdbool.h>
#include <stddef.h>

struct map_iter {
	int fd;
	size_t key_size, val_size;	/* val_size: per-CPU maps: round_up(value, 8) * possible CPUs */
	bool started, done, each;	/* each: key-by-key fallback */
	unsigned char token[64];	/* batch position (hash: bucket; array: key) */
	unsigned char last_key[64];	/* key-by-key position */
};

void map_iter_init(struct map_iter *it, int fd, size_t key_size, size_t val_size);
/* Next up to cap entries into keys[]/vals[]; *n == 0 at the end.  0 or -errno.
 * cap must hold the largest hash bucket (-ENOSPC otherwise): use >= 16. */
int map_iter_next(struct map_iter *it, void *keys, void *vals, size_t cap, size_t *n);
/* Every entry, up to cap. */
int map_read_all(int fd, size_t key_size, size_t val_size, void *keys, void *vals, size_t cap, size_t *n);
/* The same into new arrays (malloc'd: the caller frees *keys and *vals; both NULL on error). */
int map_read_new(int fd, size_t key_size, size_t val_size, size_t cap, void **keys, void **vals, size_t *n);
/* Every entry, up to cap, as an array of *n rows of row_size bytes (malloc'd), each the key at
 * offset 0 and the value at val_off; NULL with *err (-errno) set on error. */
void *map_read_rows(int fd, size_t key_size, size_t val_size, size_t val_off, size_t row_size, size_t cap, size_t *n,
		    int *err);

#endif
