// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Mappings of a deferred --uprobe's file made before its probes were attached.  See uprobe_late.h. */
#include <string.h>
#include "collect/uprobe_late.h"
#include "lib/warn.h"

/* By inode alone: under overlayfs the records name the lower layer's device, the file's stat the
 * overlay's. */
static bool same_file(const struct uprobe_lib *lib, const struct uprobe_late_map *m)
{
	return m->ino == lib->ino;
}

/* Record (and say, unless quiet) that pid mapped lib ms before its probes were attached; once per
 * (pid, library). */
static void late(struct uprobe_set *set, int pid, int lib, double ms, bool quiet)
{
	for (int i = 0; i < set->nr_late; i++)
		if (set->late[i].pid == pid && set->late[i].lib == lib)
			return;
	if (set->nr_late < UPROBE_MAX_LATE)
		set->late[set->nr_late++] = (struct uprobe_mapped_late){ .pid = pid, .lib = lib, .ms = ms };
	if (!quiet)
		note_print("uprobe: pid %d mapped %s %.1f ms before its probes were attached: its calls in between are "
			   "not counted (a path, --uprobe %s:%s, probes it from the start)", pid, set->libs[lib].module,
			   ms, set->libs[lib].module, set->libs[lib].glob ? set->libs[lib].glob : "GLOB");
}

void uprobe_late_mapped(struct uprobe_late *l, struct uprobe_set *set, const struct mmap_event *ev)
{
	struct uprobe_late_map m = { .pid = ev->pid, .ino = ev->ino, .time_ns = ev->time_ns };

	l->recent[l->nrecent++ % UPROBE_LATE_RECENT] = m;
	for (int i = 0; i < set->nr_libs; i++)
		if (l->attached_ns[i] > m.time_ns && same_file(&set->libs[i], &m))
			late(set, m.pid, i, (l->attached_ns[i] - m.time_ns) / 1e6, false);
}

void uprobe_late_attached(struct uprobe_late *l, struct uprobe_set *set, int lib, unsigned long long now_ns,
			  int quiet_pid)
{
	unsigned long n = l->nrecent < UPROBE_LATE_RECENT ? l->nrecent : UPROBE_LATE_RECENT;

	if (lib < 0 || lib >= UPROBE_MAX_LIBS || l->attached_ns[lib])
		return;	/* the first attach of a library counts: later ones only add functions */
	l->attached_ns[lib] = now_ns;
	for (unsigned long i = 0; i < n; i++) {
		const struct uprobe_late_map *m = &l->recent[i];

		if (m->time_ns < now_ns && same_file(&set->libs[lib], m))
			late(set, m->pid, lib, (now_ns - m->time_ns) / 1e6, m->pid == quiet_pid);
	}
}
