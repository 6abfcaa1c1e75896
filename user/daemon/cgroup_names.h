/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* cgroup v2 ids (kernfs node ids, from BPF) to paths ("/system.slice/x.service"),
 * through open_by_handle_at on the cgroup2 mount; a bounded cache. */
#ifndef TMABPF_CGROUP_NAMES_H
#define TMABPF_CGROUP_NAMES_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "lib/u64map.h"

struct cgroup_names {
	int mnt_fd;		/* cgroup2 mount, -1 when there is none */
	char mnt[256];		/* its path */
	struct u64map cache;	/* id -> malloc'd path */
	size_t max;		/* cache entries before it is emptied */
	char why[512];		/* why ids cannot be resolved, "" when they can */
};

/* Find the cgroup2 mount; 0, or -errno with why set (the daemon says so once
 * and labels by id).  max: cache size. */
int cgroup_names_init(struct cgroup_names *c, size_t max);
/* Path of cgroup id ("/" for the root), or NULL when it cannot be resolved
 * (removed cgroup, no cgroup2 mount). */
const char *cgroup_names_get(struct cgroup_names *c, uint64_t id);
/* The first cgroup2 mount point in a mount table (/proc/self/mounts' format) into out: 0, or
 * -ENOENT when there is none. */
int cgroup_names_find_mount(FILE *mounts, char *out, size_t len);
/* Path relative to the mount of a /proc/PID/cgroup-style absolute path: pure helper. */
const char *cgroup_names_strip_mount(const char *path, const char *mnt);
void cgroup_names_free(struct cgroup_names *c);

#endif
