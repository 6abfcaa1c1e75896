// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* A variable of a process' initial environment.  See proc_environ.h. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "sym/proc_environ.h"

int proc_environ_get(int pid, const char *name, char *out, size_t len)
{
	char path[64], buf[65536];
	size_t nl = strlen(name);
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;	/* NUL-separated, read as far as it goes */
	for (char *p = buf; p < buf + n; p += strlen(p) + 1)
		if (!strncmp(p, name, nl) && p[nl] == '=') {
			snprintf(out, len, "%s", p + nl + 1);
			return 0;
		}
	return -1;
}
