/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * itt_watch: --itt over the whole host (the daemon, -a).  A process that maps a library carrying
 * ITT's static part (oneDNN, Intel's OpenMP, what ittapi builds: the file names both
 * INTEL_LIBITTNOTIFY64 and __itt_api_init) but neither maps tmabpf's collector nor names it in
 * INTEL_LIBITTNOTIFY64 gets one line, once, saying how to start it (itt_run_check_pids).  The
 * processes running at the start are read from /proc once; those that map such a library later
 * are learned from the kernel's mapping records (mmap_events.h).  Each file is read once while it
 * is among the ITT_WATCH_FILES last used; the least recently used is forgotten for a new one (a
 * host maps ever new files over its life: builds, JIT-compiled libraries, users' own).
 *
 * A file is searched for ITT's names up to ITT_SCAN_MAX bytes (said in one line when cut there),
 * for ITT_SCAN_POLL_NS a poll at most over all files, in the order they were mapped: a user's huge
 * files held the loop (the daemon's refresh) for seconds each.  At most ITT_WATCH_SCANS files wait (said
 * once when more come: those are searched at their next mapping).
 */
#ifndef TMABPF_ITT_WATCH_H
#define TMABPF_ITT_WATCH_H
#include "collect/mmap_events.h"
#include "lib/u64map.h"

#define ITT_WATCH_FILES 4096	/* files remembered (16 bytes each, twice over in the table) */
/* the largest real libraries are ~2 GiB; a user's huge sparse file would hold root's daemon reading
 * zeros for minutes (1 TiB: ~3 min of a CPU) */
#define ITT_SCAN_MAX (2ULL << 30)
#define ITT_SCAN_POLL_NS 50000000ULL	/* searching a poll, at most (2 GiB of a sparse file: ~5 s of a CPU) */
#define ITT_WATCH_SCANS 1024		/* files waiting to be searched */

struct itt_run;
struct itt_scan;

struct itt_watch {
	struct itt_run *r;
	struct mmap_events mev;
	struct u64map files;	/* (dev, inode) -> last use << 2 | 1: carries ITT, | 2: does not */
	uint64_t uses;		/* the clock of files' last uses */
	struct u64map pids;	/* processes checked already */
	struct itt_scan *scans[ITT_WATCH_SCANS];	/* waiting to be searched, in the order mapped */
	size_t nscans;
	struct u64map pending;	/* (dev, inode) -> its struct itt_scan */
	bool full_said;		/* ITT_WATCH_SCANS waiting: said once */
	bool lost_said;		/* mapping records lost: said once */
};

/* Start watching (after the collector's hooks are attached); a failure is said in one line and
 * the run goes on without the lines. */
void itt_watch_start(struct itt_watch *w, struct itt_run *r);
/* The mappings made since the last call. */
void itt_watch_poll(struct itt_watch *w);
void itt_watch_stop(struct itt_watch *w);

#endif
