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
#include <unistd.h>
#include "collect/bpf_util.h"
#include "collect/samples_loader.h"
#include "collect/tasks_loader.h"
#include "collect/threads_loader.h"
#include "collect/uprobes_loader.h"
#include "daemon/budget.h"
#include "daemon/daemon.h"
#include "daemon/daemon_accounting.h"
#include "daemon/daemon_agg.h"
#include "daemon/daemon_cli.h"
#include "daemon/daemon_evsampled.h"
#include "daemon/daemon_http.h"
#include "daemon/daemon_metrics.h"
#include "daemon/daemon_sampling.h"
#include "lib/clock.h"
#include "lib/outfile.h"
#include "lib/warn.h"
#include "model/profile.h"
#include "model/zero_counts.h"
#include "model/thread_table.h"
#include "output/pprof.h"
#include "pmu/cpu_detect.h"
#include "run/collector.h"
#include "tma/tma.h"

#define POLL_MS 100
#define SHED_AFTER 3		/* intervals over budget, uprobes dominating, before a function is detached */
#define TRIM_EVERY 10		/* refreshes between malloc_trim() calls */

struct daemon {
	struct daemon_opts *d;
	struct run_ctx c;		/* c.mode: this daemon */
	struct run_prep prep;
	const struct collector *table[4];	/* accounting (spine or tasks), event sampling, uprobes, the sampler */
	int ncollectors;
	struct devs devs;		/* sampled accounting: the events' estimates */
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
	unsigned long long last_bpf_ns, last_up_ns, last_sample_ns, last_t, last_self_ns;
	bool cpu_over;			/* BPF + user CPU over --max-overhead: said once */
	double cpu_smooth;		/* BPF + user CPU, smoothed over ~10 intervals */
	uint32_t *drop_tids;	/* threads that exited one refresh ago: their function rows go */
	size_t n_drop_tids;
	int shed_streak;
	struct accounting_choice acct;	/* --accounting */
	bool tma_zero;			/* an event the recipe needs never counted: no TMA exported (zero_counts) */
	unsigned long long start_ns;
	unsigned long long profile_end_ns;	/* a /debug/pprof/profile is being taken until then (0: none) */
};

#define TABLE D->table, D->ncollectors

/* ---- the daemon's own collectors: task accounting and the sampler ---- */

static int evsampled_load_op(struct run_ctx *c, char *err, size_t errlen)
{
	return devs_load(&((struct daemon *)c->mode)->devs, &c->prep->evs, err, errlen) ? RUN_FAILED : RUN_OK;
}

static int evsampled_attach_op(struct run_ctx *c, char *err, size_t errlen)
{
	struct daemon *D = c->mode;

	return devs_attach(&D->devs, D->d->events_hz, err, errlen) ? RUN_FAILED : RUN_OK;
}

static void evsampled_poll_op(struct run_ctx *c, int timeout_ms)
{
	devs_tick(&((struct daemon *)c->mode)->devs, mono_ns());
}

static void evsampled_detach_op(struct run_ctx *c)
{
	devs_detach(&((struct daemon *)c->mode)->devs);
}

static void evsampled_free_op(struct run_ctx *c)
{
	devs_free(&((struct daemon *)c->mode)->devs);
}

static const struct collector evsampled_collector = {
	.name = "event sampling", .load = evsampled_load_op, .attach = evsampled_attach_op,
	.poll = evsampled_poll_op, .detach = evsampled_detach_op, .free = evsampled_free_op,
};

/* The sampler starts once the accounting is attached; it never stops the daemon (dsamp_open says why). */
static int sampler_attach(struct run_ctx *c, char *err, size_t errlen)
{
	struct daemon *D = c->mode;

	D->sampler = dsamp_open(&D->samp, D->acct.tasks ? NULL : &c->spine, c->prep->host.pmu, c->up.loaded, D->d);
	return RUN_OK;
}

static void sampler_poll(struct run_ctx *c, int timeout_ms)
{
	struct daemon *D = c->mode;

	if (D->sampler)
		dsamp_poll(&D->samp);
}

static void sampler_detach(struct run_ctx *c)
{
	struct daemon *D = c->mode;

	D->sampler = NULL;
	dsamp_stop(&D->samp);
}

static const struct collector sampler_collector = {
	.name = "sampler", .attach = sampler_attach, .poll = sampler_poll, .detach = sampler_detach,
};

/* Exited threads' records, from whichever accounting runs. */
static void poll_exits(struct daemon *D, int timeout_ms)
{
	D->table[0]->poll(&D->c, timeout_ms);
}


static void on_exit_record(void *ctx, const struct thread_stats *s)
{
	struct daemon *D = ctx;

	if (D->agg_ready)
		agg_thread_exit(&D->agg, s);
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
	struct uprobes_prog *u = &D->c.up.prog;
	struct func_row *rows = NULL;
	size_t n = 0;

	if (uprobes_read(u, &rows, &n) == 0)
		agg_funcs_update(&D->funcs, rows, n);
	for (size_t i = 0; i < n && D->n_drop_tids; i++) {
		uint32_t tid = rows[i].key.tid;

		if (!bsearch(&tid, D->drop_tids, D->n_drop_tids, sizeof(tid), cmp_u32))
			continue;
		uprobes_forget(u, &rows[i].key);
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
	struct uprobe_set *set = &D->c.up.set;
	int hot = -1;
	char err[512];

	if (!D->c.up.loaded || !D->budget.over || up_ns < 0.5 * bpf_ns) {
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
	if (uprobes_reattach_lib(&D->c.up.prog, set, set->funcs[hot].lib, err, sizeof(err)))
		warn_add("re-attaching after the budget detached a function: %s", err);
}

#define CPU_CHECK_AFTER 10	/* refreshes */

/* The daemon's own CPU (user space: refreshes, symbolizing, HTTP) over the last wall ns. */
static void user_cost(struct daemon *D, double wall)
{
	unsigned long long self = self_cpu_ns();

	D->self.user_cpu_ratio = wall > 0 ? (double)(self - D->last_self_ns) / wall : 0;
	D->last_self_ns = self;
}

/* With the BPF time, the daemon's whole CPU cost against --max-overhead: over it, said once (the
 * sampling rate does not set the user-space cost: the interval and the number of series do). */
static void check_cpu_cost(struct daemon *D)
{
	double bpf = D->budget.cost, total = D->self.user_cpu_ratio + bpf;

	/* smoothed (start-up, a scrape or a profile are bursts), and past the start-up's symbol loading */
	D->cpu_smooth = D->self.refreshes > CPU_CHECK_AFTER ? 0.9 * D->cpu_smooth + 0.1 * total : total;
	total = D->cpu_smooth;
	if (!D->cpu_over && D->budget.limit > 0 && total > D->budget.limit && D->self.refreshes > 2 * CPU_CHECK_AFTER) {
		warn_add("budget: tmabpf's CPU is %.2f%% of a CPU (user space %.2f%%, BPF %.2f%%), over --max-overhead %.2f%%: "
			 "a longer --interval or fewer --top-procs/--top-functions cost less in user space",
			 100 * total, 100 * D->self.user_cpu_ratio, 100 * bpf, 100 * D->budget.limit);
		D->cpu_over = true;
	}
}

/* Sampled accounting over budget even at the stack sampler's lowest rate: the events' rate halves
 * (down to DEVS_MIN_HZ), one line each time; estimates stay unbiased (each sample carries its period). */
static void shed_events_rate(struct daemon *D)
{
	double hz = D->devs.ev.hz;

	if (!D->acct.sampled || !D->budget.floor_over || hz <= DEVS_MIN_HZ)
		return;
	hz = hz / 2 < DEVS_MIN_HZ ? DEVS_MIN_HZ : hz / 2;
	evsamples_set_rate(&D->devs.ev, hz);
	warn_add("budget: tmabpf's BPF time is %.2f%% of a CPU, over --max-overhead %.2f%%: sampled accounting lowered "
		 "to %.0f samples/s per CPU (its estimates get wider error bars: tmabpf_event_samples_total)",
		 100 * D->budget.cost, 100 * D->budget.limit, hz);
}

static void update_budget(struct daemon *D, unsigned long long now)
{
	struct daemon_self *s = &D->self;
	unsigned long long bpf = s->spine.bpf_run_ns + s->uprobe_run_ns;
	unsigned long long samp = D->sampler ? D->sampler->run_ns(D->sampler->ctx) : 0;
	double dbpf, dup, dsamp, wall;
	bool was_over = D->budget.floor_over;

	bpf += samp;
	if (D->acct.sampled) {
		unsigned long long ns, cnt;

		devs_run_stats(&D->devs, &ns, &cnt);
		bpf += ns;
	}
	if (!D->last_t) {
		D->last_self_ns = self_cpu_ns();
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
	user_cost(D, wall);
	if (!s->spine.run_stats)
		return;	/* no measurement: said once at start */
	double hz = D->budget.hz, next = budget_step(&D->budget, dbpf, dsamp, wall);

	s->bpf_cpu_ratio = D->budget.cost;
	check_cpu_cost(D);
	if (D->sampler && next != hz && D->sampler->set_rate(D->sampler->ctx, next))
		warn_add("budget: could not set the sampling rate to %.1f Hz", next);
	if (D->budget.floor_over && !was_over)
		warn_add("budget: tmabpf's BPF time is %.2f%% of a CPU, over --max-overhead %.2f%%%s", 100 * D->budget.cost,
			 100 * D->budget.limit,
			 D->sampler ? " even at the lowest sampling rate (thread accounting alone)" :
			 D->acct.tasks ? " (task accounting: a longer --interval costs less)" :
			 " (context-switch accounting: fewer -e events cost less)");
	shed_events_rate(D);
	shed_uprobes(D, dup, dbpf);
}

/* Kernel memory of the BPF maps this process holds: the memlock of each map fd (fdinfo). */
static double bpf_maps_memlock(void)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *e;
	double sum = 0;

	if (!dir)
		return 0;
	while ((e = readdir(dir))) {
		char path[300], link[64], line[128];
		ssize_t n;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0 || (link[n] = 0, strcmp(link, "anon_inode:bpf-map")))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%s", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		while (fgets(line, sizeof(line), f)) {
			unsigned long long v;

			if (sscanf(line, "memlock: %llu", &v) == 1)
				sum += (double)v;
		}
		fclose(f);
	}
	closedir(dir);
	return sum;
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
	/* the maps are sized at load and never resized: read once (reading every map's fdinfo at each
	 * refresh made the soak test's RSS grow by tens of MB) */
	if (!s->bpf_map_bytes)
		s->bpf_map_bytes = bpf_maps_memlock();
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
	const struct run_prep *p = &D->prep;
	struct daemon_view v = {
		.agg = &D->agg, .funcs = D->c.up.loaded ? &D->funcs : NULL, .uset = &D->c.up.set, .evs = &p->evs,
		.host = &p->host, .recipe = p->cpu ? tma_cpu_name(p->cpu) : NULL, .tma_level = D->tma_zero ? 0 : p->tma_level,
		.tma_plan = p->tma_level && !D->tma_zero ? &p->plan : NULL, .self = &D->self, .samp = D->sampler ? &D->samp : NULL,
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

/* The run's rule (zero_counts.h): events of the TMA recipe that have read 0 since the start while
 * others counted make its ratios a clean, false 0 % or 100 %: none is exported, said once. */
static void zero_counts_check(struct daemon *D)
{
	char why[256];
	bool zero;

	if (!D->prep.tma_level)
		return;
	zero = zero_counts_tma(&D->prep.evs, D->agg.counted, (mono_ns() - D->start_ns) / 1e9, why, sizeof(why)) > 0;
	if (zero && !D->tma_zero)
		warn_add("daemon: tmabpf_tma_ratio not exported: %s", why);
	else if (!zero && D->tma_zero)
		warn_add("daemon: every event of the TMA recipe counts now: tmabpf_tma_ratio exported again");
	D->tma_zero = zero;
}

static void refresh(struct daemon *D)
{
	unsigned long long t0 = mono_ns();
	struct thread_stats *live = NULL;
	size_t n = 0;
	bool snap;

	snap = (D->acct.tasks ? tasks_read(&D->c.tasks, &live, &n) : threads_read(&D->c.spine, &live, &n)) == 0;
	if (snap) {
		agg_begin(&D->agg);
		for (size_t i = 0; i < n; i++)
			agg_thread_seen(&D->agg, &live[i]);
		D->self.threads_in_map = n;
	}
	free(live);
	poll_exits(D, 0);	/* exits up to now: none of the threads not seen can still come */
	if (snap && D->acct.sampled) {
		unsigned long long cnt;

		devs_drain(&D->devs, &D->agg);	/* the interval's estimates, as the threads' counts */
		D->self.event_sampling = true;
		memcpy(D->self.event_samples, D->devs.samples, sizeof(D->self.event_samples));
		devs_run_stats(&D->devs, &D->self.evsample_run_ns, &cnt);
	}
	if (D->c.up.loaded)
		refresh_funcs(D);
	if (snap)
		agg_end(&D->agg, mono_ns());
	zero_counts_check(D);
	if (D->sampler)
		dsamp_drain(&D->samp, &D->agg, mono_ns());	/* before the budget may change the rate */
	if (D->acct.tasks)
		tasks_self_stats(&D->c.tasks, &D->self.spine);
	else
		threads_self_stats(&D->c.spine, &D->self.spine);
	if (D->sampler)
		samples_stats_add(&D->samp.prog, &D->self.spine);	/* standalone (tasks mode): its own slots */
	if (D->c.up.loaded)
		uprobes_run_stats(&D->c.up.prog, &D->self.uprobe_run_ns, &D->self.uprobe_run_cnt);
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

/* /debug/pprof/profile: start the one asked for, or answer it once its seconds are over. */
static void profile_poll(struct daemon *D, unsigned long long now)
{
	static const char no_sampler[] = "503 service unavailable: the daemon does not sample (--no-sample, or its "
					 "sampler could not start: see its log)\n";
	static const char nomem[] = "503 service unavailable: out of memory for the profile\n";
	struct profile *p;
	unsigned char *buf = NULL;
	size_t len = 0;
	char err[256];
	int secs;

	if (D->profile_end_ns && http_profile_abandoned(D->http)) {
		D->profile_end_ns = 0;	/* its client went away: dropped, the next request is taken now */
		if (D->acct.sampled)
			devs_profile_end(&D->devs);
		p = dsamp_profile_end(&D->samp, &D->agg, now);
		if (p)
			profile_free(p);
		free(p);
		return;
	}
	if (!D->profile_end_ns) {
		if (!http_profile_wanted(D->http, &secs))
			return;
		/* sampled accounting: the events' estimates too, one sample type each */
		if (!D->sampler || dsamp_profile_begin(&D->samp, &D->agg, D->acct.sampled ? &D->prep.evs : NULL, now)) {
			const char *msg = D->sampler ? nomem : no_sampler;

			http_profile_answer(D->http, 503, "text/plain; charset=utf-8", strdup(msg), strlen(msg));
			return;
		}
		if (D->acct.sampled)
			devs_profile_begin(&D->devs, &D->samp);
		D->profile_end_ns = now + (unsigned long long)secs * 1000000000ULL;
		return;
	}
	if (now < D->profile_end_ns)
		return;
	D->profile_end_ns = 0;
	if (D->acct.sampled)
		devs_profile_end(&D->devs);
	p = dsamp_profile_end(&D->samp, &D->agg, now);
	if (p && p->nomem)
		warn_add("/debug/pprof/profile: out of memory: some stacks are missing from the profile served");
	if (!p || pprof_encode(p, &buf, &len, err, sizeof(err))) {
		if (p)
			warn_add("/debug/pprof/profile: %s", err);
		http_profile_answer(D->http, 503, "text/plain; charset=utf-8", strdup(nomem), strlen(nomem));
	} else {
		http_profile_answer(D->http, 200, "application/octet-stream", (char *)buf, len);
	}
	if (p)
		profile_free(p);
	free(p);
}

static void loop(struct daemon *D)
{
	struct daemon_opts *d = D->d;
	const struct event_list *evs = &D->prep.evs;
	struct agg_cfg acfg = { .nr_events = evs->n, .top_procs = d->top_procs, .top_threads = d->top_threads,
				.max_cgroups = d->max_cgroups, .min_share = d->min_share_pct / 100,
				.expire_ns = (unsigned long long)(d->expire_s * 1e9), .resolve_cgroups = true };
	unsigned long long start = D->start_ns = mono_ns(), next, deadline;
	const char *why = "SIGTERM";

	if (agg_init(&D->agg, &acfg))
		warn_add("cgroup paths unavailable: %s", D->agg.names.why);
	D->agg_ready = true;
	budget_init(&D->budget, d->max_overhead_pct, D->sampler ? D->samp.hz : 0, d->min_sample_hz);
	D->self.budget = &D->budget;
	D->self.sampling = D->sampler != NULL;
	D->self.start_time = unix_time_s();
	refresh(D);
	fprintf(stderr, "tmabpf: %s\n", D->acct.line);
	fprintf(stderr, "tmabpf: daemon: serving http://%s/metrics, refresh every %d ms, %d events, threads %s %d\n",
		http_bound(D->http), d->interval_ms, evs->n, D->acct.tasks ? "at most" : "map (LRU)", d->run.max_threads);
	next = start + d->interval_ms * 1000000ULL;
	deadline = d->run.duration_s > 0 ? start + (unsigned long long)(d->run.duration_s * 1e9) : 0;
	for (;;) {
		unsigned long long t = mono_ns();
		long long wait_ms = ((long long)next - (long long)t) / 1000000;

		collectors_poll(TABLE, &D->c, wait_ms < 0 ? 0 : wait_ms > POLL_MS ? POLL_MS : (int)wait_ms);
		if (run_stop_signal) {
			why = run_stop_signal_name();
			break;
		}
		t = mono_ns();
		if (deadline && t >= deadline) {
			why = "duration";
			break;
		}
		profile_poll(D, t);
		if (t >= next) {
			refresh(D);
			next += d->interval_ms * 1000000ULL;
			if (next <= t)
				next = t + d->interval_ms * 1000000ULL;
		}
	}
	fprintf(stderr, "tmabpf: daemon: stopping (%s) after %llu refreshes\n", why, D->self.refreshes);
}

/* Options -> the accounting chosen, the collectors loaded and attached, the loop; every exit
 * through here frees and detaches what was set up.  Returns the exit status. */
static int serve(struct daemon *D)
{
	struct run_ctx *c = &D->c;
	char err[1024];
	int r;

	if ((r = run_check_privilege()))
		return r;
	if (!D->acct.tasks && uprobe_run_resolve(&c->up, c->o->uprobe_specs, c->o->nr_uprobe_specs, -1, NULL, false, err,
						 sizeof(err))) {
		err_print("%s", err);
		return RUN_BAD_INPUT;
	}
	run_host(&D->prep);
	run_install_signals();
	run_threads_cfg(c->o, &c->tcfg);
	c->tcfg.lru = true;	/* bounded: the least recently used thread goes when full (counted) */
	c->tcfg.cgroup = true;
	c->use_tasks = D->acct.tasks;
	c->tasks_counts = D->acct.sampled ? TASKS_NO_COUNTS : TASKS_KERNEL_COUNTS;
	D->table[D->ncollectors++] = D->acct.tasks ? &tasks_collector : &spine_collector;
	if (D->acct.sampled)
		D->table[D->ncollectors++] = &evsampled_collector;
	D->table[D->ncollectors++] = &uprobes_collector;
	D->table[D->ncollectors++] = &sampler_collector;
	if (!(r = collectors_load(TABLE, c)) && !(r = collectors_attach(TABLE, c))) {
		if (c->up.loaded && agg_funcs_init(&D->funcs, c->up.set.nr_funcs)) {
			err_print("out of memory for %d functions", c->up.set.nr_funcs);
			r = RUN_FAILED;
		} else {
			loop(D);
		}
	}
	collectors_detach(TABLE, c);
	collectors_free(TABLE, c);
	uprobe_run_free(&c->up);
	thread_table_free(&c->tt);
	return r;
}

int cmd_daemon(int argc, char **argv)
{
	static struct daemon_opts d;
	static struct daemon D;
	char err[512];
	int r;

	D = (struct daemon){ .d = &d, .c = { .o = &d.run, .on_exit = on_exit_record, .exit_ctx = &D, .mode = &D } };
	D.c.prep = &D.prep;
	r = daemon_parse(argc, argv, &d);
	if (!r) {
		bpf_log_init(d.run.verbose);
		r = run_prepare(&d.run, &D.prep);
	}
	if (!r)
		r = accounting_choose(&d, &D.prep, &D.acct);
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
	D.self.accounting = D.acct.sampled ? "sampled" : D.acct.tasks ? "tasks" : "switch";
	r = serve(&D);
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
