// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * tmabpf daemon: the spine system-wide with an LRU threads map, drained every
 * interval into bounded per-process / per-cgroup / top-thread series
 * (daemon_agg.c), served as Prometheus text by libmicrohttpd (daemon_http.c),
 * optionally appended as JSON lines; tmabpf's own BPF run time is held to
 * --max-overhead by the budget (budget.c).
 */
#include <dirent.h>
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "budget.h"
#include "cpu_detect.h"
#include "daemon.h"
#include "daemon_accounting.h"
#include "daemon_agg.h"
#include "daemon_cli.h"
#include "daemon_http.h"
#include "daemon_metrics.h"
#include "daemon_sampling.h"
#include "outfile.h"
#include "run.h"
#include "samples_loader.h"
#include "tasks_loader.h"
#include "thread_table.h"
#include "threads_loader.h"
#include "tma.h"
#include "uprobes_loader.h"
#include "warn.h"
#include "clock.h"
#include "uprobes.skel.h"

#define POLL_MS 100
#define SHED_AFTER 3		/* intervals over budget, uprobes dominating, before a function is detached */
#define TRIM_EVERY 10		/* refreshes between malloc_trim() calls */

struct daemon {
	struct daemon_opts *d;
	const struct run_env *env;
	struct agg agg;
	bool agg_ready;
	struct agg_funcs funcs;
	struct budget budget;
	const struct daemon_sampler *sampler;	/* NULL: not sampling */
	struct dsamp samp;			/* the sampler (daemon_sampling.c) */
	struct daemon_http *http;
	struct outfile jsonl;		/* --jsonl */
	bool jsonl_failed;		/* said once */
	struct daemon_self self;
	unsigned long long last_bpf_ns, last_up_ns, last_sample_ns, last_t;
	uint32_t *drop_tids;	/* threads that exited one refresh ago: their function rows go */
	size_t n_drop_tids;
	int shed_streak;
	struct accounting_choice acct;	/* --accounting */
	struct tasks_prog *tasks;	/* tasks mode: the task programs; NULL: the spine (env->prog) */
};

/* Exited threads' records, from whichever accounting runs. */
static int poll_exits(struct daemon *D, int timeout_ms)
{
	return D->tasks ? tasks_poll(D->tasks, timeout_ms) : threads_poll(D->env->prog, timeout_ms);
}


static void on_exit_record(void *ctx, const struct thread_stats *s)
{
	struct daemon *D = ctx;

	if (D->agg_ready)
		agg_thread_exit(&D->agg, s);
}

static void configure(void *ctx, struct threads_cfg *cfg)
{
	cfg->lru = true;	/* bounded: the least recently used thread goes when full (counted) */
	cfg->cgroup = true;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Function rows: fold, then drop those of threads that exited a refresh ago
 * (their uprobe exit program has surely run by now). */
static void refresh_funcs(struct daemon *D)
{
	struct uprobes_prog *u = D->env->uprobes;
	struct func_row *rows = NULL;
	size_t n = 0;
	int fd = bpf_map__fd(u->skel->maps.funcs);

	if (uprobes_read(u, &rows, &n) == 0)
		agg_funcs_update(&D->funcs, rows, n);
	for (size_t i = 0; i < n && D->n_drop_tids; i++) {
		uint32_t tid = rows[i].key.tid;

		if (!bsearch(&tid, D->drop_tids, D->n_drop_tids, sizeof(tid), cmp_u32))
			continue;
		bpf_map_delete_elem(fd, &rows[i].key);
		agg_funcs_forget(&D->funcs, rows[i].key.fn, tid);
	}
	free(rows);
	free(D->drop_tids);
	D->drop_tids = NULL;
	D->n_drop_tids = 0;
	if (D->agg.n_exited_tids && (D->drop_tids = malloc(D->agg.n_exited_tids * sizeof(uint32_t)))) {
		memcpy(D->drop_tids, D->agg.exited_tids, D->agg.n_exited_tids * sizeof(uint32_t));
		D->n_drop_tids = D->agg.n_exited_tids;
		qsort(D->drop_tids, D->n_drop_tids, sizeof(uint32_t), cmp_u32);
	}
}

/* Over budget with uprobes costing most of it, interval after interval:
 * detach the busiest probed function (the --max-rate mechanism). */
static void shed_uprobes(struct daemon *D, double up_ns, double bpf_ns)
{
	struct uprobe_set *set = D->env->uset;
	int hot = -1;
	char err[512];

	if (!D->env->uprobes || !D->budget.over || up_ns < 0.5 * bpf_ns) {
		D->shed_streak = 0;
		return;
	}
	if (++D->shed_streak < SHED_AFTER)
		return;
	D->shed_streak = 0;
	for (int fn = 0; fn < set->nr_funcs && fn < D->funcs.n; fn++)
		if (!set->funcs[fn].detached && (hot < 0 || D->funcs.last_calls[fn] > D->funcs.last_calls[hot]))
			hot = fn;
	if (hot < 0 || D->funcs.last_calls[hot] <= 0)
		return;
	set->funcs[hot].detached = true;
	D->self.funcs_detached++;
	warn_add("budget: detached %s (%.0f calls in the last interval): tmabpf's BPF time %.2f%% of a CPU > "
		 "--max-overhead %.2f%%", set->funcs[hot].symbol, D->funcs.last_calls[hot], 100 * D->budget.cost,
		 100 * D->budget.limit);
	if (uprobes_reattach_lib(D->env->uprobes, set, set->funcs[hot].lib, err, sizeof(err)))
		warn_add("re-attaching after the budget detached a function: %s", err);
}

static void update_budget(struct daemon *D, unsigned long long now)
{
	struct daemon_self *s = &D->self;
	unsigned long long bpf = s->spine.bpf_run_ns + s->uprobe_run_ns;
	unsigned long long samp = D->sampler ? D->sampler->run_ns(D->sampler->ctx) : 0;
	double dbpf, dup, dsamp, wall;
	bool was_over = D->budget.floor_over;

	bpf += samp;
	if (!D->last_t) {
		D->last_bpf_ns = bpf;
		D->last_up_ns = s->uprobe_run_ns;
		D->last_sample_ns = samp;
		D->last_t = now;
		return;
	}
	dbpf = (double)(bpf - D->last_bpf_ns);
	dup = (double)(s->uprobe_run_ns - D->last_up_ns);
	dsamp = (double)(samp - D->last_sample_ns);
	wall = (double)(now - D->last_t);
	if (wall < 0.5e9 && D->budget.intervals)
		return;	/* measure over at least half a second */
	D->last_bpf_ns = bpf;
	D->last_up_ns = s->uprobe_run_ns;
	D->last_sample_ns = samp;
	D->last_t = now;
	if (!s->spine.run_stats)
		return;	/* no measurement: said once at start */
	double hz = D->budget.hz, next = budget_step(&D->budget, dbpf, dsamp, wall);

	s->bpf_cpu_ratio = D->budget.cost;
	if (D->sampler && next != hz && D->sampler->set_rate(D->sampler->ctx, next))
		warn_add("budget: could not set the sampling rate to %.1f Hz", next);
	if (D->budget.floor_over && !was_over)
		warn_add("budget: tmabpf's BPF time is %.2f%% of a CPU, over --max-overhead %.2f%%%s", 100 * D->budget.cost,
			 100 * D->budget.limit,
			 D->sampler ? " even at the lowest sampling rate (thread accounting alone)" :
			 D->tasks ? " (task accounting: a longer --interval costs less)" :
			 " (context-switch accounting: fewer -e events cost less)");
	shed_uprobes(D, dup, dbpf);
}

static void read_self_process(struct daemon_self *s)
{
	unsigned long size, res;
	FILE *f = fopen("/proc/self/statm", "r");
	DIR *dir;
	long page = sysconf(_SC_PAGESIZE);

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &res) == 2) {
			s->vm_bytes = (double)size * page;
			s->rss_bytes = (double)res * page;
		}
		fclose(f);
	}
	s->cpu_seconds = self_cpu_ns() / 1e9;
	if ((dir = opendir("/proc/self/fd"))) {
		int n = 0;

		while (readdir(dir))
			n++;
		closedir(dir);
		s->open_fds = n - 3;	/* ".", "..", the directory's own fd */
	}
}

static void publish(struct daemon *D)
{
	const struct run_env *env = D->env;
	struct daemon_view v = {
		.agg = &D->agg, .funcs = env->uprobes ? &D->funcs : NULL, .uset = env->uset, .evs = env->evs,
		.host = env->host, .recipe = env->cpu ? tma_cpu_name(env->cpu) : NULL, .tma_level = env->tma_level,
		.tma_plan = env->tma_plan, .self = &D->self, .samp = D->sampler ? &D->samp : NULL,
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f) {
		daemon_metrics_write(f, &v);
		if (fclose(f) == 0 && http_publish(D->http, buf, len))
			warn_add("out of memory publishing the metrics");
		free(buf);
	}
	if (outfile_is_open(&D->jsonl)) {
		char err[512];

		daemon_jsonl_write(D->jsonl.f, &v, unix_time_s());
		if (outfile_flush(&D->jsonl, err, sizeof(err))) {
			if (!D->jsonl_failed)
				warn_add("%s", err);
			D->jsonl_failed = true;
			clearerr(D->jsonl.f);	/* the next interval tries again (the disk may have room by then) */
			D->jsonl.write_errno = 0;
		} else if (D->jsonl_failed) {
			warn_add("--jsonl: writing works again");
			D->jsonl_failed = false;
		}
	}
}

static void refresh(struct daemon *D)
{
	const struct run_env *env = D->env;
	unsigned long long t0 = mono_ns();
	struct thread_stats *live = NULL;
	size_t n = 0;
	bool snap;

	snap = (D->tasks ? tasks_read(D->tasks, &live, &n) : threads_read(env->prog, &live, &n)) == 0;
	if (snap) {
		agg_begin(&D->agg);
		for (size_t i = 0; i < n; i++)
			agg_thread_seen(&D->agg, &live[i]);
		D->self.threads_in_map = n;
	}
	free(live);
	poll_exits(D, 0);	/* exits up to now: none of the threads not seen can still come */
	if (env->uprobes)
		refresh_funcs(D);
	if (snap)
		agg_end(&D->agg, mono_ns());
	if (D->sampler)
		dsamp_drain(&D->samp, &D->agg, mono_ns());	/* before the budget may change the rate */
	if (D->tasks)
		tasks_self_stats(D->tasks, &D->self.spine);
	else
		threads_self_stats(env->prog, &D->self.spine);
	if (D->sampler)
		samples_stats_add(&D->samp.prog, &D->self.spine);	/* standalone (tasks mode): its own slots */
	if (env->uprobes)
		uprobes_run_stats(env->uprobes, &D->self.uprobe_run_ns, &D->self.uprobe_run_cnt);
	if (D->sampler)
		samples_run_stats(&D->samp.prog, &D->self.sample_run_ns, &D->self.sample_run_cnt);
	D->self.max_threads = D->self.spine.max_threads;
	update_budget(D, mono_ns());
	http_counts(D->http, &D->self.http);
	read_self_process(&D->self);
	D->self.refreshes++;
	publish(D);
	D->self.refresh_seconds = (mono_ns() - t0) / 1e9;
	if (D->self.refreshes % TRIM_EVERY == 0)
		malloc_trim(0);	/* churn frees many small records: give the pages back */
}

static int loop(void *ctx, const struct run_env *env)
{
	struct daemon *D = ctx;
	struct daemon_opts *d = D->d;
	struct agg_cfg acfg = { .nr_events = env->evs->n, .top_procs = d->top_procs, .top_threads = d->top_threads,
				.max_cgroups = d->max_cgroups, .min_share = d->min_share_pct / 100, .expire_ns = (unsigned long long)(d->expire_s * 1e9),
				.resolve_cgroups = true };
	unsigned long long start = mono_ns(), next, deadline;
	const char *why = "SIGTERM";

	D->env = env;
	if (agg_init(&D->agg, &acfg))
		warn_add("cgroup paths unavailable: %s", D->agg.names.why);
	D->agg_ready = true;
	if (env->uprobes && agg_funcs_init(&D->funcs, env->uset->nr_funcs)) {
		err_print("out of memory for %d functions", env->uset->nr_funcs);
		return 1;
	}
	D->sampler = dsamp_open(&D->samp, env, d);
	budget_init(&D->budget, d->max_overhead_pct, D->sampler ? D->samp.hz : 0, d->min_sample_hz);
	D->self.budget = &D->budget;
	D->self.sampling = D->sampler != NULL;
	D->self.start_time = unix_time_s();
	refresh(D);
	fprintf(stderr, "tmabpf: %s\n", D->acct.line);
	fprintf(stderr, "tmabpf: daemon: serving http://%s/metrics, refresh every %d ms, %d events, threads %s %d\n",
		http_bound(D->http), d->interval_ms, env->evs->n, D->tasks ? "at most" : "map (LRU)",
		env->o->max_threads);
	next = start + d->interval_ms * 1000000ULL;
	deadline = env->o->duration_s > 0 ? start + (unsigned long long)(env->o->duration_s * 1e9) : 0;
	for (;;) {
		unsigned long long t = mono_ns();
		long long wait_ms = ((long long)next - (long long)t) / 1000000;

		poll_exits(D, wait_ms < 0 ? 0 : wait_ms > POLL_MS ? POLL_MS : (int)wait_ms);
		if (D->sampler)
			dsamp_poll(&D->samp);
		if (*env->stop) {
			why = *env->stop == SIGINT ? "SIGINT" : "SIGTERM";
			break;
		}
		t = mono_ns();
		if (deadline && t >= deadline) {
			why = "duration";
			break;
		}
		if (t >= next) {
			refresh(D);
			next += d->interval_ms * 1000000ULL;
			if (next <= t)
				next = t + d->interval_ms * 1000000ULL;
		}
	}
	fprintf(stderr, "tmabpf: daemon: stopping (%s) after %llu refreshes\n", why, D->self.refreshes);
	D->sampler = NULL;
	dsamp_stop(&D->samp);
	return 0;
}

int cmd_daemon(int argc, char **argv)
{
	static struct daemon_opts d;
	struct daemon D = { .d = &d };
	struct run_mode mode = { .ctx = &D, .configure = configure, .on_exit = on_exit_record, .loop = loop };
	char err[512];
	int r;

	r = daemon_parse(argc, argv, &d);
	if (!r)
		r = accounting_choose(&d, &D.acct);
	if (r) {
		daemon_opts_free(&d);
		return r < 0 ? 0 : r;
	}
	/* big buffers (map reads) come and go as mmaps; a burst does not pin the heap */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	mallopt(M_ARENA_MAX, 2);
	if (http_start(&D.http, d.listen, err, sizeof(err))) {
		err_print("%s", err);
		daemon_opts_free(&d);
		return EXIT_USAGE;
	}
	if (d.jsonl_path && outfile_open(&D.jsonl, "--jsonl", d.jsonl_path, OUTFILE_APPEND, d.run.out_mode, err,
					 sizeof(err))) {
		err_print("%s", err);
		http_stop(D.http);
		daemon_opts_free(&d);
		return EXIT_USAGE;
	}
	D.self.accounting = D.acct.tasks ? "tasks" : "switch";
	r = D.acct.tasks ? daemon_tasks_run(&d.run, &mode, &D.tasks) : run_with_mode(&d.run, &mode);
	http_stop(D.http);
	if (outfile_is_open(&D.jsonl) && outfile_commit(&D.jsonl, err, sizeof(err)) && !D.jsonl_failed) {
		err_print("%s", err);
		r = r ? r : 1;
	}
	if (D.agg_ready)
		agg_free(&D.agg);
	agg_funcs_free(&D.funcs);
	free(D.drop_tids);
	daemon_opts_free(&d);
	return r;
}
