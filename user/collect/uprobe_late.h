/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * uprobe_late: the processes that mapped a file of a deferred --uprobe before
 * its probes were attached, and how long before: their calls in between are
 * not counted.  A bare name's file is probed when a target maps a file from
 * its directory (uprobe_run.c), and attaching takes milliseconds (most of it
 * the kernel's uprobe registration, which waits for an RCU grace period), so a
 * process that dlopens the library at once may call it first: node-llama-cpp's
 * test child calls ggml_cpu_init 15-30 ms after mapping the addon.
 *
 * The targets' recent executable mappings (the kernel's records, with their
 * times) are kept in a ring: the records of one drain are not in time order
 * across CPUs, so a mapping of the file may be read before or after the
 * attach it lost the race to.  A file attached late is checked against the
 * ring, and each later record against the files attached so far.
 */
#ifndef TMABPF_UPROBE_LATE_H
#define TMABPF_UPROBE_LATE_H
#include "collect/mmap_events.h"
#include "sym/uprobe_targets.h"

#define UPROBE_LATE_RECENT 1024	/* mappings kept: more than the dlopens of a start-up */

struct uprobe_late_map {
	int pid;
	unsigned long long ino, time_ns;
};

struct uprobe_late {
	struct uprobe_late_map recent[UPROBE_LATE_RECENT];
	unsigned long nrecent;			/* mappings seen; recent[] holds the last ones */
	unsigned long long attached_ns[UPROBE_MAX_LIBS];	/* library attached during the run (CLOCK_MONOTONIC); 0: at start */
};

/* A target mapped a file (a mapping record): kept, and said if it is a file attached after that. */
void uprobe_late_mapped(struct uprobe_late *l, struct uprobe_set *set, const struct mmap_event *ev);
/* Library lib of set was attached at now_ns: each kept mapping of it from before is said (one line,
 * except for quiet_pid, whose lateness the caller says) and recorded in set->late. */
void uprobe_late_attached(struct uprobe_late *l, struct uprobe_set *set, int lib, unsigned long long now_ns,
			  int quiet_pid);

#endif
