// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* A --trace record ring in the run's ring buffer manager (see trace_ring.h). */
#include <errno.h>
#include <bpf/libbpf.h>
#include "trace/trace_ring.h"

static int on_sample(void *ctx, void *data, size_t size)
{
	struct trace_ring_sink *k = ctx;

	if (size < k->size)
		(*k->bad)++;
	else
		k->record(k->self, data);
	return 0;
}

struct ring *trace_ring_add(struct ring_buffer *rb, int map_fd, struct trace_ring_sink *sink, int *err)
{
	struct ring *r;

	if (ring_buffer__add(rb, map_fd, on_sample, sink)) {
		*err = -errno;
		return NULL;
	}
	for (unsigned int i = 0; (r = ring_buffer__ring(rb, i)); i++)
		if (ring__map_fd(r) == map_fd)
			return r;
	*err = -ENOENT;
	return NULL;
}
