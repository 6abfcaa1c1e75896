/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Loader for bpf/offcpu.bpf.c (--offcpu-stacks): the sched_switch program
 * sharing the spine's thread filter, and reading back its rows and stacks. */
#ifndef TMABPF_OFFCPU_LOADER_H
#define TMABPF_OFFCPU_LOADER_H
#include <stddef.h>
#include "bpf/offcpu_rows.h"
#include "collect/threads_loader.h"

struct offcpu_bpf;
struct bpf_link;
struct ring_buffer;

/* Called (from offcpu_prog_poll) with the key of each new row, and with {pid, tid 0} after an exec. */
typedef void (*offcpu_notice_fn)(void *ctx, const struct offcpu_key *key);

struct offcpu_prog {
	struct offcpu_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link *links[3];	/* sched_switch, exit, exec */
	int max_rows;
	offcpu_notice_fn on_notice;
	void *ctx;
};

struct offcpu_row {
	struct offcpu_key key;
	struct offcpu_val v;
};

/* Load, reusing the spine's maps (threads_load first). */
int offcpu_prog_load(struct offcpu_prog *p, struct threads_prog *tp, int max_rows, offcpu_notice_fn fn, void *ctx,
		     char *err, size_t errlen);
int offcpu_prog_attach(struct offcpu_prog *p, char *err, size_t errlen);
void offcpu_prog_poll(struct offcpu_prog *p);
/* Every row; *rows is malloc'd. */
int offcpu_prog_read(struct offcpu_prog *p, struct offcpu_row **rows, size_t *n);
/* One stack: frames (leaf first) into f; 0 or -ENOENT. */
int offcpu_prog_stack(struct offcpu_prog *p, int id, struct stack_frames *f);
/* Self-accounting slots, summed over CPUs. */
void offcpu_prog_stats(struct offcpu_prog *p, unsigned long long st[OFFCPU_STAT_MAX]);
void offcpu_prog_detach(struct offcpu_prog *p);
void offcpu_prog_destroy(struct offcpu_prog *p);

#endif
