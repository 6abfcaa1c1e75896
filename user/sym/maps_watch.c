// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Executable files mapped by the target processes during a run.  See maps_watch.h. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include "sym/maps_watch.h"
#include "sym/procmaps.h"

bool maps_watch_seen(const struct maps_watch *w, const char *path)
{
	for (size_t i = 0; i < w->n; i++)
		if (!strcmp(w->paths[i], path))
			return true;
	return false;
}

bool maps_watch_name_matches(const char *name, const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n = strlen(name);

	base = base ? base + 1 : path;
	return !strcmp(base, name) || (!strncmp(base, name, n) && base[n] == '.' && strstr(name, ".so")) ||
	       !fnmatch(name, base, 0);	/* a library glob (uprobe_lib_is_glob) */
}

static int add(struct maps_watch *w, int pid, const char *path)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 64;
		char **p = realloc(w->paths, cap * sizeof(*p));
		int *q = p ? realloc(w->pids, cap * sizeof(*q)) : NULL;

		if (p)
			w->paths = p;
		if (!q)
			return -1;
		w->pids = q;
		w->cap = cap;
	}
	if (!(w->paths[w->n] = strdup(path)))
		return -1;
	w->pids[w->n++] = pid;
	return 0;
}

int maps_watch_add(struct maps_watch *w, int pid, const char *path)
{
	if (maps_watch_seen(w, path))
		return 0;
	return add(w, pid, path) ? -1 : 1;
}

int maps_watch_poll(struct maps_watch *w, const int *pids, int npids, maps_watch_fn fn, void *ctx)
{
	int fresh = 0;

	for (int i = 0; i < npids; i++) {
		struct procmaps m;

		if (pids[i] <= 0 || procmaps_load(pids[i], &m, NULL, 0))
			continue;
		for (size_t k = 0; k < m.nr; k++) {
			const struct procmaps_entry *e = &m.entries[k];

			if (!(e->flags & PROCMAPS_F_FILE) || !(e->flags & PROCMAPS_F_EXEC) || (e->flags & PROCMAPS_F_JIT) ||
			    maps_watch_add(w, pids[i], e->path) != 1)
				continue;
			fresh++;
			if (fn)
				fn(ctx, pids[i], e->path);
		}
		procmaps_free(&m);
	}
	return fresh;
}

void maps_watch_free(struct maps_watch *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->paths[i]);
	free(w->paths);
	free(w->pids);
	memset(w, 0, sizeof(*w));
}
