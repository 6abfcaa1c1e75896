/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Loader for bpf/uprobes.bpf.c: per-function deltas, sharing the spine's maps. */
#ifndef TMABPF_UPROBES_LOADER_H
#define TMABPF_UPROBES_LOADER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/uprobes.h"
#include "collect/threads_loader.h"
#include "model/results.h"
#include "sym/uprobe_targets.h"

#define UPROBE_CLASSIC_CAP 256	/* functions attachable without uprobe_multi */

struct uprobes_bpf;
struct bpf_link;

struct uprobes_cfg {
	int max_stacks;		/* threads with a call stack; 0: uprobes_default_stacks() */
	int max_funcs;		/* (function, thread) pairs */
	unsigned int trace_ring_bytes;	/* --trace: span records ring buffer (power of 2); 0 = off */
	unsigned int percall_ring_bytes;	/* --per-call: snapshots ring buffer (power of 2); 0 = off */
	unsigned int itt_ring_bytes;	/* --itt: span names ring buffer (power of 2); 0 = off */
	bool roofline;			/* --roofline: the functions with a roof_cookie read their arguments */
};

enum uprobes_mode {
	UPROBES_SESSION,	/* one uprobe_multi session link per lib: entry and return (kernel >= 6.13) */
	UPROBES_MULTI,		/* an entry and a return uprobe_multi link per lib (>= 6.6) */
	UPROBES_CLASSIC,	/* two links per function, capped */
};

struct uprobes_prog {
	struct uprobes_bpf *skel;
	enum uprobes_mode mode;
	bool multi;			/* uprobe_multi links, session or not (else classic, capped) */
	struct bpf_link **links;	/* per lib: [2*lib] entry, [2*lib+1] return (multi) */
	int nr_links;
	int *link_fds;			/* session: per lib, the link's fd (-1: none) */
	int nr_link_fds;
	int max_funcs;
	int max_stacks;			/* slots (threads with a call stack) */
	int nr_events;
	size_t slot_size;		/* bytes of one slot (ustacks value) */
	const unsigned char *slots;	/* ustacks, mapped read-only */
	size_t slots_len;
	unsigned long long attach_ns;	/* time taken by the last attach */
	uint64_t slot_keys[PERCALL_MAX_FUNCS];	/* --per-call: each slot's key in percall_slots (0: not read yet) */
};

#define UPROBE_SLOTS_MAX 1024			/* default slots ... */
#define UPROBE_SLOTS_BYTES (32u << 20)		/* ... or what this many bytes hold */
/* Bytes one slot takes with nr_events counters, and the default number of slots. */
size_t uprobes_slot_bytes(int nr_events);
int uprobes_default_stacks(int nr_events);

/* Load, reusing the spine's maps (threads_load first). */
int uprobes_load(struct uprobes_prog *u, struct threads_prog *tp, const struct uprobes_cfg *cfg, char *err,
		 size_t errlen);
int uprobes_attach(struct uprobes_prog *u, const struct uprobe_set *set, char *err, size_t errlen);
/* (Re-)create the links of one library: after --max-rate detached functions, or for a library a
 * deferred --uprobe added to set after uprobes_attach (uprobe_multi only). */
int uprobes_reattach_lib(struct uprobes_prog *u, const struct uprobe_set *set, int lib, char *err, size_t errlen);
/* The window every probe counts in (enum uprobe_window): opened once every link is attached;
 * closed before the first detaches, then up to wait_ns for the calls it counts to return.  Returns
 * the threads still inside such a call. */
void uprobes_window_open(struct uprobes_prog *u);
int uprobes_window_close(struct uprobes_prog *u, unsigned long long wait_ns);
int uprobes_read(struct uprobes_prog *u, struct func_row **rows, size_t *n);
/* Drop a (function, thread) row from the funcs map (its thread is gone). */
void uprobes_forget(struct uprobes_prog *u, const struct func_key *key);
/* --roofline: obj's roof_shapes, roof_open, roof_stats and roof_procs become this program's
 * (bpf/roof_work.bpf.h), and its ustacks and uslots (bpf/uslots.bpf.h), before obj is loaded. */
int uprobes_share_roof_maps(const struct uprobes_prog *u, struct bpf_object *obj);
/* --roofline: each shape row still in a thread's slot (uprobes.h: a probed known call's sums not yet
 * in roof_shapes) to add(arg, row); a live read may see a row mid-update. */
void uprobes_roof_rows(const struct uprobes_prog *u, void (*add)(void *arg, const struct roof_row *row), void *arg);
/* BPF run time of the uprobe programs (kernel BPF stats). */
void uprobes_run_stats(struct uprobes_prog *u, unsigned long long *ns, unsigned long long *cnt);
/* The --trace span ring buffer (struct trace_rec records). */
int uprobes_trace_fd(const struct uprobes_prog *u);
/* The --per-call snapshots ring buffer (struct percall_rec records). */
int uprobes_percall_fd(const struct uprobes_prog *u);
/* The key of --per-call slot (>= PERCALL_DIRECT_FUNCS) in percall_slots: a function id, or a span's
 * tgid << 32 | ITT_FN | its pair id.  0, or -ENOENT while no function has it. */
int uprobes_percall_slot_key(struct uprobes_prog *u, unsigned int slot, uint64_t *key);
/* "uprobe_multi session", "uprobe_multi" or "classic uprobes". */
const char *uprobes_mode_name(const struct uprobes_prog *u);
void uprobes_detach(struct uprobes_prog *u);
void uprobes_destroy(struct uprobes_prog *u);

#define ATTACH_UPROBE_SESSION 57	/* BPF_TRACE_UPROBE_SESSION (kernel >= 6.13; not in libbpf 1.4's headers) */
/* One uprobe_multi session link (BPF_TRACE_UPROBE_SESSION, kernel >= 6.13) for entry and return of
 * n offsets in path (cookies may be NULL); the link fd, or -1 and errno.  libbpf 1.4 cannot create it. */
int uprobe_session_link(int prog_fd, const char *path, const unsigned long *offs, const __u64 *cookies, int n);

#endif
