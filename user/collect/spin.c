// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Spin functions as file-offset ranges.  See spin.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "collect/spin.h"
#include "lib/warn.h"
#include "sym/elfsyms.h"
#include "sym/libresolve.h"
#include "sym/uprobe_targets.h"

/* Where runtimes spin-wait.  Stripped libraries keep only their exported
 * names: internal wait loops (libgomp's do_spin, OpenBLAS's
 * blas_thread_server) are found only with their debug symbols installed. */
static const char *const builtin[] = {
	"libgomp.so.1:gomp_barrier_wait*", "libgomp.so.1:gomp_team_barrier_wait*", "libgomp.so.1:do_spin*",
	"libgomp.so.1:do_wait*", "libgomp.so.1:gomp_mutex_lock_slow", "libgomp.so.1:gomp_sem_wait_slow",
	"libomp.so.5:__kmp_*wait*", "libomp.so.5:__kmp_*barrier*", "libomp.so.5:__kmp_yield*",
	"libiomp5.so:__kmp_*wait*", "libiomp5.so:__kmp_*barrier*", "libiomp5.so:__kmp_yield*",
	"libopenblas.so.0:blas_thread_server", "libopenblas.so.0:exec_blas_async_wait",
	"libggml-cpu.so:ggml_barrier", "libggml.so:ggml_barrier",
	"libc.so.6:sched_yield", "libc.so.6:pthread_spin_lock",
	"libmkl_gnu_thread.so.2:*barrier*", "libmkl_intel_thread.so.2:*barrier*",
};

/* The ranges of spec's functions; how many, or -errno with err. */
/* A device number as the sample program compares it (bpf/samples.h: struct spin_range) */
static __u64 dev_key(dev_t d)
{
	return ((__u64)major(d) << 20) | minor(d);
}

static int add_spec(struct spin_set *s, const char *spec, int pid, const char *exe, char *err, size_t errlen)
{
	char lib[LIBRESOLVE_PATH_MAX], glob[1024];
	struct libresolve_result *res = malloc(sizeof(*res));
	const struct elfsym **m = NULL;
	struct elfsyms syms;
	int r, n, added = 0;

	if (!res)
		return -ENOMEM;
	r = libresolve_split_spec(spec, lib, sizeof(lib), glob, sizeof(glob), err, errlen);
	if (!r && !lib[0] && pid <= 0 && exe)
		snprintf(lib, sizeof(lib), "%s", exe);
	if (!r)
		r = libresolve_find(pid, lib, res, err, errlen);
	if (!r)
		r = elfsyms_load(res->path, &syms, err, errlen);
	if (r) {
		free(res);
		return r;
	}
	n = elfsyms_match_all(&syms, glob, &m);
	for (int i = 0; i < n; i++) {
		if (!m[i]->size || (m[i]->flags & ELFSYMS_F_NO_OFFSET))
			continue;
		if (s->n >= SPIN_MAX_RANGES) {
			s->truncated++;
			continue;
		}
		s->r[s->n++] = (struct spin_range){ .ino = res->inode,
						    .dev = dev_key(res->dev),
						    .start = m[i]->offset, .end = m[i]->offset + m[i]->size };
		added++;
	}
	if (n <= 0)
		err_set(err, errlen, "--spin '%s': no function of %s matches '%s'", spec, res->realpath, glob);
	free(m);
	elfsyms_free(&syms);
	free(res);
	return n < 0 ? n : added;
}

static bool spin_set_has(const struct spin_set *s, __u64 dev, __u64 ino, __u64 off)
{
	for (int i = 0; i < s->n; i++)
		if (s->r[i].ino == ino && s->r[i].dev == dev && off >= s->r[i].start && off < s->r[i].end)
			return true;
	return false;
}

void spin_set_mark(const struct spin_set *s, struct uprobe_set *u)
{
	for (int lib = 0; lib < u->nr_libs; lib++) {
		struct stat st;
		__u64 dev;

		if (stat(u->libs[lib].attach_path, &st))
			continue;
		dev = dev_key(st.st_dev);
		for (int i = 0; i < u->nr_funcs; i++) {
			struct uprobe_func *f = &u->funcs[i];

			if (f->lib == lib && spin_set_has(s, dev, st.st_ino, f->offset))
				f->spin = true;
		}
	}
}

int spin_set_resolve(struct spin_set *s, const char *const *specs, int nspecs, int pid, const char *exe, char *err,
		     size_t errlen)
{
	char why[1024];

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (add_spec(s, builtin[i], pid, exe, why, sizeof(why)) > 0)
			s->builtin_specs++;
	for (int i = 0; i < nspecs; i++) {
		int r;

		err[0] = 0;
		r = add_spec(s, specs[i], pid, exe, err, errlen);

		if (r < 0)
			return r;
		if (r == 0) {
			if (!err[0])
				err_set(err, errlen, "--spin '%s': its functions have no size or file offset", specs[i]);
			return -ESRCH;
		}
	}
	if (s->truncated)
		warn_add("--spin: %d spin functions past the first %d not classified", s->truncated, SPIN_MAX_RANGES);
	return 0;
}
