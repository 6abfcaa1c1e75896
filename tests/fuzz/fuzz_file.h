/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* For fuzz targets whose parser reads a path: the input as a file (a memfd, reused). */
#ifndef TMABPF_FUZZ_FILE_H
#define TMABPF_FUZZ_FILE_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* "/proc/self/fd/N" holding exactly data. */
static const char *fuzz_file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];

	if (fd < 0) {
		fd = memfd_create("fuzz-input", MFD_CLOEXEC);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	return path;
}

#endif
