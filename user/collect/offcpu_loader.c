// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <errno.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collect/bpf_util.h"
#include "collect/map_batch.h"
#include "collect/offcpu_loader.h"
#include "lib/warn.h"
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
	if (r)
		return bpf_load_error(r, err, errlen, "loading the off-CPU program", &stacks_hints);
	if (!(p->rb = ringbuf_open(bpf_map__fd(p->skel->maps.offcpu_notices), on_notice, p, "off-CPU", err, errlen)))
		return -errno;
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
	int r;

	*rows = map_read_rows(bpf_map__fd(p->skel->maps.offcpu), sizeof(struct offcpu_key), sizeof(struct offcpu_val),
			      offsetof(struct offcpu_row, v), sizeof(struct offcpu_row), (size_t)p->max_rows, n, &r);
	return r;
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
	memset(st, 0, OFFCPU_STAT_MAX * sizeof(*st));
	stat_map_sum(bpf_map__fd(p->skel->maps.offcpu_stats), OFFCPU_STAT_MAX, st);
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
