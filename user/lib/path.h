/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* File paths as shown to the user. */
#ifndef TMABPF_PATH_H
#define TMABPF_PATH_H
#include <string.h>

/* The last component of path ("libc.so.6" of "/usr/lib/x86_64-linux-gnu/libc.so.6"); path itself
 * when it has no '/'. */
static inline const char *path_base(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

#endif
