// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collect/bpf_util.h"
#include "collect/link_detach.h"
#include "collect/map_batch.h"
#include "collect/uprobes_loader.h"
#include "lib/clock.h"
#include "lib/u64map.h"
#include "lib/warn.h"
#include "model/counters.h"
#include "threads.skel.h"
#include "uprobes.skel.h"


/* BPF_TRACE_UPROBE_SESSION (kernel >= 6.13); Debian 12's linux/bpf.h and libbpf 1.4 predate it. */

/* A slot's value (tmabpf.h), in whole 4 KiB pages: the part a shallow call
 * stack touches (header, rows, first frames) then lies in one page. */
size_t uprobes_slot_bytes(int nr_events)
{
	size_t page = 4096;

	return (USLOT_BYTES((size_t)nr_events) + page - 1) / page * page;
}

int uprobes_default_stacks(int nr_events)
{
	size_t fit = UPROBE_SLOTS_BYTES / uprobes_slot_bytes(nr_events);

	return fit < UPROBE_SLOTS_MAX ? (int)fit : UPROBE_SLOTS_MAX;
}

/* Slots: sized for the events counted. */
static int set_slot_maps(struct uprobes_prog *u, int slots)
{
	struct uprobes_bpf *k = u->skel;
	int r = 0;

	r |= bpf_map__set_max_entries(k->maps.ustacks, slots);
	r |= bpf_map__set_value_size(k->maps.ustacks, u->slot_size);
	r |= bpf_map__set_max_entries(k->maps.uslots, slots);
	r |= bpf_map__set_max_entries(k->maps.ufree, slots);
	return r ? -EINVAL : 0;
}

/* Every slot starts free; the slots are mapped for uprobes_read(). */
static int slots_init(struct uprobes_prog *u)
{
	int fd = bpf_map__fd(u->skel->maps.ufree);
	long page = sysconf(_SC_PAGESIZE);
	void *m;

	for (__u32 i = 0; i < (__u32)u->max_stacks; i++)
		if (bpf_map_update_elem(fd, NULL, &i, BPF_ANY))
			return -errno;
	u->slots_len = ((size_t)u->max_stacks * u->slot_size + page - 1) / page * page;
	m = mmap(NULL, u->slots_len, PROT_READ, MAP_SHARED, bpf_map__fd(u->skel->maps.ustacks), 0);
	if (m == MAP_FAILED)
		return -errno;
	u->slots = m;
	return 0;
}

static int open_and_load(struct uprobes_prog *u, struct threads_prog *tp, const struct uprobes_cfg *cfg,
			 enum uprobes_mode mode)
{
	int r;

	u->skel = uprobes_bpf__open();
	if (!u->skel)
		return -errno;
	u->skel->rodata->account_cfg = tp->acfg;
	r = set_slot_maps(u, u->max_stacks);
	if (r)
		goto out;
	bpf_map__set_max_entries(u->skel->maps.funcs, cfg->max_funcs);
	if (cfg->trace_ring_bytes) {
		u->skel->rodata->cfg_trace = true;
		u->skel->rodata->cfg_trace_wake = cfg->trace_ring_bytes / 4;
		bpf_map__set_max_entries(u->skel->maps.trace_rb, cfg->trace_ring_bytes);
	}
	if (cfg->percall_ring_bytes) {
		u->skel->rodata->cfg_percall = true;
		bpf_map__set_max_entries(u->skel->maps.percall_rb, cfg->percall_ring_bytes);
	}
	u->skel->rodata->cfg_roofline = cfg->roofline;
	u->skel->rodata->cfg_roof_windows = cfg->roofline && cfg->percall_ring_bytes;
	if (cfg->itt_ring_bytes) {
		u->skel->rodata->cfg_itt_wake = cfg->itt_ring_bytes / 4;
		bpf_map__set_max_entries(u->skel->maps.itt_rb, cfg->itt_ring_bytes);
	}
	bpf_program__set_autoload(u->skel->progs.tmabpf_itt_begin, cfg->itt_ring_bytes);
	bpf_program__set_autoload(u->skel->progs.tmabpf_itt_end, cfg->itt_ring_bytes);
	bpf_program__set_autoload(u->skel->progs.tmabpf_itt_name, cfg->itt_ring_bytes);
	bpf_program__set_autoload(u->skel->progs.tmabpf_usess, mode == UPROBES_SESSION);
	bpf_program__set_expected_attach_type(u->skel->progs.tmabpf_usess, ATTACH_UPROBE_SESSION);
	bpf_program__set_autoload(u->skel->progs.tmabpf_uentry, mode == UPROBES_MULTI);
	bpf_program__set_autoload(u->skel->progs.tmabpf_uexit, mode == UPROBES_MULTI);
	bpf_program__set_autoload(u->skel->progs.tmabpf_uentry1, mode == UPROBES_CLASSIC);
	bpf_program__set_autoload(u->skel->progs.tmabpf_uexit1, mode == UPROBES_CLASSIC);
	r = threads_share_maps(tp, u->skel->obj);
	if (!r)
		r = uprobes_bpf__load(u->skel);
out:
	if (r) {
		uprobes_bpf__destroy(u->skel);
		u->skel = NULL;
	}
	return r;
}

static const struct bpf_hints uprobe_hints = { .size_opt = "--max-stacks or --max-funcs" };

int uprobes_load(struct uprobes_prog *u, struct threads_prog *tp, const struct uprobes_cfg *cfg, char *err,
		 size_t errlen)
{
	int r;

	memset(u, 0, sizeof(*u));
	u->max_funcs = cfg->max_funcs;
	u->nr_events = tp->acfg.nr_events;
	u->max_stacks = cfg->max_stacks > 0 ? cfg->max_stacks : uprobes_default_stacks(u->nr_events);
	u->slot_size = uprobes_slot_bytes(u->nr_events);
	/* the environment variables test the fallbacks on new kernels */
	u->mode = getenv("TMABPF_FORCE_CLASSIC_UPROBES") ? UPROBES_CLASSIC
		  : getenv("TMABPF_NO_UPROBE_SESSION")	   ? UPROBES_MULTI
							   : UPROBES_SESSION;
	r = u->mode == UPROBES_SESSION ? open_and_load(u, tp, cfg, UPROBES_SESSION) : -EOPNOTSUPP;
	if (r && u->mode != UPROBES_CLASSIC) {
		u->mode = UPROBES_MULTI;	/* kernel < 6.13: no uprobe sessions */
		r = open_and_load(u, tp, cfg, UPROBES_MULTI);
	}
	u->multi = !r && u->mode != UPROBES_CLASSIC;
	if (r) {
		u->mode = UPROBES_CLASSIC;
		r = open_and_load(u, tp, cfg, UPROBES_CLASSIC);
		if (!r)
			warn_add("this kernel lacks uprobe_multi links: using classic uprobes, at most %d "
				 "functions, slower to attach and detach", UPROBE_CLASSIC_CAP);
	}
	if (r)
		return bpf_load_error(r, err, errlen, "loading the uprobe programs", &uprobe_hints);
	r = slots_init(u);
	if (r) {
		err_set(err, errlen, "setting up %d call-stack slots: %s", u->max_stacks, strerror(-r));
		return r;
	}
	u->skel->links.tmabpf_uthrexit = bpf_program__attach(u->skel->progs.tmabpf_uthrexit);
	if (!u->skel->links.tmabpf_uthrexit) {
		r = -errno;
		err_set(err, errlen, "attaching sched_process_exit for uprobes: %s", strerror(-r));
		return r;
	}
	return 0;
}

/* Function i's attach cookie: i, and its roofline cookie above (bpf/uprobes.bpf.c). */
static __u64 uprobe_cookie(const struct uprobe_set *set, int i)
{
	return (__u64)set->funcs[i].roof_cookie << 32 | (__u64)i;
}

static int lib_funcs(const struct uprobe_set *set, int lib, unsigned long *offs, __u64 *cookies)
{
	int n = 0;

	for (int i = 0; i < set->nr_funcs; i++) {
		if (set->funcs[i].lib != lib || set->funcs[i].detached || set->funcs[i].insn.cls == UINSN_REFUSED ||
		    set->funcs[i].itt)
			continue;
		offs[n] = set->funcs[i].place.offset;
		cookies[n++] = uprobe_cookie(set, i);
	}
	return n;
}

/* One session link for entry and return; libbpf 1.4 cannot create it (bpf_link_create() refuses
 * uprobe_multi options with an attach type it does not know), so the raw syscall. */
int uprobe_session_link(int prog_fd, const char *path, const unsigned long *offs, const __u64 *cookies, int n)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.link_create.prog_fd = prog_fd;
	a.link_create.attach_type = ATTACH_UPROBE_SESSION;
	a.link_create.uprobe_multi.path = (__u64)(unsigned long)path;
	a.link_create.uprobe_multi.offsets = (__u64)(unsigned long)offs;
	a.link_create.uprobe_multi.cookies = (__u64)(unsigned long)cookies;
	a.link_create.uprobe_multi.cnt = n;
	return syscall(SYS_bpf, BPF_LINK_CREATE, &a, sizeof(a));
}

static int attach_multi(struct uprobes_prog *u, const struct uprobe_set *set, int lib, char *err, size_t errlen)
{
	unsigned long *offs = calloc(set->nr_funcs, sizeof(*offs));
	__u64 *cookies = calloc(set->nr_funcs, sizeof(*cookies));
	int n = offs && cookies ? lib_funcs(set, lib, offs, cookies) : -ENOMEM, r = 0;

	if (n > 0 && u->mode == UPROBES_SESSION) {
		u->link_fds[lib] = uprobe_session_link(bpf_program__fd(u->skel->progs.tmabpf_usess), set->libs[lib].attach_path,
						offs, cookies, n);
		if (u->link_fds[lib] < 0) {
			r = -errno;
			err_set(err, errlen, "attaching %d uprobes (session link) to %s: %s", n, set->libs[lib].module,
				 strerror(-r));
		}
		n = 0;
	}
	for (int ret = 0; n > 0 && ret < 2; ret++) {
		LIBBPF_OPTS(bpf_uprobe_multi_opts, o, .offsets = offs, .cookies = cookies, .cnt = n, .retprobe = ret);
		struct bpf_program *p = ret ? u->skel->progs.tmabpf_uexit : u->skel->progs.tmabpf_uentry;
		struct bpf_link *l = bpf_program__attach_uprobe_multi(p, -1, set->libs[lib].attach_path, NULL, &o);

		if (!l) {
			r = -errno;
			err_set(err, errlen, "attaching %d uprobes to %s: %s", n, set->libs[lib].module, strerror(-r));
			break;
		}
		u->links[2 * lib + ret] = l;
	}
	free(offs);
	free(cookies);
	return n < 0 ? n : r;
}

static int attach_classic(struct uprobes_prog *u, const struct uprobe_set *set, char *err, size_t errlen)
{
	int k = 0;

	for (int i = 0; i < set->nr_funcs; i++) {
		if (set->funcs[i].detached || set->funcs[i].insn.cls == UINSN_REFUSED || set->funcs[i].itt)
			continue;
		if (k / 2 >= UPROBE_CLASSIC_CAP) {
			err_set(err, errlen, "%d functions matched; classic uprobes are capped at %d (kernel lacks "
				 "uprobe_multi): narrow the glob", set->nr_funcs, UPROBE_CLASSIC_CAP);
			return -E2BIG;
		}
		for (int ret = 0; ret < 2; ret++) {
			LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = uprobe_cookie(set, i), .retprobe = ret);
			struct bpf_program *p = ret ? u->skel->progs.tmabpf_uexit1 : u->skel->progs.tmabpf_uentry1;
			struct bpf_link *l = bpf_program__attach_uprobe_opts(p, -1, set->libs[set->funcs[i].lib].attach_path,
									     set->funcs[i].place.offset, &o);

			if (!l) {
				err_set(err, errlen, "attaching uprobe %s: %s", set->funcs[i].symbol, strerror(errno));
				return -errno;
			}
			u->links[k++] = l;
		}
	}
	u->nr_links = k;
	return 0;
}

/* --per-call: the marker and spin functions' bits, before their links exist. */
static void set_markers(struct uprobes_prog *u, const struct uprobe_set *set)
{
	for (int i = 0; i < set->nr_funcs && i / 64 < PERCALL_MARKER_WORDS; i++) {
		if (set->funcs[i].marker)
			u->skel->bss->percall_marker[i / 64] |= 1ULL << (i % 64);
		if (set->funcs[i].spin)
			u->skel->bss->percall_spin_fns[i / 64] |= 1ULL << (i % 64);
	}
}

int uprobes_attach(struct uprobes_prog *u, const struct uprobe_set *set, char *err, size_t errlen)
{
	unsigned long long t0 = mono_ns();
	int r = 0;

	/* multi: room for every library, those a deferred --uprobe adds later included */
	u->nr_links = u->multi ? 2 * UPROBE_MAX_LIBS : 2 * set->nr_funcs;
	u->links = calloc(u->nr_links ? u->nr_links : 1, sizeof(*u->links));
	u->nr_link_fds = u->mode == UPROBES_SESSION ? UPROBE_MAX_LIBS : 0;
	u->link_fds = malloc((u->nr_link_fds ? u->nr_link_fds : 1) * sizeof(*u->link_fds));
	if (!u->links || !u->link_fds)
		return -ENOMEM;
	for (int i = 0; i < u->nr_link_fds; i++)
		u->link_fds[i] = -1;
	set_markers(u, set);
	if (u->multi)
		for (int lib = 0; lib < set->nr_libs && !r; lib++)
			r = attach_multi(u, set, lib, err, errlen);
	else
		r = attach_classic(u, set, err, errlen);
	u->attach_ns = mono_ns() - t0;
	return r;
}

int uprobes_reattach_lib(struct uprobes_prog *u, const struct uprobe_set *set, int lib, char *err, size_t errlen)
{
	if (!u->multi) {
		err_set(err, errlen, "detaching single functions needs uprobe_multi");
		return -EOPNOTSUPP;
	}
	for (int ret = 0; ret < 2; ret++) {
		bpf_link__destroy(u->links[2 * lib + ret]);
		u->links[2 * lib + ret] = NULL;
	}
	if (u->mode == UPROBES_SESSION && lib < u->nr_link_fds)
		link_fds_close_all(&u->link_fds[lib], 1);
	set_markers(u, set);
	return attach_multi(u, set, lib, err, errlen);
}

void uprobes_window_open(struct uprobes_prog *u)
{
	__atomic_store_n(&u->skel->bss->uprobe_window, UWIN_OPEN, __ATOMIC_RELEASE);
}

/* Threads inside a call that counts (a slot with frames, entered while the window was open). */
static int counted_calls_open(const struct uprobes_prog *u)
{
	int n = 0;

	for (int s = 0; s < u->max_stacks; s++) {
		const struct ustack *st = (const void *)(u->slots + (size_t)s * u->slot_size);

		if (__atomic_load_n(&st->tid, __ATOMIC_ACQUIRE) && __atomic_load_n(&st->depth, __ATOMIC_RELAXED) &&
		    !__atomic_load_n(&st->outside, __ATOMIC_RELAXED))
			n++;
	}
	return n;
}

int uprobes_window_close(struct uprobes_prog *u, unsigned long long wait_ns)
{
	unsigned long long t0 = mono_ns();
	int n;

	if (!u->skel || !u->slots)
		return 0;
	__atomic_store_n(&u->skel->bss->uprobe_window, UWIN_CLOSED, __ATOMIC_RELEASE);
	while ((n = counted_calls_open(u)) && mono_ns() - t0 < wait_ns)
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	return n;
}

/* The row of (fn, tid) in rows[0..*n), appended when new; NULL when full. */
static struct func_row *row_find(struct u64map *idx, struct func_row *rows, size_t *n, size_t cap, __u32 fn,
				 __u32 tid, __u32 pid)
{
	__u64 key = (__u64)fn << 32 | tid;
	uintptr_t k = (uintptr_t)u64map_get(idx, key);

	if (k)
		return &rows[k - 1];
	if (*n >= cap || u64map_put(idx, key, (void *)(uintptr_t)(*n + 1)))
		return NULL;
	memset(&rows[*n], 0, sizeof(rows[*n]));
	rows[*n].key = (struct func_key){ .fn = fn, .tid = tid };
	rows[*n].s.pid = pid;
	return &rows[(*n)++];
}

/* A slot's cached row (head, c[nr_events], self[nr_events]) into its
 * (function, thread) row.  BPF writes the "self - inclusive" fields after the
 * inclusive ones (func_head), so reading them first can only make a live
 * read's self too large for a moment, never wrap below zero. */
static void add_cached_row(struct func_row *to, const struct func_head *h, int nr_events)
{
	const struct counter_val *c = (const void *)(h + 1);
	struct func_stats s;

	memset(&s, 0, sizeof(s));
	s.self_oncpu_ns = __atomic_load_n(&h->self_oncpu_ns, __ATOMIC_RELAXED);
	memcpy(s.self, c + nr_events, nr_events * sizeof(*c));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	s.pid = h->pid;
	s.calls = h->calls;
	s.returns = h->returns;
	s.unmatched = h->unmatched;
	s.wall_ns = h->wall_ns;
	s.oncpu_ns = h->oncpu_ns;
	s.offcpu_blocked_ns = h->offcpu_blocked_ns;
	s.offcpu_runqueue_ns = h->offcpu_runqueue_ns;
	memcpy(s.c, c, nr_events * sizeof(*c));
	func_stats_add(&to->s, &s, nr_events);
}

/* self = inclusive + (self - inclusive), clamped at 0 (a live read). */
static __u64 self_from_bpf(__u64 incl, __u64 adj)
{
	__u64 v = incl + adj;

	return (__s64)v < 0 ? 0 : v;
}

/* A row as BPF keeps it (func_head: calls without a matched return,
 * "self - inclusive") into what struct func_stats means. */
static void func_stats_from_bpf(struct func_stats *s, int nr_events)
{
	s->calls += s->returns;
	s->self_oncpu_ns = self_from_bpf(s->oncpu_ns, s->self_oncpu_ns);
	for (int e = 0; e < nr_events; e++) {
		s->self[e].value = self_from_bpf(s->c[e].value, s->self[e].value);
		s->self[e].enabled = self_from_bpf(s->c[e].enabled, s->self[e].enabled);
		s->self[e].running = self_from_bpf(s->c[e].running, s->self[e].running);
	}
}

/* Rows cached in the threads' slots, and calls still in progress (their
 * frames are open), which count as calls too.  The slots are read while BPF
 * writes them: a live read may see a row mid-update; the last read, after
 * detaching, is exact. */
static void add_slots(struct uprobes_prog *u, struct u64map *idx, struct func_row *rows, size_t *n, size_t cap)
{
	for (int s = 0; s < u->max_stacks; s++) {
		const struct ustack *st = (const void *)(u->slots + (size_t)s * u->slot_size);
		__u32 tid = __atomic_load_n(&st->tid, __ATOMIC_ACQUIRE), depth = st->depth;
		struct func_row *row;

		if (!tid)
			continue;
		if (__atomic_load_n(&st->outside, __ATOMIC_RELAXED))
			depth = 0;	/* a call outside the window: it counts nothing */
		for (int k = 0; k < TMABPF_ROW_CACHE; k++) {
			const struct func_head *h = (const void *)((const unsigned char *)(st + 1) +
								   k * USLOT_ROW_BYTES((size_t)u->nr_events));

			if (h->fn1 && (row = row_find(idx, rows, n, cap, h->fn1 - 1, tid, h->pid)))
				add_cached_row(row, h, u->nr_events);
		}
		for (__u32 i = 0; i < depth && i < TMABPF_MAX_DEPTH; i++)
			if ((row = row_find(idx, rows, n, cap, st->ent[i].fn, tid, st->pid)))
				row->s.calls++;
	}
}

int uprobes_read(struct uprobes_prog *u, struct func_row **rows, size_t *n)
{
	int fd = bpf_map__fd(u->skel->maps.funcs);
	size_t hcap = (size_t)u->max_funcs, cap = hcap + (size_t)u->max_stacks * TMABPF_ROW_CACHE;
	struct func_row *out = calloc(cap ? cap : 1, sizeof(*out));
	struct func_stats *vals = calloc(hcap ? hcap : 1, sizeof(*vals));
	struct func_key *keys = calloc(hcap ? hcap : 1, sizeof(*keys));
	struct u64map idx = {};
	int r = out && vals && keys ? 0 : -ENOMEM;

	*n = 0;
	if (!r)
		r = map_read_all(fd, sizeof(*keys), sizeof(*vals), keys, vals, hcap, n);
	for (size_t i = 0; !r && i < *n; i++) {
		out[i].key = keys[i];
		out[i].s = vals[i];
		if (u64map_put(&idx, (__u64)keys[i].fn << 32 | keys[i].tid, (void *)(uintptr_t)(i + 1)))
			r = -ENOMEM;
	}
	free(vals);
	free(keys);
	if (!r && u->slots)
		add_slots(u, &idx, out, n, cap);
	for (size_t i = 0; !r && i < *n; i++)
		func_stats_from_bpf(&out[i].s, u->nr_events);
	u64map_free(&idx);
	if (r) {
		free(out);
		*n = 0;
		return r;
	}
	*rows = out;
	return 0;
}

void uprobes_forget(struct uprobes_prog *u, const struct func_key *key)
{
	bpf_map_delete_elem(bpf_map__fd(u->skel->maps.funcs), key);
}

int uprobes_share_roof_maps(const struct uprobes_prog *u, struct bpf_object *obj)
{
	static const char *const names[] = { "roof_shapes", "roof_open", "roof_stats", "roof_procs", "ustacks", "uslots" };

	return bpf_share_maps(u->skel->obj, obj, names, sizeof(names) / sizeof(names[0]));
}

void uprobes_roof_rows(const struct uprobes_prog *u, void (*add)(void *arg, const struct roof_row *row), void *arg)
{
	for (int s = 0; u->slots && s < u->max_stacks; s++) {
		const struct ustack *st = (const void *)(u->slots + (size_t)s * u->slot_size);

		if (!__atomic_load_n(&st->tid, __ATOMIC_ACQUIRE))
			continue;
		for (int i = 0; i < ROOF_SLOT_ROWS; i++) {
			struct roof_row row = st->roof_rows[i];

			if (row.s.calls)
				add(arg, &row);
		}
	}
}

void uprobes_run_stats(struct uprobes_prog *u, unsigned long long *ns, unsigned long long *cnt)
{
	*ns = *cnt = 0;
	if (u->skel)
		obj_run_stats_add(u->skel->obj, ns, cnt);
}

int uprobes_trace_fd(const struct uprobes_prog *u)
{
	return bpf_map__fd(u->skel->maps.trace_rb);
}

int uprobes_percall_fd(const struct uprobes_prog *u)
{
	return bpf_map__fd(u->skel->maps.percall_rb);
}

const char *uprobes_mode_name(const struct uprobes_prog *u)
{
	switch (u->mode) {
	case UPROBES_SESSION: return "uprobe_multi session";
	case UPROBES_MULTI: return "uprobe_multi";
	default: return "classic uprobes";
	}
}

void uprobes_detach(struct uprobes_prog *u)
{
	link_detach_all(u->links, u->nr_links);
	if (u->link_fds)
		link_fds_close_all(u->link_fds, u->nr_link_fds);
	free(u->links);
	free(u->link_fds);
	u->links = NULL;
	u->link_fds = NULL;
	u->nr_links = 0;
	u->nr_link_fds = 0;
}

int uprobes_percall_slot_key(struct uprobes_prog *u, unsigned int slot, uint64_t *key)
{
	int fd = bpf_map__fd(u->skel->maps.percall_slots);
	uint64_t k, *prev = NULL;
	uint32_t v;

	if (slot >= PERCALL_MAX_FUNCS)
		return -ENOENT;
	if (!u->slot_keys[slot])	/* slots, once given, are kept: read them all again */
		for (; !bpf_map_get_next_key(fd, prev, &k); prev = &k)
			if (!bpf_map_lookup_elem(fd, &k, &v) && v < PERCALL_MAX_FUNCS)
				u->slot_keys[v] = k;
	*key = u->slot_keys[slot];
	return *key ? 0 : -ENOENT;
}

void uprobes_destroy(struct uprobes_prog *u)
{
	uprobes_detach(u);
	if (u->slots)
		munmap((void *)u->slots, u->slots_len);
	u->slots = NULL;
	uprobes_bpf__destroy(u->skel);
	u->skel = NULL;
}
