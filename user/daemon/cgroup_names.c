// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "daemon/cgroup_names.h"

#define FILEID_KERNFS 0xfe	/* handle type of kernfs (cgroupfs) file handles: the node id */

int cgroup_names_find_mount(FILE *mounts, char *out, size_t len)
{
	struct mntent *m;

	while ((m = getmntent(mounts)))
		if (!strcmp(m->mnt_type, "cgroup2")) {
			snprintf(out, len, "%s", m->mnt_dir);
			return 0;
		}
	return -ENOENT;
}

static int find_cgroup2(char *out, size_t len)
{
	FILE *f = setmntent("/proc/self/mounts", "r");
	int r;

	if (!f)
		return -errno;
	r = cgroup_names_find_mount(f, out, len);
	endmntent(f);
	return r;
}

int cgroup_names_init(struct cgroup_names *c, size_t max)
{
	int r;

	memset(c, 0, sizeof(*c));
	c->mnt_fd = -1;
	c->max = max ? max : 1024;
	r = find_cgroup2(c->mnt, sizeof(c->mnt));
	if (r) {
		snprintf(c->why, sizeof(c->why), "no cgroup2 mount in /proc/self/mounts (%s): cgroups are labelled by id",
			 strerror(-r));
		return r;
	}
	c->mnt_fd = open(c->mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->mnt_fd < 0) {
		r = -errno;
		snprintf(c->why, sizeof(c->why), "cannot open the cgroup2 mount %s: %s", c->mnt, strerror(errno));
		return r;
	}
	return 0;
}

const char *cgroup_names_strip_mount(const char *path, const char *mnt)
{
	size_t n = strlen(mnt);

	if (strncmp(path, mnt, n) || (path[n] != '/' && path[n]))
		return NULL;
	return path[n] ? path + n : "/";
}

static char *resolve(struct cgroup_names *c, uint64_t id)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = { .fh = { .handle_bytes = sizeof(uint64_t), .handle_type = FILEID_KERNFS }, .id = id };
	char link[64], buf[4096];
	const char *rel;
	ssize_t n;
	int fd;

	fd = open_by_handle_at(c->mnt_fd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_PATH);
	if (fd < 0)
		return NULL;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	rel = cgroup_names_strip_mount(buf, c->mnt);
	return strdup(rel ? rel : buf);
}

const char *cgroup_names_get(struct cgroup_names *c, uint64_t id)
{
	char *p;

	if (c->mnt_fd < 0 || !id)
		return NULL;
	p = u64map_get(&c->cache, id);
	if (p)
		return p;
	p = resolve(c, id);
	if (!p)
		return NULL;
	if (c->cache.n >= c->max) {	/* bounded: start over (ids of live cgroups come back on demand) */
		for (size_t i = 0; i < c->cache.cap; i++)
			free(c->cache.vals[i]);
		u64map_free(&c->cache);
	}
	if (u64map_put(&c->cache, id, p)) {
		free(p);
		return NULL;
	}
	return p;
}

void cgroup_names_free(struct cgroup_names *c)
{
	for (size_t i = 0; i < c->cache.cap; i++)
		free(c->cache.vals[i]);
	u64map_free(&c->cache);
	if (c->mnt_fd >= 0)
		close(c->mnt_fd);
	c->mnt_fd = -1;
}
