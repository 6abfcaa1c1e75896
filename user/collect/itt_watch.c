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
#include "lib/clock.h"
#include "lib/warn.h"
#include "sym/procmaps.h"
#include "sym/user_file.h"

#define CARRIES ((void *)1)
#define LACKS ((void *)2)
#define KIND(v) ((void *)((uintptr_t)(v) & 3))

static uint64_t file_key(unsigned int maj, unsigned int min, uint64_t ino)
{
	return (uint64_t)makedev(maj, min) << 40 ^ ino;
}

/* A file waiting to be searched for ITT's names, or being searched (fd open). */
struct itt_scan {
	uint64_t key, ino;
	char *path;		/* as the mapping names it */
	int *pids;		/* the processes that mapped it meanwhile, the first's root opens it */
	size_t npids;
	int fd;			/* -1 until its search starts */
	unsigned long long off;	/* searched so far */
	bool has_var, has_fn, done;
	size_t keep;		/* the last bytes searched (a name across two reads) */
	char tail[32];
};

static const char itt_var[] = "INTEL_LIBITTNOTIFY64", itt_fn[] = "__itt_api_init";
#define OVERLAP (sizeof(itt_var) > sizeof(itt_fn) ? sizeof(itt_var) : sizeof(itt_fn))
_Static_assert(OVERLAP <= sizeof(((struct itt_scan *)0)->tail), "itt_scan's tail holds a name");

static void scan_free(struct itt_scan *sc)
{
	if (sc->fd >= 0)
		close(sc->fd);
	free(sc->pids);
	free(sc->path);
	free(sc);
}

/* Open the mapped file itself, never another one at that path (ours, or one swapped in, or
 * anything but a regular file: a FIFO there blocked the open): through the root of the first
 * process that mapped it (a container's), else ours. */
static bool scan_open(struct itt_scan *sc)
{
	char in_root[PATH_MAX + 32];
	struct stat st;

	snprintf(in_root, sizeof(in_root), "/proc/%d/root%s", sc->pids[0], sc->path);
	if ((sc->fd = user_file_open(in_root, 0, &st)) < 0 && (sc->fd = user_file_open(sc->path, 0, &st)) < 0)
		return false;
	if ((uint64_t)st.st_ino != sc->ino) {
		close(sc->fd);
		sc->fd = -1;
		return false;
	}
	return true;
}

/* Search on until CLOCK_MONOTONIC's until (read, not mapped: a file its owner truncates meanwhile
 * ends the read, never SIGBUS in root); done once both names are found, at the end, or at
 * ITT_SCAN_MAX. */
static void scan_some(struct itt_scan *sc, unsigned long long until)
{
	char buf[65536 + OVERLAP];

	while (!sc->done && mono_ns() < until) {
		size_t len;
		ssize_t n;

		memcpy(buf, sc->tail, sc->keep);
		if ((n = pread(sc->fd, buf + sc->keep, sizeof(buf) - sc->keep, (off_t)sc->off)) <= 0) {
			sc->done = true;
			break;
		}
		sc->off += (size_t)n;
		len = sc->keep + (size_t)n;
		sc->has_var = sc->has_var || memmem(buf, len, itt_var, sizeof(itt_var) - 1);
		sc->has_fn = sc->has_fn || memmem(buf, len, itt_fn, sizeof(itt_fn) - 1);
		sc->keep = len < OVERLAP ? len : OVERLAP;
		memcpy(sc->tail, buf + len - sc->keep, sc->keep);
		sc->done = (sc->has_var && sc->has_fn) || sc->off >= ITT_SCAN_MAX;
	}
}

/* CARRIES when the file names both the variable ITT's static part reads and the function it looks
 * up in a collector (tmabpf, which names the variable, and the collector, which has the function, do
 * not), else LACKS. */
static void *scan_kind(const struct itt_scan *sc)
{
	if ((!sc->has_var || !sc->has_fn) && sc->off >= ITT_SCAN_MAX)
		warn_add("--itt: %s (mapped by pid %d) is larger than %llu GiB: only its first %llu GiB were searched "
			 "for ITT's names", sc->path, sc->pids[0], ITT_SCAN_MAX >> 30, ITT_SCAN_MAX >> 30);
	return sc->has_var && sc->has_fn ? CARRIES : LACKS;
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

/* Process pid mapped a file of kind: one carrying ITT makes it checked, once. */
static void on_kind(struct itt_watch *w, int pid, void *kind)
{
	if (kind != CARRIES || u64map_get(&w->pids, (uint64_t)pid) || u64map_put(&w->pids, (uint64_t)pid, CARRIES))
		return;
	itt_run_check_pids(w->r, &pid, 1);
}

/* pid waits for the file of key to be searched: added to its search, or to a new one at the end. */
static void scan_add(struct itt_watch *w, int pid, uint64_t key, uint64_t ino, const char *path)
{
	struct itt_scan *sc = u64map_get(&w->pending, key);
	int *pids;

	if (!sc && w->nscans >= ITT_WATCH_SCANS) {
		if (!w->full_said)
			warn_add("--itt: %d mapped files wait to be searched for ITT's names already: those mapped now "
				 "are searched at their next mapping", ITT_WATCH_SCANS);
		w->full_said = true;
		return;
	}
	if (!sc) {
		if (!(sc = calloc(1, sizeof(*sc))) || !(sc->path = strdup(path)) ||
		    u64map_put(&w->pending, key, sc)) {
			if (sc)
				free(sc->path);
			free(sc);
			return;
		}
		sc->key = key;
		sc->ino = ino;
		sc->fd = -1;
		w->scans[w->nscans++] = sc;
	}
	for (size_t i = 0; i < sc->npids; i++)
		if (sc->pids[i] == pid)
			return;
	if (!(pids = realloc(sc->pids, (sc->npids + 1) * sizeof(*pids))))
		return;
	sc->pids = pids;
	sc->pids[sc->npids++] = pid;
}

/* The files waiting, searched in the order mapped, for ITT_SCAN_POLL_NS at most: a user's huge
 * file held the loop for seconds. */
static void scan_step(struct itt_watch *w)
{
	unsigned long long until = mono_ns() + ITT_SCAN_POLL_NS;

	while (w->nscans && mono_ns() < until) {
		struct itt_scan *sc = w->scans[0];

		/* not opened: not readable now (the process gone), not known, asked again at its next
		 * mapping (no pid: out of memory when it was added) */
		if (sc->fd >= 0 || (sc->npids && scan_open(sc))) {
			void *kind;

			scan_some(sc, until);
			if (!sc->done)
				return;
			kind = scan_kind(sc);
			remember(w, sc->key, kind);
			for (size_t i = 0; i < sc->npids; i++)
				on_kind(w, sc->pids[i], kind);
		}
		u64map_del(&w->pending, sc->key);
		memmove(w->scans, w->scans + 1, --w->nscans * sizeof(*w->scans));
		scan_free(sc);
	}
}

/* Process pid mapped file (dev, ino) at path: known, or searched for ITT's names (scan_step). */
static void on_file(struct itt_watch *w, int pid, unsigned int maj, unsigned int min, uint64_t ino, const char *path)
{
	uint64_t key = file_key(maj, min, ino);
	void *v = u64map_get(&w->files, key);

	if (!path || path[0] != '/' || u64map_get(&w->pids, (uint64_t)pid))
		return;
	if (!v) {
		scan_add(w, pid, key, ino, path);
		return;
	}
	remember(w, key, KIND(v));
	on_kind(w, pid, KIND(v));
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
	if (w->mev.lost && !w->lost_said) {
		warn_add("--itt: %llu mapping records lost (a ring of %d pages was full): a process that mapped a "
			 "library with ITT's names then is not told how to start its collector", w->mev.lost,
			 MMAP_EVENTS_RING_PAGES);
		w->lost_said = true;
	}
	scan_step(w);
}

void itt_watch_stop(struct itt_watch *w)
{
	for (size_t i = 0; i < w->nscans; i++)
		scan_free(w->scans[i]);
	w->nscans = 0;
	u64map_free(&w->pending);
	mmap_events_close(&w->mev);
	u64map_free(&w->files);
	u64map_free(&w->pids);
}
