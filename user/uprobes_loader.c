// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "threads.skel.h"
#include "uprobes.skel.h"
#include "uprobes_loader.h"
#include "link_detach.h"
#include "map_batch.h"
#include "warn.h"

static unsigned long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* BPF_TRACE_UPROBE_SESSION (kernel >= 6.13); Debian 12's linux/bpf.h and libbpf 1.4 predate it. */

static int open_and_load(struct uprobes_prog *u, struct threads_prog *tp, const struct perf_counters *pc,
			 const struct threads_cfg *tcfg, const struct uprobes_cfg *cfg, enum uprobes_mode mode)
{
	int r;

	u->skel = uprobes_bpf__open();
	if (!u->skel)
		return -errno;
	u->skel->rodata->cfg_nr_events = pc->nr_events;
	u->skel->rodata->cfg_nr_cpus = pc->nr_cpus;
	u->skel->rodata->cfg_filter = tcfg->filter;
	u->skel->rodata->cfg_follow_fork = tcfg->follow_fork;
	u->skel->rodata->cfg_main_id = tcfg->main_id;
	u->skel->rodata->cfg_cgroup = tcfg->cgroup;
	bpf_map__set_max_entries(u->skel->maps.stacks, cfg->max_stacks);
	bpf_map__set_max_entries(u->skel->maps.funcs, cfg->max_funcs);
	if (cfg->trace_ring_bytes) {
		u->skel->rodata->cfg_trace = true;
		u->skel->rodata->cfg_trace_wake = cfg->trace_ring_bytes / 4;
		bpf_map__set_max_entries(u->skel->maps.trace_rb, cfg->trace_ring_bytes);
	}
	bpf_program__set_autoload(u->skel->progs.tmabpf_usess, mode == UPROBES_SESSION);
	bpf_program__set_expected_attach_type(u->skel->progs.tmabpf_usess, ATTACH_UPROBE_SESSION);
	bpf_program__set_autoload(u->skel->progs.tmabpf_uentry, mode == UPROBES_MULTI);
	bpf_program__set_autoload(u->skel->progs.tmabpf_uexit, mode == UPROBES_MULTI);
	bpf_program__set_autoload(u->skel->progs.tmabpf_uentry1, mode == UPROBES_CLASSIC);
	bpf_program__set_autoload(u->skel->progs.tmabpf_uexit1, mode == UPROBES_CLASSIC);
	r = threads_share_maps(tp, u->skel->obj);
	if (!r)
		r = uprobes_bpf__load(u->skel);
	if (r) {
		uprobes_bpf__destroy(u->skel);
		u->skel = NULL;
	}
	return r;
}

int uprobes_load(struct uprobes_prog *u, struct threads_prog *tp, const struct perf_counters *pc,
		 const struct threads_cfg *tcfg, const struct uprobes_cfg *cfg, char *err, size_t errlen)
{
	int r;

	memset(u, 0, sizeof(*u));
	u->max_funcs = cfg->max_funcs;
	/* the environment variables test the fallbacks on new kernels */
	u->mode = getenv("TMABPF_FORCE_CLASSIC_UPROBES") ? UPROBES_CLASSIC
		  : getenv("TMABPF_NO_UPROBE_SESSION")	   ? UPROBES_MULTI
							   : UPROBES_SESSION;
	r = u->mode == UPROBES_SESSION ? open_and_load(u, tp, pc, tcfg, cfg, UPROBES_SESSION) : -EOPNOTSUPP;
	if (r && u->mode != UPROBES_CLASSIC) {
		u->mode = UPROBES_MULTI;	/* kernel < 6.13: no uprobe sessions */
		r = open_and_load(u, tp, pc, tcfg, cfg, UPROBES_MULTI);
	}
	u->multi = !r && u->mode != UPROBES_CLASSIC;
	if (r) {
		u->mode = UPROBES_CLASSIC;
		r = open_and_load(u, tp, pc, tcfg, cfg, UPROBES_CLASSIC);
		if (!r)
			warn_add("this kernel lacks uprobe_multi links: using classic uprobes, at most %d "
				 "functions, slower to attach and detach", UPROBE_CLASSIC_CAP);
	}
	if (r) {
		snprintf(err, errlen, "loading the uprobe programs: %s (rerun with --verbose for libbpf's log)",
			 strerror(-r));
		return r;
	}
	u->skel->links.tmabpf_uthrexit = bpf_program__attach(u->skel->progs.tmabpf_uthrexit);
	if (!u->skel->links.tmabpf_uthrexit) {
		r = -errno;
		snprintf(err, errlen, "attaching sched_process_exit for uprobes: %s", strerror(-r));
		return r;
	}
	return 0;
}

static int lib_funcs(const struct uprobe_set *set, int lib, unsigned long *offs, __u64 *cookies)
{
	int n = 0;

	for (int i = 0; i < set->nr_funcs; i++) {
		if (set->funcs[i].lib != lib || set->funcs[i].detached)
			continue;
		offs[n] = set->funcs[i].offset;
		cookies[n++] = (__u64)i;
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
			snprintf(err, errlen, "attaching %d uprobes (session link) to %s: %s", n, set->libs[lib].module,
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
			snprintf(err, errlen, "attaching %d uprobes to %s: %s", n, set->libs[lib].module, strerror(-r));
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
		if (set->funcs[i].detached)
			continue;
		if (k / 2 >= UPROBE_CLASSIC_CAP) {
			snprintf(err, errlen, "%d functions matched; classic uprobes are capped at %d (kernel lacks "
				 "uprobe_multi): narrow the glob", set->nr_funcs, UPROBE_CLASSIC_CAP);
			return -E2BIG;
		}
		for (int ret = 0; ret < 2; ret++) {
			LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = (__u64)i, .retprobe = ret);
			struct bpf_program *p = ret ? u->skel->progs.tmabpf_uexit1 : u->skel->progs.tmabpf_uentry1;
			struct bpf_link *l = bpf_program__attach_uprobe_opts(p, -1, set->libs[set->funcs[i].lib].attach_path,
									     set->funcs[i].offset, &o);

			if (!l) {
				snprintf(err, errlen, "attaching uprobe %s: %s", set->funcs[i].symbol, strerror(errno));
				return -errno;
			}
			u->links[k++] = l;
		}
	}
	u->nr_links = k;
	return 0;
}

int uprobes_attach(struct uprobes_prog *u, const struct uprobe_set *set, char *err, size_t errlen)
{
	unsigned long long t0 = mono_ns();
	int r = 0;

	u->nr_links = u->multi ? 2 * set->nr_libs : 2 * set->nr_funcs;
	u->links = calloc(u->nr_links ? u->nr_links : 1, sizeof(*u->links));
	u->nr_link_fds = u->mode == UPROBES_SESSION ? set->nr_libs : 0;
	u->link_fds = malloc((u->nr_link_fds ? u->nr_link_fds : 1) * sizeof(*u->link_fds));
	if (!u->links || !u->link_fds)
		return -ENOMEM;
	for (int i = 0; i < u->nr_link_fds; i++)
		u->link_fds[i] = -1;
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
		snprintf(err, errlen, "detaching single functions needs uprobe_multi");
		return -EOPNOTSUPP;
	}
	for (int ret = 0; ret < 2; ret++) {
		bpf_link__destroy(u->links[2 * lib + ret]);
		u->links[2 * lib + ret] = NULL;
	}
	if (u->mode == UPROBES_SESSION && lib < u->nr_link_fds)
		link_fds_close_all(&u->link_fds[lib], 1);
	return attach_multi(u, set, lib, err, errlen);
}

#define STACK_CHUNK 32	/* call stacks per batch read (each ~38 KiB) */

static void add_open_frame(struct func_row *rows, size_t *n, size_t cap, __u32 tid, const struct call_stack *st,
			   __u32 i)
{
	size_t k;

	for (k = 0; k < *n; k++)
		if (rows[k].key.fn == st->f[i].fn && rows[k].key.tid == tid)
			break;
	if (k == *n) {
		if (*n >= cap)
			return;
		memset(&rows[k], 0, sizeof(rows[k]));
		rows[k].key = (struct func_key){ .fn = st->f[i].fn, .tid = tid };
		rows[k].s.pid = st->pid;
		(*n)++;
	}
	rows[k].s.calls++;
}

/* Calls still in progress (their frames are open) count as calls too. */
static void add_open_frames(struct uprobes_prog *u, struct func_row *rows, size_t *n, size_t cap)
{
	struct call_stack *st = malloc(STACK_CHUNK * sizeof(*st));
	__u32 tids[STACK_CHUNK];
	struct map_iter it;
	size_t got;

	map_iter_init(&it, bpf_map__fd(u->skel->maps.stacks), sizeof(tids[0]), sizeof(*st));
	while (st && map_iter_next(&it, tids, st, STACK_CHUNK, &got) == 0 && got)
		for (size_t s = 0; s < got; s++)
			for (__u32 i = 0; i < st[s].depth && i < TMABPF_MAX_DEPTH; i++)
				add_open_frame(rows, n, cap, tids[s], &st[s], i);
	free(st);
}

int uprobes_read(struct uprobes_prog *u, struct func_row **rows, size_t *n)
{
	int fd = bpf_map__fd(u->skel->maps.funcs);
	size_t cap = (size_t)u->max_funcs;
	struct func_row *out = calloc(cap ? cap : 1, sizeof(*out));
	struct func_stats *vals = calloc(cap ? cap : 1, sizeof(*vals));
	struct func_key *keys = calloc(cap ? cap : 1, sizeof(*keys));
	int r = out && vals && keys ? 0 : -ENOMEM;

	*n = 0;
	if (!r)
		r = map_read_all(fd, sizeof(*keys), sizeof(*vals), keys, vals, cap, n);
	for (size_t i = 0; !r && i < *n; i++) {
		out[i].key = keys[i];
		out[i].s = vals[i];
	}
	free(vals);
	free(keys);
	if (r) {
		free(out);
		*n = 0;
		return r;
	}
	add_open_frames(u, out, n, cap);
	*rows = out;
	return 0;
}

void uprobes_run_stats(struct uprobes_prog *u, unsigned long long *ns, unsigned long long *cnt)
{
	struct bpf_program *prog;

	*ns = *cnt = 0;
	if (!u->skel)
		return;
	bpf_object__for_each_program(prog, u->skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (bpf_program__fd(prog) >= 0 && bpf_prog_get_info_by_fd(bpf_program__fd(prog), &info, &len) == 0) {
			*ns += info.run_time_ns;
			*cnt += info.run_cnt;
		}
	}
}

int uprobes_trace_fd(const struct uprobes_prog *u)
{
	return bpf_map__fd(u->skel->maps.trace_rb);
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

void uprobes_destroy(struct uprobes_prog *u)
{
	uprobes_detach(u);
	uprobes_bpf__destroy(u->skel);
	u->skel = NULL;
}
