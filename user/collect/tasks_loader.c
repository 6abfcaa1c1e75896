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
#include "collect/tasks_loader.h"
#include "lib/clock.h"
#include "lib/warn.h"
#include "tasks.skel.h"

static const struct bpf_hints hints = {
	.lacks = "kernel lacks BTF, task iterators (5.8+) or task storage for tracing programs (5.11+)",
	.einval_lacks = true, .size_opt = "--max-threads",
};

static int hint(int err, char *buf, size_t len, const char *what)
{
	return bpf_load_error(err, buf, len, what, &hints);
}

static int on_exit_rec(void *ctx, void *data, size_t size)
{
	struct tasks_prog *p = ctx;
	struct thread_stats s;

	if (size >= p->rec_size && task_acct_exit(&p->acct, data, &s) == 0 && p->on_exit)
		p->on_exit(p->ctx, &s);
	return 0;
}

int tasks_load(struct tasks_prog *p, const struct event_list *evs, const struct tasks_est *est, int max_threads,
	       thread_exit_fn on_exit, void *ctx, char *err, size_t errlen)
{
	int r;

	memset(p, 0, sizeof(*p));
	p->stats_fd = -1;
	p->on_exit = on_exit;
	p->ctx = ctx;
	p->nr_cpus = libbpf_num_possible_cpus();
	if ((r = task_acct_init(&p->acct, evs, est != NULL, max_threads, err, errlen)))
		return r;
	if ((r = bpf_need_btf(err, errlen)))
		return r;
	/* /proc/PID/schedstat exists exactly when the kernel keeps sched_info (CONFIG_SCHED_INFO) */
	p->run_delay = access("/proc/self/schedstat", R_OK) == 0;
	p->rec_size = est ? sizeof(struct task_rec_est) : sizeof(struct task_rec);
	p->skel = tasks_bpf__open();
	if (!p->skel)
		return hint(-errno, err, errlen, "opening the task accounting BPF object");
	p->skel->rodata->cfg_est = est != NULL;
	bpf_program__set_autoload(p->skel->progs.tmabpf_task_fork, est != NULL);
	if (est) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);

		p->skel->rodata->cfg_filter = est->filter;
		p->skel->rodata->cfg_main_id = est->main_id;
		if (bpf_map_get_info_by_fd(est->pids_fd, &info, &len) ||
		    bpf_map__set_max_entries(p->skel->maps.pids, info.max_entries) ||
		    bpf_map__reuse_fd(p->skel->maps.pids, est->pids_fd))
			return hint(-errno, err, errlen, "sharing the target filter with the task programs");
	}
	bpf_map__set_max_entries(p->skel->maps.task_exits, ringbuf_bytes((unsigned long)max_threads * (p->rec_size + 8)));
	r = tasks_bpf__load(p->skel);
	if (r)
		return hint(r, err, errlen, "loading the task accounting BPF programs");
	if (!(p->rb = ringbuf_open(bpf_map__fd(p->skel->maps.task_exits), on_exit_rec, p, "exit", err, errlen)))
		return -errno;
	p->stats_fd = bpf_stats_enable(&p->run_stats);
	return 0;
}

void tasks_flush(struct tasks_prog *p, int wait_ms)
{
	for (int waited = 0; p->acct.held && waited < wait_ms; waited += 10)
		tasks_poll(p, 10);	/* sched_process_free comes an RCU grace period after the exit */
	tasks_poll(p, 0);
	task_acct_flush(&p->acct, p->on_exit, p->ctx);
}

int tasks_attach(struct tasks_prog *p, char *err, size_t errlen)
{
	int r;

	p->skel->links.tmabpf_task_exit = bpf_program__attach(p->skel->progs.tmabpf_task_exit);
	if (!p->skel->links.tmabpf_task_exit)
		return hint(-errno, err, errlen, "attaching to sched_process_exit");
	p->skel->links.tmabpf_task_free = bpf_program__attach(p->skel->progs.tmabpf_task_free);
	if (!p->skel->links.tmabpf_task_free)
		return hint(-errno, err, errlen, "attaching to sched_process_free");
	if (p->skel->rodata->cfg_est) {
		p->skel->links.tmabpf_task_fork = bpf_program__attach(p->skel->progs.tmabpf_task_fork);
		if (!p->skel->links.tmabpf_task_fork)
			return hint(-errno, err, errlen, "attaching to sched_process_fork");
	}
	p->iter = bpf_program__attach_iter(p->skel->progs.tmabpf_task_iter, NULL);
	if (!p->iter) {
		r = -errno;
		return hint(r, err, errlen, "creating the task iterator");
	}
	return 0;
}


/* The iterator's whole output: records of p->rec_size bytes (*n of them in *out). */
static int iterate(struct tasks_prog *p, char **out, size_t *n)
{
	size_t rec = p->rec_size, cap = 1024, len = 0;
	char *buf = malloc(cap * rec);
	int fd = bpf_iter_create(bpf_link__fd(p->iter)), r = 0;

	if (fd < 0 || !buf) {
		r = fd < 0 ? -errno : -ENOMEM;
		goto out;
	}
	for (;;) {
		ssize_t got;

		if (len + 64 * rec > cap * rec) {
			char *nb = realloc(buf, 2 * cap * rec);

			if (!nb) {
				r = -ENOMEM;
				goto out;
			}
			buf = nb;
			cap *= 2;
		}
		got = read(fd, buf + len, cap * rec - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			r = -errno;
			goto out;
		}
		if (got == 0)
			break;
		len += got;
	}
	*out = buf;
	*n = len / rec;
	buf = NULL;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	return r;
}

int tasks_seed(struct tasks_prog *p)
{
	char *recs = NULL;
	size_t n = 0;
	int r = iterate(p, &recs, &n);	/* the iterator creates the targets' storage; nothing accounted */

	free(recs);
	return r;
}

int tasks_read(struct tasks_prog *p, struct thread_stats **out, size_t *n)
{
	char *recs = NULL;
	struct thread_stats *vals;
	size_t nrec = 0, k = 0, room;
	int r;

	task_acct_begin(&p->acct, mono_ns());
	if ((r = iterate(p, &recs, &nrec)))
		return r;
	/* threads missing from the iteration have their exit record in the ring now */
	ring_buffer__consume(p->rb);
	room = nrec + p->acct.held;
	vals = calloc(room ? room : 1, sizeof(*vals));
	if (!vals) {
		free(recs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nrec; i++)
		if (task_acct_live(&p->acct, (const struct task_rec *)(recs + i * p->rec_size), &vals[k]) == 0)
			k++;
	free(recs);
	k += task_acct_held(&p->acct, vals + k, room - k, p->on_exit, p->ctx);
	p->records = nrec;
	*out = vals;
	*n = k;
	return 0;
}

/* The exit program submits without wakeups (see tasks.bpf.c): wait, then drain. */
int tasks_poll(struct tasks_prog *p, int timeout_ms)
{
	if (timeout_ms > 0) {
		struct timespec ts = { .tv_sec = timeout_ms / 1000, .tv_nsec = (timeout_ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);	/* a signal ends it early */
	}
	return ring_buffer__consume(p->rb);
}

int tasks_thread_est_fd(const struct tasks_prog *p)
{
	return bpf_map__fd(p->skel->maps.thread_est);
}

void tasks_self_stats(struct tasks_prog *p, struct self_stats *s)
{
	unsigned long long st[TASK_STAT_MAX] = {};

	memset(s, 0, sizeof(*s));
	s->run_stats = p->run_stats;
	obj_run_stats_add(p->skel->obj, &s->bpf_run_ns, &s->bpf_run_cnt);
	stat_map_sum(bpf_map__fd(p->skel->maps.task_stats), TASK_STAT_MAX, st);
	s->stat[STAT_EXIT_DROPS] = st[TASK_STAT_EXIT_DROPS];
	s->stat[STAT_THREADS_FULL] = p->acct.over_cap;
	s->threads_in_map = p->acct.seen.n;
	s->max_threads = p->acct.max_threads;
}

void tasks_detach(struct tasks_prog *p)
{
	bpf_link__destroy(p->iter);
	p->iter = NULL;
	if (p->skel)
		tasks_bpf__detach(p->skel);
}

void tasks_destroy(struct tasks_prog *p)
{
	tasks_detach(p);
	ring_buffer__free(p->rb);
	p->rb = NULL;
	tasks_bpf__destroy(p->skel);
	p->skel = NULL;
	if (p->stats_fd >= 0)
		close(p->stats_fd);
	p->stats_fd = -1;
	task_acct_free(&p->acct);
}
