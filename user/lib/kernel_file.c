// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* One number from a kernel file.  See kernel_file.h. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/kernel_file.h"

int kernel_file_int(const char *path, int dflt)
{
	FILE *f = fopen(path, "r");
	int v = dflt;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = dflt;
		fclose(f);
	}
	return v;
}

unsigned long long kernel_file_field(const char *path, const char *key, int base, unsigned long long dflt)
{
	FILE *f = fopen(path, "r");
	size_t klen = strlen(key);
	char line[256];

	if (!f)
		return dflt;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			dflt = strtoull(line + klen + 1, NULL, base);
			break;
		}
	fclose(f);
	return dflt;
}

unsigned long long kernel_thread_runtime_ns(unsigned int pid, unsigned int tid)
{
	char path[64], buf[96];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/schedstat", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strtoull(buf, NULL, 10);
}
