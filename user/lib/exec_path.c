// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The file execvp() runs.  See exec_path.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/exec_path.h"

int exec_path_find(const char *cmd, char *out, size_t outlen)
{
	const char *path = getenv("PATH");

	if (strchr(cmd, '/'))
		return snprintf(out, outlen, "%s", cmd) < (int)outlen ? 0 : -ENAMETOOLONG;
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, ":");
		struct stat st;

		if (snprintf(out, outlen, "%.*s/%s", (int)n, n ? p : ".", cmd) < (int)outlen && stat(out, &st) == 0 &&
		    S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return 0;
		p += n;
		if (*p == ':')
			p++;
	}
	return -ENOENT;
}
