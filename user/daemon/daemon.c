// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * tmabpf daemon: its collectors (daemon_collectors.c: the spine system-wide with
 * an LRU threads map, or task accounting; uprobes; the sampler) read every
 * interval, through the same table as a profiling run, into bounded
 * per-process / per-cgroup / top-thread series (daemon_agg.c), published as
 * Prometheus text served by libmicrohttpd and as JSON lines
 * (daemon_publish.c, daemon_http.c); tmabpf's own cost is held to
 * --max-overhead (daemon_overhead.c, budget.c); /debug/pprof/profile
 * (daemon_profile.c).
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collect/bpf_util.h"
#include "daemon/daemon.h"
#include "daemon/daemon_collectors.h"
#include "daemon/daemon_overhead.h"
#include "daemon/daemon_profile.h"
#include "daemon/daemon_publish.h"
#include "lib/clock.h"
#include "lib/sorted.h"
#include "lib/warn.h"

#define POLL_MS 100
#define TRIM_EVERY 10		/* refreshes between malloc_trim() calls */

/* Function rows (the uprobes' read): fold, then forget the sums of those of threads that exited a
 * refresh ago (the uprobes' read drops their rows then: bounded). */
static void refresh_funcs(struct daemon *D)
{
	const struct report *rep = &D->c.rep;

	daemon_agg_funcs_update(&D->funcs, rep->frows, rep->nfrows);
	for (size_t i = 0; i < rep->nfrows && D->n_drop_tids; i++) {
		uint32_t tid = rep->frows[i].key.tid;

		if (bsearch(&tid, D->drop_tids, D->n_drop_tids, sizeof(tid), sorted_cmp_u32))
			daemon_agg_funcs_forget(&D->funcs, rep->frows[i].key.fn, tid);
	}
	free(D->drop_tids);
	D->drop_tids = NULL;
	D->n_drop_tids = 0;
	if (D->agg.n_exited_tids && (D->drop_tids = malloc(D->agg.n_exited_tids * sizeof(uint32_t)))) {
		memcpy(D->drop_tids, D->agg.exited_tids, D->agg.n_exited_tids * sizeof(uint32_t));
		D->n_drop_tids = D->agg.n_exited_tids;
		qsort(D->drop_tids, D->n_drop_tids, sizeof(uint32_t), sorted_cmp_u32);
	}
}

/* The phase that began at since ends now: its time counted; returns now, the next one's start. */
static unsigned long long phase_end(struct daemon *D, enum refresh_phase ph, unsigned long long since)
{
	unsigned long long now = mono_ns();

	D->self.phase_seconds[ph] += (now - since) / 1e9;
	return now;
}

/* The collectors' read (the threads, exits up to now, the function rows, their own costs), then
 * the interval into the aggregation. */
static void refresh(struct daemon *D)
{
	unsigned long long t0 = mono_ns(), t;
	const struct thread_table *tt = &D->c.tt;

	daemon_agg_begin(&D->agg);	/* the exits the read drains belong to this interval */
	collectors_read(&D->c);
	for (size_t i = 0; i < tt->n_live; i++)
		daemon_agg_thread_seen(&D->agg, &tt->live[i]);
	D->self.threads_in_map = tt->n_live;
	if (D->acct.sampled) {
		unsigned long long cnt;

		daemon_evsampled_drain(&D->devs, &D->agg);	/* the interval's estimates, as the threads' counts */
		D->self.event_sampling = true;
		memcpy(D->self.event_samples, D->devs.samples, sizeof(D->self.event_samples));
		daemon_evsampled_run_stats(&D->devs, &D->self.evsample_run_ns, &cnt);
	}
	if (D->c.links.uprobes)
		refresh_funcs(D);
	t = phase_end(D, PHASE_DRAIN, t0);
	daemon_agg_end(&D->agg, t);
	daemon_publish_tma_check(D);
	t = phase_end(D, PHASE_AGGREGATE, t);
	if (D->sampler)
		daemon_sampling_drain(&D->samp, &D->agg, t);	/* before the budget may change the rate */
	t = phase_end(D, PHASE_SYMBOLIZE, t);
	D->self.spine = D->c.rep.self;
	D->self.uprobe_run_ns = D->c.rep.uprobe_run_ns;
	D->self.uprobe_run_cnt = D->c.rep.uprobe_run_cnt;
	D->self.max_threads = D->self.spine.max_threads;
	daemon_overhead_update(D, mono_ns());
	daemon_http_counts(D->http, &D->self.http);
	daemon_publish_self(&D->self);
	D->self.refreshes++;
	daemon_publish(D);
	D->self.refresh_seconds = (mono_ns() - t0) / 1e9;
	if (D->self.refreshes % TRIM_EVERY == 0)
		malloc_trim(0);	/* churn frees many small records: give the pages back */
	phase_end(D, PHASE_PUBLISH, t);
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

	if (daemon_agg_init(&D->agg, &acfg))
		warn_add("cgroup paths unavailable: %s", D->agg.names.why);
	D->agg_ready = true;
	budget_init(&D->budget, d->max_overhead_pct, D->sampler ? D->samp.hz : 0, d->min_sample_hz);
	D->self.budget = &D->budget;
	D->self.sampling = D->sampler != NULL;
	D->self.start_time = unix_time_s();
	refresh(D);
	fprintf(stderr, "tmabpf: %s\n", D->acct.line);
	fprintf(stderr, "tmabpf: daemon: serving http://%s/metrics, refresh every %d ms, %d events, threads %s %d\n",
		daemon_http_bound(D->http), d->interval_ms, evs->n, D->acct.tasks ? "at most" : "map (LRU)", d->run.max_threads);
	next = start + d->interval_ms * 1000000ULL;
	deadline = d->run.duration_s > 0 ? start + (unsigned long long)(d->run.duration_s * 1e9) : 0;
	for (;;) {
		unsigned long long t = mono_ns();
		long long wait_ms = ((long long)next - (long long)t) / 1000000;

		collectors_poll(&D->c, wait_ms < 0 ? 0 : wait_ms > POLL_MS ? POLL_MS : (int)wait_ms);
		if (run_stop_signal) {
			why = run_stop_signal_name();
			break;
		}
		t = mono_ns();
		if (deadline && t >= deadline) {
			why = "duration";
			break;
		}
		daemon_profile_poll(D, t);
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
	int r;

	if ((r = run_check_privilege()))
		return r;
	daemon_collectors_table(D);
	run_ctx_init(c, &D->d->run, &D->prep, D->table, D->ncollectors);
	c->acct = (struct run_accounting){ .use_tasks = D->acct.tasks, .bounded = true,
					   .tasks_counts = D->acct.sampled ? TASKS_NO_COUNTS : TASKS_KERNEL_COUNTS };
	if ((r = collectors_init(c))) {
		collectors_free(c);
		return r;
	}
	run_host(&D->prep);
	run_install_signals();
	if (!(r = collectors_load(c)) && !(r = collectors_attach(c))) {
		if (c->links.uprobes && daemon_agg_funcs_init(&D->funcs, c->links.uset->nr_funcs)) {
			err_print("out of memory for %d functions", c->links.uset->nr_funcs);
			r = RUN_FAILED;
		} else {
			loop(D);
		}
	}
	collectors_detach(c);
	collectors_free(c);
	thread_table_free(&c->tt);
	return r;
}

int cmd_daemon(int argc, char **argv)
{
	static struct daemon_opts d;
	static struct daemon D;
	char err[512];
	int r;

	D = (struct daemon){ .d = &d };
	r = daemon_cli_parse(argc, argv, &d);
	if (!r) {
		bpf_log_init(d.run.verbose);
		r = run_prepare(&d.run, &D.prep);
	}
	if (!r)
		r = daemon_accounting_choose(&d, &D.prep, &D.acct);
	if (r) {
		daemon_cli_free(&d);
		return r < 0 ? 0 : r;
	}
	/* big buffers (map reads) come and go as mmaps; a burst does not pin the heap */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	mallopt(M_ARENA_MAX, 2);
	if (daemon_http_start(&D.http, d.listen, err, sizeof(err))) {
		err_print("%s", err);
		daemon_cli_free(&d);
		return EXIT_USAGE;
	}
	if (d.jsonl_path && outfile_open(&D.jsonl, "--jsonl", d.jsonl_path, OUTFILE_APPEND, d.run.out_mode, err,
					 sizeof(err))) {
		err_print("%s", err);
		daemon_http_stop(D.http);
		daemon_cli_free(&d);
		return EXIT_USAGE;
	}
	D.self.accounting = D.acct.sampled ? "sampled" : D.acct.tasks ? "tasks" : "switch";
	r = serve(&D);
	daemon_http_stop(D.http);
	if (outfile_is_open(&D.jsonl) && outfile_commit(&D.jsonl, err, sizeof(err)) && !D.jsonl_failed) {
		err_print("%s", err);
		r = r ? r : 1;
	}
	if (D.agg_ready)
		daemon_agg_free(&D.agg);
	daemon_agg_funcs_free(&D.funcs);
	free(D.drop_tids);
	daemon_cli_free(&d);
	return r;
}
