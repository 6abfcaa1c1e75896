// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* libFuzzer target: cgroup paths.  The input up to its first NUL is a mount table
 * (/proc/self/mounts: the cgroup2 mount point, octal escapes), the rest lines of paths as
 * readlink gives them for a cgroup's handle, made relative to that mount. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "daemon/cgroup_names.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t tlen = nul ? (size_t)(nul - data) : size;
	char mnt[256] = "/sys/fs/cgroup", *paths, *line, *save = NULL;
	FILE *f = tlen ? fmemopen((void *)data, tlen, "r") : NULL;

	if (f) {
		if (cgroup_names_find_mount(f, mnt, sizeof(mnt)) == 0 && strlen(mnt) >= sizeof(mnt))
			abort();
		fclose(f);
	}
	if (!nul)
		return 0;
	paths = strndup((const char *)nul + 1, size - tlen - 1);
	if (!paths)
		return 0;
	for (line = strtok_r(paths, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *rel = cgroup_names_strip_mount(line, mnt);

		/* relative to the mount: a suffix of the path that starts a component, or "/" */
		if (rel && strcmp(rel, "/") && (rel[0] != '/' || rel < line || rel >= line + strlen(line)))
			abort();
	}
	free(paths);
	return 0;
}
