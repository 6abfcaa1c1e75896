// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Opening files other users control, regular files only.  See user_file.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include "sym/user_file.h"

int user_file_open(const char *path, int extra_flags, struct stat *st)
{
	struct stat tmp;
	char self[64];
	int pfd, fd, r;

	if (!st)
		st = &tmp;
	pfd = open(path, O_PATH | O_CLOEXEC | (extra_flags & O_NOFOLLOW));
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, st)) {
		r = -errno;
		close(pfd);
		return r;
	}
	if (!S_ISREG(st->st_mode)) {
		close(pfd);
		return S_ISLNK(st->st_mode) ? -ELOOP : -EINVAL;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	r = fd < 0 ? -errno : fd;
	close(pfd);
	return r;
}
