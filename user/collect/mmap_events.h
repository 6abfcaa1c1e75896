/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * mmap_events: the executable mappings the target processes make, learned
 * from the kernel as they happen (perf's way: PERF_RECORD_MMAP2 records of a
 * dummy software event with attr.mmap2, mmap_data off), not by reading
 * /proc/PID/maps now and then: a library mapped by a process that exits 1 ms
 * later, or mapped and unmapped between two reads, is still seen.
 *
 * One event per (thread, CPU) with inherit for the targets (a thread or
 * process they start later is followed by the kernel), or one per CPU for
 * every process (pid -1: -a, the daemon, and targets with more threads than
 * MMAP_EVENTS_MAX_RINGS allows, whose records are then picked by pid).  Each has its own ring buffer
 * (the kernel refuses one ring for an inherited per-task event on every
 * CPU), drained by mmap_events_drain().  A record gives the mapping's
 * process and thread, file name, (dev, inode), protection, offset and time
 * (CLOCK_MONOTONIC).
 */
#ifndef TMABPF_MMAP_EVENTS_H
#define TMABPF_MMAP_EVENTS_H
#include <stdbool.h>
#include <stddef.h>

#define MMAP_EVENTS_RING_PAGES 16	/* data pages per ring (64 KiB): a few hundred mappings */
#define MMAP_EVENTS_MAX_RINGS 256	/* more (threads x CPUs): one event per CPU for every process instead,
					 * keeping the followed processes' records (those they start later are
					 * then not followed) */

struct mmap_event {
	int pid, tid;
	unsigned long long addr, len, pgoff;
	unsigned int maj, min;		/* the file's device */
	unsigned long long ino;
	unsigned int prot, flags;	/* PROT_*, MAP_* */
	unsigned long long time_ns;	/* CLOCK_MONOTONIC */
	const char *path;		/* as the kernel names it (d_path) */
};

typedef void (*mmap_event_fn)(void *ctx, const struct mmap_event *ev);

struct mmap_events {
	int nrings;
	int *fds;
	void **rings;			/* each: the control page, then MMAP_EVENTS_RING_PAGES data pages */
	size_t page;
	unsigned long long lost;	/* records the kernel dropped (a ring was full) */
	unsigned long long seen;	/* mapping records read */
	int *only, nonly;		/* past MMAP_EVENTS_MAX_RINGS: the processes whose records are kept */
};

/* Follow pids[0..npids) (processes: every thread of each, and what they start later); npids 0:
 * every process on the host.  0, or -errno with one line in err (nothing left open). */
int mmap_events_open(struct mmap_events *m, const int *pids, int npids, char *err, size_t errlen);
bool mmap_events_on(const struct mmap_events *m);
/* Read every record written so far; fn for each executable file mapping.  Returns how many. */
int mmap_events_drain(struct mmap_events *m, mmap_event_fn fn, void *ctx);
void mmap_events_close(struct mmap_events *m);

#endif
