/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A --trace record ring (span records, thread-state records) added to the run's ring buffer
 * manager: each record of at least `size` bytes goes to record(), a shorter one is counted bad. */
#ifndef TMABPF_TRACE_RING_H
#define TMABPF_TRACE_RING_H
#include <stddef.h>

struct ring_buffer;
struct ring;

struct trace_ring_sink {
	size_t size;				/* a record's size */
	void (*record)(void *self, const void *rec);
	void *self;
	unsigned long long *bad;		/* records too short */
};

/* Add the ring of map_fd to rb, its records to sink (which must outlive rb's use); the ring, or NULL
 * with *err a negative errno. */
struct ring *trace_ring_add(struct ring_buffer *rb, int map_fd, struct trace_ring_sink *sink, int *err);

#endif
