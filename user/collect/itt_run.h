/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * itt_run: the --itt feature for one run.  The ITT collector (itt/tmabpf_itt.c, built to
 * libtmabpf-itt.so) is found next to tmabpf (the build tree), in ../lib/tmabpf from it, or in
 * /usr/lib/tmabpf; a launched command gets INTEL_LIBITTNOTIFY64 (and ..32) naming it.  The
 * collector's three hooks are probed by the uprobe programs (bpf/uprobes.bpf.c), so a span is a
 * frame like a probed call: its rows, nesting, --trace spans and the hot-probe guard come from the
 * uprobe machinery (uprobe_run.c), which drives this file, and --per-call's per-token totals
 * (bpf/percall.bpf.h gives each process' span a slot).  Names arrive through a ring buffer
 * as each process makes them, or are read from the collector's table in a process that made
 * them before tmabpf attached (-p).
 */
#ifndef TMABPF_ITT_RUN_H
#define TMABPF_ITT_RUN_H
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include "collect/itt_watch.h"
#include "collect/uprobes_loader.h"
#include "model/results.h"
#include "sym/itt_names.h"

#define ITT_COLLECTOR "libtmabpf-itt.so"
#define ITT_SYSTEM_DIR "/usr/lib/tmabpf"
#define ITT_RING_BYTES (64u << 10)	/* names: 256 pairs in flight */
#define ITT_TABLE_MAX 8192		/* pairs of one process (the collector's MAX_PAIRS) */

struct ring_buffer;
struct bpf_link;

struct itt_run {
	char path[PATH_MAX];		/* the collector */
	struct itt_names names;
	struct ring_buffer *rb;		/* name records */
	struct bpf_link *links[3];	/* begin, end, name */
	struct uprobe_set *set;		/* where the names go */
	bool other_collector;		/* INTEL_LIBITTNOTIFY64 named another collector */
	int unloaded;			/* -p pids without the collector (said at the start) */
	unsigned long long ino, dev;	/* the collector's file, as the targets' maps show it */
	unsigned long pairs_off, npairs_off;	/* its tmabpf_itt_pairs and _npairs (0: unknown) */
	unsigned long long unnamed;	/* spans whose name never came */
	bool host;			/* every process (the daemon, -a): itt_watch says who lacks the collector */
	struct itt_watch watch;
};

/* Find the collector (0), or -ENOENT with one line in err saying where it was looked for and the fix. */
int itt_run_find(struct itt_run *r, char *err, size_t errlen);
/* -p: each pid that has not loaded the collector gets one line saying how to start it. */
void itt_run_check_pids(struct itt_run *r, const int *pids, int npids);
/* For a launched command: INTEL_LIBITTNOTIFY64 and INTEL_LIBITTNOTIFY32 name the collector in
 * tmabpf's environment, which the command inherits; one already naming another collector is kept
 * and said (the command loads that one: no spans). */
void itt_run_env(struct itt_run *r);
/* Probe the collector's hooks (the uprobe programs loaded with cfg.itt_ring_bytes); 0 or -errno with err. */
int itt_run_attach(struct itt_run *r, struct uprobes_prog *p, struct uprobe_set *set, char *err, size_t errlen);
/* Names that arrived since the last call (and, host-wide, the processes that map ITT since). */
void itt_run_poll(struct itt_run *r);
/* Rows keyed by the collector's ids (ITT_FN | pair id) get their function ids: names drained
 * first; a pair not named yet is looked up in the process' collector table. */
void itt_run_rows(struct itt_run *r, struct func_row *rows, size_t n);
/* The raw id of --trace's span records, as itt_run_rows. */
unsigned int itt_run_fn(struct itt_run *r, unsigned int pid, unsigned int fn);
/* Process pid is gone (the daemon drops its rows): its pairs' names, and the watch's note that it
 * was checked (a new process of that pid is checked again). */
void itt_run_forget_pid(struct itt_run *r, unsigned int pid);
/* End of run: no span at all is said in one line (which libraries emit ITT: docs/itt.md). */
void itt_run_finish(struct itt_run *r, const struct func_row *rows, size_t n);
void itt_run_detach(struct itt_run *r);
void itt_run_free(struct itt_run *r);

#endif
