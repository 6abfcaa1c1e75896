/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * itt_names: the names of --itt's spans.  The ITT collector (itt/tmabpf_itt.c) numbers each
 * (domain, task name) pair of a process; BPF keys a span's rows by ITT_FN | that number
 * (bpf/uprobes.h: the caller strips it).  Each pair becomes a function of the uprobe set, "domain:task", one per name
 * whatever the process, so that every functions table, --trace and --json show spans as they
 * show probed functions; its library is the collector's file.
 */
#ifndef TMABPF_ITT_NAMES_H
#define TMABPF_ITT_NAMES_H
#include <stdbool.h>
#include "lib/strmap.h"
#include "lib/u64map.h"
#include "sym/uprobe_targets.h"

struct itt_names {
	const char *collector;		/* the collector's path: the spans' module */
	int lib;			/* its index in the set's libraries; -1: not added yet */
	struct u64map ids;		/* pid << 32 | pair id -> function id + 1 */
	struct u64map pids;		/* pid -> its pairs in ids (as a pointer) */
	struct strmap by_name;		/* "domain:task" -> function id + 1 */
	void (*drain)(void *ctx);	/* brings the names that arrived since (a look-up's miss) */
	void *drain_ctx;
};

/* The function of pair id of process pid, added as "domain:task" when new (names made safe
 * elsewhere: they are the profiled program's).  -1 when out of memory. */
int itt_names_add(struct uprobe_set *s, struct itt_names *n, unsigned int pid, unsigned int id, const char *domain,
		  const char *task);
/* The function of pair id of process pid (the names that arrived drained first when it is not
 * known yet), -1 when not named. */
int itt_names_fn(struct itt_names *n, unsigned int pid, unsigned int id);
/* Process pid is gone (the daemon): its pairs go, its functions stay (their sums are the host's). */
void itt_names_forget_pid(struct itt_names *n, unsigned int pid);
void itt_names_free(struct itt_names *n);

#endif
