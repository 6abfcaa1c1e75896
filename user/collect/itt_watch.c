// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* --itt over the whole host: processes with ITT but without the collector.  See itt_watch.h. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "collect/itt_run.h"
#include "collect/itt_watch.h"
#include "lib/warn.h"
#include "sym/procmaps.h"

#define CARRIES ((void *)1)
#define LACKS ((void *)2)
#define KIND(v) ((void *)((uintptr_t)(v) & 3))

static uint64_t file_key(unsigned int maj, unsigned int min, uint64_t ino)
{
	return (uint64_t)makedev(maj, min) << 40 ^ ino;
}

/* CARRIES when the file names both the variable ITT's static part reads and the function it looks
 * up in a collector (tmabpf, which names the variable, and the collector, which has the function, do
 * not), else LACKS; NULL when it cannot be read. */
static void *file_carries_itt(int pid, const char *path, uint64_t ino)
{
	static const char var[] = "INTEL_LIBITTNOTIFY64", fn[] = "__itt_api_init";
	enum { OVERLAP = sizeof(var) > sizeof(fn) ? sizeof(var) : sizeof(fn) };
	char in_root[PATH_MAX + 32], buf[65536 + OVERLAP];
	bool has_var = false, has_fn = false;
	size_t keep = 0;
	struct stat st;
	off_t off = 0;
	ssize_t n;
	int fd;

	/* the path as the process sees it (a container's root), else ours */
	snprintf(in_root, sizeof(in_root), "/proc/%d/root%s", pid, path);
	if ((fd = open(in_root, O_RDONLY | O_CLOEXEC)) < 0 && (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	/* the mapped file itself, never another one at that path (ours, or one swapped in) */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_ino != ino) {
		close(fd);
		return NULL;
	}
	/* read, not mapped: a file its owner truncates meanwhile ends the read, never SIGBUS in root */
	while ((!has_var || !has_fn) && (n = pread(fd, buf + keep, sizeof(buf) - keep, off)) > 0) {
		size_t len = keep + (size_t)n;

		off += n;
		has_var = has_var || memmem(buf, len, var, sizeof(var) - 1);
		has_fn = has_fn || memmem(buf, len, fn, sizeof(fn) - 1);
		keep = len < OVERLAP ? len : OVERLAP;	/* a name across two reads */
		memmove(buf, buf + len - keep, keep);
	}
	close(fd);
	return has_var && has_fn ? CARRIES : LACKS;
}

/* The file's kind (CARRIES or LACKS) remembered under key as used now; at ITT_WATCH_FILES, the
 * least recently used file is forgotten first (read again at its next mapping). */
static void remember(struct itt_watch *w, uint64_t key, void *kind)
{
	struct u64map *m = &w->files;

	if (!u64map_get(m, key) && m->n >= ITT_WATCH_FILES) {
		size_t old = m->cap;

		for (size_t i = 0; i < m->cap; i++)
			if (m->vals[i] && (old == m->cap || (uintptr_t)m->vals[i] < (uintptr_t)m->vals[old]))
				old = i;
		u64map_del(m, m->keys[old]);
	}
	u64map_put(m, key, (void *)(++w->uses << 2 | (uintptr_t)kind));
}

/* Process pid mapped file (dev, ino) at path: a file carrying ITT makes it checked, once. */
static void on_file(struct itt_watch *w, int pid, unsigned int maj, unsigned int min, uint64_t ino, const char *path)
{
	uint64_t key = file_key(maj, min, ino);
	void *v = u64map_get(&w->files, key);

	if (!path || path[0] != '/' || u64map_get(&w->pids, (uint64_t)pid))
		return;
	if (v)
		v = KIND(v);
	else if (!(v = file_carries_itt(pid, path, ino)))
		return;	/* not readable now (the process gone): not known, asked again at its next mapping */
	remember(w, key, v);
	if (v != CARRIES || u64map_put(&w->pids, (uint64_t)pid, CARRIES))
		return;
	itt_run_check_pids(w->r, &pid, 1);
}

static void on_mapping(void *ctx, const struct mmap_event *ev)
{
	on_file(ctx, ev->pid, ev->maj, ev->min, ev->ino, ev->path);
}

/* The processes running now: their maps, once. */
static void scan_running(struct itt_watch *w)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int self = getpid();

	while (d && (de = readdir(d))) {
		int pid = atoi(de->d_name);
		struct procmaps m;
		char err[256];

		if (pid <= 0 || pid == self || procmaps_load(pid, &m, err, sizeof(err)))
			continue;
		for (size_t i = 0; i < m.nr; i++)
			if (m.entries[i].inode && m.entries[i].perms[2] == 'x')
				on_file(w, pid, m.entries[i].dev_major, m.entries[i].dev_minor, m.entries[i].inode,
					m.entries[i].path);
		procmaps_free(&m);
	}
	if (d)
		closedir(d);
}

void itt_watch_start(struct itt_watch *w, struct itt_run *r)
{
	char err[512];

	w->r = r;
	if (mmap_events_open(&w->mev, NULL, 0, err, sizeof(err)))
		warn_add("--itt: %s: the processes that start later without the ITT collector are not told how "
			 "to start with it", err);
	scan_running(w);
	itt_watch_poll(w);
}

void itt_watch_poll(struct itt_watch *w)
{
	if (mmap_events_on(&w->mev))
		mmap_events_drain(&w->mev, on_mapping, w);
}

void itt_watch_stop(struct itt_watch *w)
{
	mmap_events_close(&w->mev);
	u64map_free(&w->files);
	u64map_free(&w->pids);
}
