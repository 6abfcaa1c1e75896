/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * roofline_loader: --roofline's BPF (bpf/roofline.bpf.c) on the known GEMM
 * and GEMV entries of the libraries it is given: cblas_{s,d}gemm,
 * cblas_{s,d}gemv, {s,d}gemm_, {s,d}gemv_ (and MKL's uppercase and
 * underscore-less Fortran aliases), dnnl_sgemm, MKL's cblas_{s,d}gemm_batch and
 * cblas_{s,d}gemm_batch_strided, and ggml's ggml_compute_forward_mul_mat and
 * repacked-weight forward_mul_mat in a library whose ggml version is the
 * verified one (bpf/roof_ggml_types.h; another is refused in one line).  One
 * uprobe session link per library; the
 * target filter is the spine's (its pids map reused by fd).  An entry that
 * --uprobe probes is covered by the uprobe program's own entry path
 * (roofline_cover): no second program on its address; the two share the
 * roofline's maps.
 */
#ifndef TMABPF_ROOFLINE_LOADER_H
#define TMABPF_ROOFLINE_LOADER_H
#include <stdbool.h>
#include <stddef.h>
#include "model/roofline.h"

struct uprobes_prog;

#define ROOFLINE_MAX_LIBS 16

struct roofline_bpf;

struct roofline_fn {
	char name[64];
	int lib;
	unsigned long offset;
	unsigned int sig, elem;
	bool by_uprobe;			/* read by the --uprobe program's entry (roofline_cover): not attached here */
};

struct roofline_prog {
	struct roofline_bpf *skel;
	int nlibs;
	char *paths[ROOFLINE_MAX_LIBS];	/* /proc/self/fd/N of lib_fds[]: read and attached through the inode opened */
	int lib_fds[ROOFLINE_MAX_LIBS];
	unsigned long long devs[ROOFLINE_MAX_LIBS], inos[ROOFLINE_MAX_LIBS];	/* told apart by inode */
	int link_fds[ROOFLINE_MAX_LIBS];
	struct roofline_fn *fns;
	int nfns;
	const struct uprobes_prog *uprobes;	/* the --uprobe program whose slots hold rows too (NULL: none) */
	bool loaded;
};

/* The target filter to share (the spine's). */
struct roofline_filter {
	int pids_fd;
	unsigned int filter, main_id;
	const struct uprobes_prog *uprobes;	/* its roofline maps are shared (NULL: no --uprobe program) */
	bool windows;				/* --per-call: each process' work so far for the snapshots */
};

/* Add the known entries of the ELF file at path (a library already added, by device and inode, is
 * skipped: --uprobe's /proc/self/fd/N and the same file by name are one): how many
 * it has (0: none), or -errno with err. */
int roofline_add_lib(struct roofline_prog *p, const char *path, char *err, size_t errlen);
/* Is name a known GEMM/GEMV entry? */
bool roofline_known(const char *name);
/* The known entry at file offset of the library (dev, ino) added, now read by the --uprobe program's
 * entry instead: its roofline cookie (ROOF_COOKIE, the uprobe's roof_cookie), 0 when none is there. */
unsigned int roofline_cover(struct roofline_prog *p, unsigned long long dev, unsigned long long ino,
			    unsigned long offset);
int roofline_load(struct roofline_prog *p, const struct roofline_filter *f, char *err, size_t errlen);
int roofline_attach(struct roofline_prog *p, char *err, size_t errlen);
void roofline_detach(struct roofline_prog *p);
/* The sums so far into r (rows replaced; counters from the BPF stats); not judged. */
int roofline_read(struct roofline_prog *p, struct roofline_result *r);
void roofline_free(struct roofline_prog *p);

#endif
