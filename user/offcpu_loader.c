// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "offcpu_loader.h"
#include "warn.h"
#include "threads.skel.h"
#include "offcpu.skel.h"

static int on_notice(void *ctx, void *data, size_t size)
{
	struct offcpu_prog *p = ctx;

	if (size >= sizeof(struct offcpu_key) && p->on_notice)
		p->on_notice(p->ctx, data);
	return 0;
}

int offcpu_prog_load(struct offcpu_prog *p, struct threads_prog *tp, int max_rows, offcpu_notice_fn fn, void *ctx,
		     char *err, size_t errlen)
{
	int r;

	memset(p, 0, sizeof(*p));
	p->max_rows = max_rows;
	p->on_notice = fn;
	p->ctx = ctx;
	p->skel = offcpu_bpf__open();
	if (!p->skel) {
		r = -errno;
		err_set(err, errlen, "opening the off-CPU program: %s", strerror(-r));
		return r;
	}
	p->skel->rodata->account_cfg = tp->acfg;
	bpf_map__set_max_entries(p->skel->maps.offcpu_start, tp->max_threads);
	bpf_map__set_max_entries(p->skel->maps.offcpu, max_rows);
	bpf_map__set_max_entries(p->skel->maps.offcpu_stacks, max_rows);
	r = threads_share_maps(tp, p->skel->obj);
	if (!r)
		r = offcpu_bpf__load(p->skel);
	if (r) {
		err_set(err, errlen, "loading the off-CPU program: %s (%s)", strerror(-r),
			 r == -E2BIG || r == -ENOMEM ? "maps too large: lower --max-sample-stacks"
						     : "rerun with --verbose for libbpf's log");
		return r;
	}
	p->rb = ring_buffer__new(bpf_map__fd(p->skel->maps.offcpu_notices), on_notice, p, NULL);
	if (!p->rb) {
		r = -errno;
		err_set(err, errlen, "creating the off-CPU ring buffer: %s", strerror(-r));
		return r;
	}
	return 0;
}

int offcpu_prog_attach(struct offcpu_prog *p, char *err, size_t errlen)
{
	struct bpf_program *progs[3] = { p->skel->progs.tmabpf_offcpu_switch, p->skel->progs.tmabpf_offcpu_exit,
					 p->skel->progs.tmabpf_offcpu_exec };

	for (int i = 0; i < 3; i++) {
		p->links[i] = bpf_program__attach(progs[i]);
		if (!p->links[i]) {
			int r = -errno;

			err_set(err, errlen, "attaching %s for --offcpu-stacks: %s", bpf_program__name(progs[i]),
				 strerror(-r));
			return r;
		}
	}
	return 0;
}

void offcpu_prog_poll(struct offcpu_prog *p)
{
	if (p->rb)
		ring_buffer__consume(p->rb);
}

int offcpu_prog_read(struct offcpu_prog *p, struct offcpu_row **rows, size_t *n)
{
	int fd = bpf_map__fd(p->skel->maps.offcpu);
	struct offcpu_key k, prev;
	struct offcpu_row *v = calloc(p->max_rows ? p->max_rows : 1, sizeof(*v));
	bool first = true;

	*rows = v;
	*n = 0;
	if (!v)
		return -ENOMEM;
	while (*n < (size_t)p->max_rows && bpf_map_get_next_key(fd, first ? NULL : &prev, &k) == 0) {
		if (bpf_map_lookup_elem(fd, &k, &v[*n].v) == 0)
			v[(*n)++].key = k;
		prev = k;
		first = false;
	}
	return 0;
}

int offcpu_prog_stack(struct offcpu_prog *p, int id, struct stack_frames *f)
{
	__u64 ip[TMABPF_STACK_DEPTH] = {};

	f->nr = 0;
	if (id < 0 || bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.offcpu_stacks), &id, ip))
		return -ENOENT;
	while (f->nr < TMABPF_STACK_DEPTH && ip[f->nr]) {
		f->ip[f->nr] = ip[f->nr];
		f->nr++;
	}
	return 0;
}

void offcpu_prog_stats(struct offcpu_prog *p, unsigned long long st[OFFCPU_STAT_MAX])
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(p->skel->maps.offcpu_stats);
	__u64 *v = calloc(ncpu > 0 ? ncpu : 1, sizeof(*v));

	for (__u32 slot = 0; slot < OFFCPU_STAT_MAX; slot++) {
		st[slot] = 0;
		if (v && ncpu > 0 && bpf_map_lookup_elem(fd, &slot, v) == 0)
			for (int c = 0; c < ncpu; c++)
				st[slot] += v[c];
	}
	free(v);
}

void offcpu_prog_detach(struct offcpu_prog *p)
{
	for (int i = 0; i < 3; i++) {
		bpf_link__destroy(p->links[i]);
		p->links[i] = NULL;
	}
}

void offcpu_prog_destroy(struct offcpu_prog *p)
{
	offcpu_prog_detach(p);
	ring_buffer__free(p->rb);
	p->rb = NULL;
	offcpu_bpf__destroy(p->skel);
	p->skel = NULL;
}
