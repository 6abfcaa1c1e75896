// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collect/bpf_util.h"
#include "collect/map_batch.h"
#include "collect/task_acct.h"
#include "collect/threads_loader.h"
#include "lib/clock.h"
#include "lib/warn.h"
#include "threads.skel.h"

static const struct bpf_hints hints = { .lacks = "kernel lacks BTF (/sys/kernel/btf/vmlinux) or the tracepoint",
					.size_opt = "--max-threads" };

static int load_error(int err, char *buf, size_t len, const char *what)
{
	return bpf_load_error(err, buf, len, what, &hints);
}

/* TMABPF_TEST_DROP_SWITCH_IN=N, TMABPF_TEST_HIDE_SWITCH=N: tests make the BPF
 * side ignore about 1 in N switch-ins (threads.bpf.c), to exercise the
 * inference hosts that miss them depend on. */
static unsigned int test_hook(const char *name)
{
	const char *v = getenv(name);

	return v ? (unsigned int)strtoul(v, NULL, 10) : 0;
}

static int on_ringbuf(void *ctx, void *data, size_t size)
{
	struct threads_prog *p = ctx;

	if (size >= sizeof(struct thread_stats) && p->on_exit)
		p->on_exit(p->ctx, data);
	return 0;
}

/* The events whose share of an inferred slice is the task's own fault count
 * (account.bpf.h: struct fold_share): those the task_struct counts as one. */
static void fault_masks(struct account_cfg *a, const struct event_list *evs)
{
	for (int e = 0; evs && e < evs->n && e < TMABPF_MAX_EVENTS; e++) {
		enum task_field f = task_acct_event_field(&evs->ev[e]);

		if (f == TF_FAULTS || f == TF_MIN_FLT)
			a->fault_min_mask |= 1u << e;
		if (f == TF_FAULTS || f == TF_MAJ_FLT)
			a->fault_maj_mask |= 1u << e;
	}
}

void account_cfg_fill(struct account_cfg *a, const struct threads_cfg *cfg, const struct perf_counters *pc,
		      const struct event_list *evs, int nr_cpus)
{
	*a = (struct account_cfg){
		.nr_events = pc ? pc->nr_events : 0,
		.nr_cpus = nr_cpus,
		.filter = cfg ? cfg->filter : FILTER_ALL,
		.main_id = cfg ? cfg->main_id : 0,
		.follow_fork = cfg && cfg->follow_fork,
		.cgroup = cfg && cfg->cgroup,
		.seqlock = cfg && cfg->seqlock,
	};
	if (pc)
		fault_masks(a, evs);
}

int threads_load(struct threads_prog *p, const struct threads_cfg *cfg, const struct perf_counters *pc,
		 const struct event_list *evs, thread_exit_fn on_exit, void *ctx, char *err, size_t errlen)
{
	int r;

	memset(p, 0, sizeof(*p));
	p->stats_fd = -1;
	p->nr_cpus = pc->nr_cpus;
	p->max_threads = cfg->max_threads;
	p->on_exit = on_exit;
	p->ctx = ctx;
	if ((r = bpf_need_btf(err, errlen)))
		return r;
	p->skel = threads_bpf__open();
	if (!p->skel)
		return load_error(-errno, err, errlen, "opening BPF object");
	account_cfg_fill(&p->acfg, cfg, pc, evs, pc->nr_cpus);
	p->skel->rodata->account_cfg = p->acfg;
	p->skel->rodata->cfg_test_drop_switch_in = test_hook("TMABPF_TEST_DROP_SWITCH_IN");
	p->skel->rodata->cfg_test_hide_switch = test_hook("TMABPF_TEST_HIDE_SWITCH");
	p->skel->rodata->cfg_test_drop_switch_out = test_hook("TMABPF_TEST_DROP_SWITCH_OUT");
	p->skel->rodata->cfg_exec_start = cfg->exec_start;
	bpf_program__set_autoload(p->skel->progs.tmabpf_exec, cfg->exec_start != 0 && !cfg->filter_only);
	bpf_program__set_autoload(p->skel->progs.tmabpf_switch, !cfg->filter_only);
	bpf_program__set_autoload(p->skel->progs.tmabpf_exit, !cfg->filter_only);
	p->seed = cfg->seed && !cfg->filter_only;
	p->skel->rodata->cfg_seed = p->seed;
	bpf_program__set_autoload(p->skel->progs.tmabpf_seed, p->seed);
	bpf_program__set_autoattach(p->skel->progs.tmabpf_seed, false);
	if (cfg->lru)
		bpf_map__set_type(p->skel->maps.threads, BPF_MAP_TYPE_LRU_HASH);
	bpf_map__set_max_entries(p->skel->maps.counters, pc->nr_events ? pc->nr_events * pc->nr_cpus : 1);
	bpf_map__set_max_entries(p->skel->maps.threads, cfg->max_threads);
	bpf_map__set_max_entries(p->skel->maps.pids, cfg->max_pids);
	bpf_map__set_max_entries(p->skel->maps.exits, ringbuf_bytes((unsigned long)cfg->max_threads / 8 * sizeof(struct thread_stats)));
	r = threads_bpf__load(p->skel);
	if (r)
		return load_error(r, err, errlen, "loading BPF programs");
	for (int e = 0; e < pc->nr_events; e++)
		for (int cpu = 0; cpu < pc->nr_cpus; cpu++) {
			__u32 idx = e * pc->nr_cpus + cpu;
			int fd = pc->fds[idx];

			if (fd >= 0 && bpf_map_update_elem(bpf_map__fd(p->skel->maps.counters), &idx, &fd, BPF_ANY))
				return load_error(-errno, err, errlen, "filling the counters map");
		}
	for (int i = 0; i < cfg->nr_ids; i++)
		if ((r = threads_track(p, cfg->ids[i], err, errlen)))
			return r;
	if (!(p->rb = ringbuf_open(bpf_map__fd(p->skel->maps.exits), on_ringbuf, p, "exit", err, errlen)))
		return -errno;
	p->stats_fd = bpf_stats_enable(&p->run_stats);
	return 0;
}

int threads_pids_fd(const struct threads_prog *p)
{
	return bpf_map__fd(p->skel->maps.pids);
}

int threads_track(struct threads_prog *p, unsigned int id, char *err, size_t errlen)
{
	__u8 one = 1;

	if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.pids), &id, &one, BPF_ANY))
		return load_error(-errno, err, errlen, "adding to the pid filter");
	return 0;
}

int threads_share_maps(struct threads_prog *p, struct bpf_object *obj)
{
	static const char *const names[] = { "counters", "threads", "pids", "snaps", "scratch",
					     "new_thread", "stats", "exits" };

	return bpf_share_maps(p->skel->obj, obj, names, sizeof(names) / sizeof(names[0]));
}

/*
 * Seed every CPU's snapshot with the counters as they are now, owned by
 * SNAP_ATTACH: the first switch-out on each CPU then folds the slice of the
 * thread that was already running when we attached, instead of losing it.
 */
static int seed_snapshots(struct threads_prog *p, const struct perf_counters *pc)
{
	struct cpu_snap *snaps = calloc(p->nr_cpus, sizeof(*snaps));
	unsigned long long now = mono_ns();
	__u32 zero = 0;
	int r = 0;

	if (!snaps)
		return -ENOMEM;
	for (int cpu = 0; cpu < p->nr_cpus; cpu++) {
		snaps[cpu].tid = SNAP_ATTACH;
		snaps[cpu].ts = now;
		for (int e = 0; e < pc->nr_events; e++) {
			__u64 v[3];
			int fd = pc->fds[e * pc->nr_cpus + cpu];

			if (fd < 0 || read(fd, v, sizeof(v)) != sizeof(v)) {
				snaps[cpu].tid = 0;	/* offline or unreadable: nothing to seed */
				break;
			}
			snaps[cpu].c[e] = (struct counter_val){ .value = v[0], .enabled = v[1], .running = v[2] };
		}
	}
	if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.snaps), &zero, snaps, BPF_ANY))
		r = -errno;
	free(snaps);
	return r;
}

int threads_attach(struct threads_prog *p, const struct perf_counters *pc, char *err, size_t errlen)
{
	int r = seed_snapshots(p, pc);

	if (r)
		return load_error(r, err, errlen, "seeding the per-CPU snapshots");
	r = threads_bpf__attach(p->skel);

	if (r)
		return load_error(r, err, errlen, "attaching to sched_switch/sched_process_{fork,exit}");
	if (p->seed)
		p->skel->bss->seed_ns = p->seed_ns = mono_ns();
	if (p->seed && (r = bpf_iter_run_once(p->skel->progs.tmabpf_seed)))
		warn_add("seeding the tracked threads at attach: %s; a thread off-CPU then is counted from its first "
			 "switch-in", strerror(-r));
	return 0;
}

/* The exit program wakes us only when its ring is half full: wait, then drain what is there. */
int threads_poll(struct threads_prog *p, int timeout_ms)
{
	int r = ring_buffer__poll(p->rb, timeout_ms), c;

	if (r < 0)
		return r;
	c = ring_buffer__consume(p->rb);
	return c < 0 ? c : r + c;
}

int threads_read(struct threads_prog *p, struct thread_stats **out, size_t *n)
{
	void *keys, *vals;
	int r = map_read_new(bpf_map__fd(p->skel->maps.threads), sizeof(__u32), sizeof(struct thread_stats),
			     (size_t)p->max_threads, &keys, &vals, n);

	free(keys);
	if (!r)
		*out = vals;
	return r;
}

void threads_self_stats(struct threads_prog *p, struct self_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->run_stats = p->run_stats;
	obj_run_stats_add(p->skel->obj, &s->bpf_run_ns, &s->bpf_run_cnt);
	prog_run_stats_add(p->skel->progs.tmabpf_switch, &s->switch_run_ns, &s->switch_run_cnt);
	stat_map_sum(bpf_map__fd(p->skel->maps.stats), STAT_MAX, s->stat);
	s->max_threads = p->max_threads;
}

void threads_detach(struct threads_prog *p)
{
	if (p->skel)
		threads_bpf__detach(p->skel);
}

void threads_destroy(struct threads_prog *p)
{
	ring_buffer__free(p->rb);
	p->rb = NULL;
	threads_bpf__destroy(p->skel);
	p->skel = NULL;
	if (p->stats_fd >= 0)
		close(p->stats_fd);
	p->stats_fd = -1;
}
