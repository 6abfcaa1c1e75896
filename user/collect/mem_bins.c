// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Data addresses binned by mapping.  See mem_bins.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collect/mem_bins.h"
#include "lib/grow.h"

struct mem_bins_proc {
	unsigned int pid;
	struct procmaps maps;
	size_t last;		/* bin of the last hit: samples come in runs */
};

static int read_proc_maps(int pid, struct procmaps *out, void *ctx)
{
	char err[256];

	(void)ctx;
	return procmaps_load(pid, out, err, sizeof(err));
}

void mem_bins_init(struct mem_bins *b, mem_maps_reader read, void *ctx)
{
	memset(b, 0, sizeof(*b));
	b->read = read ? read : read_proc_maps;
	b->read_ctx = ctx;
}

static struct mem_bins_proc *proc_get(struct mem_bins *b, unsigned int pid, int *fresh)
{
	*fresh = 0;
	for (size_t i = 0; i < b->nprocs; i++)
		if (b->procs[i].pid == pid)
			return &b->procs[i];
	struct mem_bins_proc *v = grow(b->procs, &b->capprocs, b->nprocs, sizeof(*v), 16);

	if (!v)
		return NULL;
	b->procs = v;
	memset(&b->procs[b->nprocs], 0, sizeof(b->procs[0]));
	b->procs[b->nprocs].pid = pid;
	*fresh = 1;
	return &b->procs[b->nprocs++];
}

static void proc_read(struct mem_bins *b, struct mem_bins_proc *p)
{
	struct procmaps m = {};

	if (b->read((int)p->pid, &m, b->read_ctx) == 0) {
		procmaps_free(&p->maps);
		p->maps = m;
	}
}

void mem_bins_reload(struct mem_bins *b, unsigned int pid)
{
	int fresh;
	struct mem_bins_proc *p = proc_get(b, pid, &fresh);

	if (p)
		proc_read(b, p);
}

void mem_bins_name(const struct procmaps_entry *e, char *buf, size_t len)
{
	const char *base;

	if (e->path && e->path[0] == '[' && strcmp(e->path, "[anon]")) {
		snprintf(buf, len, "%s", !strncmp(e->path, "[stack", 6) ? "[stack]" : e->path);
		return;
	}
	if (e->path && e->path[0] && !(e->flags & PROCMAPS_F_ANON)) {
		base = strrchr(e->path, '/');
		snprintf(buf, len, "%s", base ? base + 1 : e->path);
		return;
	}
	snprintf(buf, len, "[anon:%" PRIx64 "-%" PRIx64 "]", e->start, e->end);
}

static long bin_find(struct mem_bins *b, struct mem_bins_proc *p, uint64_t start, uint64_t end, const char *name)
{
	if (p->last < b->n) {
		struct mem_bin *x = &b->v[p->last];

		if (x->pid == p->pid && x->start == start && x->end == end && !strcmp(x->mapping, name))
			return (long)p->last;
	}
	for (size_t i = 0; i < b->n; i++) {
		struct mem_bin *x = &b->v[i];

		if (x->pid == p->pid && x->start == start && x->end == end && !strcmp(x->mapping, name))
			return (long)i;
	}
	return -1;
}

int mem_bins_add(struct mem_bins *b, unsigned int pid, uint64_t addr)
{
	int fresh;
	struct mem_bins_proc *p = proc_get(b, pid, &fresh);
	const struct procmaps_entry *e;
	uint64_t start = 0, end = 0;
	char name[256];
	long i;

	if (!p)
		return -ENOMEM;
	if (fresh)
		proc_read(b, p);
	e = procmaps_find(&p->maps, addr);
	if (!e && !fresh) {
		b->rereads++;
		proc_read(b, p);	/* mapped since the last read? */
		e = procmaps_find(&p->maps, addr);
	}
	if (e) {
		start = e->start;
		end = e->end;
		mem_bins_name(e, name, sizeof(name));
	} else {
		snprintf(name, sizeof(name), "[unmapped]");
	}
	i = bin_find(b, p, start, end, name);
	if (i < 0) {
		struct mem_bin *x;

		struct mem_bin *v = grow(b->v, &b->cap, b->n, sizeof(*v), 64);

		if (!v)
			return -ENOMEM;
		b->v = v;
		x = &b->v[b->n];
		*x = (struct mem_bin){ .pid = pid, .start = start, .end = end, .mapping = strdup(name),
				       .addr_min = addr, .addr_max = addr };
		if (!x->mapping)
			return -ENOMEM;
		i = (long)b->n++;
	}
	p->last = (size_t)i;
	b->v[i].count++;
	if (addr < b->v[i].addr_min)
		b->v[i].addr_min = addr;
	if (addr > b->v[i].addr_max)
		b->v[i].addr_max = addr;
	return 0;
}

static int cmp_count_desc(const void *a, const void *b)
{
	const struct mem_bin *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

void mem_bins_sort(struct mem_bins *b)
{
	qsort(b->v, b->n, sizeof(*b->v), cmp_count_desc);
	for (size_t i = 0; i < b->nprocs; i++)
		b->procs[i].last = 0;
}

void mem_bins_free(struct mem_bins *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->v[i].mapping);
	for (size_t i = 0; i < b->nprocs; i++)
		procmaps_free(&b->procs[i].maps);
	free(b->v);
	free(b->procs);
	memset(b, 0, sizeof(*b));
}
