/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * maps_watch: the executable files the target processes map during a run.  Fed by the kernel's
 * mapping records as they happen (collect/mmap_events.c, maps_watch_add) after one read of
 * /proc/PID/maps for the state at attach time (maps_watch_poll); where the records cannot be had,
 * by polling the maps (collect/uprobe_run.c: every MAPS_WATCH_MS; every MAPS_WATCH_FAST_MS in the
 * first MAPS_WATCH_EARLY_NS and while a deferred --uprobe waits for its file), said in one line.
 * It tells the uprobes which libraries a process mapped later (dlopen: deferred --uprobe
 * NAME:GLOB attaches then) and, at the end, which probed libraries it never mapped and what it
 * mapped instead.  Limit of polling alone: a file mapped and unmapped again between two polls is
 * not seen.
 */
#ifndef TMABPF_MAPS_WATCH_H
#define TMABPF_MAPS_WATCH_H
#include <stdbool.h>
#include <stddef.h>

#define MAPS_WATCH_FAST_MS 50	/* while a deferred --uprobe waits, and early on */
#define MAPS_WATCH_MS 500
#define MAPS_WATCH_EARLY_NS 3000000000ULL

struct maps_watch {
	char **paths;		/* every executable file mapped so far (as the target sees it), in order seen */
	int *pids;		/* the process that mapped it first */
	size_t n, cap;
};

/* Called for each file that a watched process maps for the first time. */
typedef void (*maps_watch_fn)(void *ctx, int pid, const char *path);

/* Read the maps of pids[0..npids); report files not seen before.  Returns how many were new. */
int maps_watch_poll(struct maps_watch *w, const int *pids, int npids, maps_watch_fn fn, void *ctx);
/* Add one mapped file (pid mapped it): 1 when new, 0 when seen before, -1 out of memory. */
int maps_watch_add(struct maps_watch *w, int pid, const char *path);
/* Has any watched process mapped path (its real path as the target sees it)? */
bool maps_watch_seen(const struct maps_watch *w, const char *path);
/* Does file name (a bare library name: "libfoo.so", "libfoo.so.1") name this path's file: the same
 * name, or a versioned name it is a prefix of (libfoo.so -> libfoo.so.1.2)? */
bool maps_watch_name_matches(const char *name, const char *path);
void maps_watch_free(struct maps_watch *w);

#endif
