/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * roofline_loader: --roofline's BPF (bpf/roofline.bpf.c) on the known GEMM
 * and GEMV entries of the libraries it is given: cblas_{s,d}gemm,
 * cblas_{s,d}gemv, {s,d}gemm_, {s,d}gemv_ (and MKL's uppercase and
 * underscore-less Fortran aliases), dnnl_sgemm.  One uprobe session link per
 * library; the target filter is the spine's (its pids map reused by fd).
 */
#ifndef TMABPF_ROOFLINE_LOADER_H
#define TMABPF_ROOFLINE_LOADER_H
#include <stdbool.h>
#include <stddef.h>
#include "model/roofline.h"

#define ROOFLINE_MAX_LIBS 16

struct roofline_bpf;

struct roofline_fn {
	char name[64];
	int lib;
	unsigned long offset;
	unsigned int sig, elem;
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
	bool loaded;
};

/* The target filter to share (the spine's). */
struct roofline_filter {
	int pids_fd;
	unsigned int filter, main_id;
};

/* Add the known entries of the ELF file at path (a library already added, by device and inode, is
 * skipped: --uprobe's /proc/self/fd/N and the same file by name are one): how many
 * it has (0: none), or -errno with err. */
int roofline_add_lib(struct roofline_prog *p, const char *path, char *err, size_t errlen);
/* Is name a known GEMM/GEMV entry? */
bool roofline_known(const char *name);
int roofline_load(struct roofline_prog *p, const struct roofline_filter *f, char *err, size_t errlen);
int roofline_attach(struct roofline_prog *p, char *err, size_t errlen);
void roofline_detach(struct roofline_prog *p);
/* The sums so far into r (rows replaced; counters from the BPF stats); not judged. */
int roofline_read(struct roofline_prog *p, struct roofline_result *r);
void roofline_free(struct roofline_prog *p);

#endif
