// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The directories a target loads libraries from.  See libdirs.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/exec_path.h"
#include "sym/elfsyms.h"
#include "sym/libdirs.h"
#include "sym/maps_watch.h"
#include "sym/proc_environ.h"
#include "sym/procmaps.h"

/* dir (n bytes of it) once; 1 when new */
static int add_dir(struct libdirs *d, const char *dir, size_t n)
{
	char *copy;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (!n || dir[0] != '/')
		return 0;	/* a relative entry would be the target's working directory: not ours to guess */
	for (size_t i = 0; i < d->n; i++)
		if (strlen(d->dirs[i]) == n && !strncmp(d->dirs[i], dir, n))
			return 0;
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 16;
		char **p = realloc(d->dirs, cap * sizeof(*p));

		if (!p)
			return 0;
		d->dirs = p;
		d->cap = cap;
	}
	if (!(copy = strndup(dir, n)))
		return 0;
	d->dirs[d->n++] = copy;
	return 1;
}

/* "a:b:$ORIGIN/../lib" with $ORIGIN (or ${ORIGIN}) the object's directory; entries with other
 * dynamic string tokens ($LIB, $PLATFORM) are left out. */
static int add_list(struct libdirs *d, const char *list, const char *origin)
{
	int fresh = 0;

	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ":");
		char buf[4096];
		const char *rest = NULL;

		if (!strncmp(p, "$ORIGIN", 7))
			rest = p + 7;
		else if (!strncmp(p, "${ORIGIN}", 9))
			rest = p + 9;
		if (rest && origin && (size_t)snprintf(buf, sizeof(buf), "%s%.*s", origin, (int)(n - (rest - p)), rest) <
					      sizeof(buf))
			fresh += add_dir(d, buf, strlen(buf));
		else if (!rest && !memchr(p, '$', n))
			fresh += add_dir(d, p, n);
		p += n;
		if (*p == ':')
			p++;
	}
	return fresh;
}

int libdirs_add_object(struct libdirs *d, const char *path)
{
	const char *slash = strrchr(path, '/');
	char origin[4096], runpath[4096];
	int fresh;

	if (!slash || (size_t)(slash - path) >= sizeof(origin))
		return 0;
	snprintf(origin, sizeof(origin), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	fresh = add_dir(d, origin, strlen(origin));
	if (!elfsyms_read_runpath(path, runpath, sizeof(runpath)))
		fresh += add_list(d, runpath, origin);
	return fresh;
}

void libdirs_of_command(struct libdirs *d, const char *cmd)
{
	char exe[4096], real[PATH_MAX];
	const char *llp = getenv("LD_LIBRARY_PATH");

	if (llp)
		add_list(d, llp, NULL);
	if (!exec_path_find(cmd, exe, sizeof(exe)) && realpath(exe, real))
		libdirs_add_object(d, real);
}

/* LD_LIBRARY_PATH in /proc/PID/environ */
static void add_environ(struct libdirs *d, int pid)
{
	char val[65536];

	if (!proc_environ_get(pid, "LD_LIBRARY_PATH", val, sizeof(val)))
		add_list(d, val, NULL);
}

void libdirs_of_process(struct libdirs *d, int pid)
{
	char link[64], exe[4096];
	struct procmaps m;
	ssize_t n;

	add_environ(d, pid);
	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	if ((n = readlink(link, exe, sizeof(exe) - 1)) > 0) {
		exe[n] = 0;
		libdirs_add_object(d, exe);
	}
	if (procmaps_load(pid, &m, NULL, 0))
		return;
	for (size_t i = 0; i < m.nr; i++)
		if ((m.entries[i].flags & PROCMAPS_F_FILE) && (m.entries[i].flags & PROCMAPS_F_EXEC))
			libdirs_add_object(d, m.entries[i].path);
	procmaps_free(&m);
}

int libdirs_find(const struct libdirs *d, size_t from, const char *name, libdirs_fn fn, void *ctx)
{
	int found = 0;

	for (size_t i = from; i < d->n; i++) {
		DIR *dir = opendir(d->dirs[i]);
		struct dirent *e;

		while (dir && (e = readdir(dir))) {
			char path[4096 + 256];
			struct stat st;

			if (!maps_watch_name_matches(name, e->d_name))
				continue;
			snprintf(path, sizeof(path), "%s/%s", d->dirs[i], e->d_name);
			if (stat(path, &st) || !S_ISREG(st.st_mode))
				continue;
			found++;
			fn(ctx, path);
		}
		if (dir)
			closedir(dir);
	}
	return found;
}

void libdirs_free(struct libdirs *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->dirs[i]);
	free(d->dirs);
	memset(d, 0, sizeof(*d));
}
