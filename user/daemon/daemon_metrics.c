// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Metric names follow Prometheus' conventions: base units in the name
 * (seconds, ratio, bytes), _total for counters, labels for dimensions.
 * Process series are labelled {cgroup, comm, pid}; what processes without a
 * series of their own did is summed per cgroup under {cgroup, comm="[other]"}
 * (no pid label), so that sum by (cgroup) covers everything.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "daemon/daemon_metrics.h"
#include "daemon/daemon_sampling.h"
#include "lib/json.h"
#include "lib/prom.h"
#include "lib/version.h"
#include "model/report.h"
#include "model/thread_table.h"
#include "output/tma_output.h"

#define OTHER_COMM "[other]"

static int series_tma(const struct daemon_view *v, const struct thread_stats *s, struct tma_result *res)
{
	return v->tma ? v->tma(s, res) : sums_tma(v->tma_plan, v->evs, s, res);
}

typedef void (*series_fn)(FILE *f, const struct daemon_view *v, const char *const *labels,
			  const struct agg_series *s, void *arg);

/* Every exported process series, then every cgroup's [other] series that has something. */
static void for_each_series(FILE *f, const struct daemon_view *v, series_fn fn, void *arg)
{
	const struct agg *a = v->agg;
	char pid[16];

	for (size_t i = 0; i < a->procs.cap; i++) {
		const struct agg_proc *p = a->procs.vals[i];
		char comm[TMABPF_COMM_LEN + 1];

		if (!p || !p->exported)
			continue;
		memcpy(comm, p->comm, TMABPF_COMM_LEN);
		comm[TMABPF_COMM_LEN] = 0;
		snprintf(pid, sizeof(pid), "%u", p->pid);
		const char *labels[] = { "cgroup", daemon_agg_cgroup_label(p), "comm", comm, "pid", pid, NULL };
		fn(f, v, labels, &p->s, arg);
	}
	for (size_t i = 0; i < a->cgroups.cap; i++) {
		const struct agg_cgroup *c = a->cgroups.vals[i];

		if (!c || !c->other.active_ns)
			continue;
		const char *labels[] = { "cgroup", c->label, "comm", OTHER_COMM, NULL };
		fn(f, v, labels, &c->other, arg);
	}
	if (a->overflow.other.active_ns) {
		const char *labels[] = { "cgroup", a->overflow.label, "comm", OTHER_COMM, NULL };
		fn(f, v, labels, &a->overflow.other, arg);
	}
}

/* labels plus one more pair, in buf (at most 8 pairs). */
static const char *const *with(const char **buf, const char *const *labels, const char *k, const char *val)
{
	int n = 0;

	while (labels[n] && n < 12) {
		buf[n] = labels[n];
		buf[n + 1] = labels[n + 1];
		n += 2;
	}
	buf[n] = k;
	buf[n + 1] = val;
	buf[n + 2] = NULL;
	return buf;
}

enum field { F_ONCPU, F_BLOCKED, F_RUNQ, F_SW_VOL, F_SW_INVOL, F_MIGR };

static void emit_field(FILE *f, const struct daemon_view *v, const char *const *labels, const struct agg_series *s,
		       void *arg)
{
	const char *buf[16];

	switch ((enum field)(long)arg) {
	case F_ONCPU:
		prom_sample(f, "tmabpf_oncpu_seconds_total", labels, s->total.oncpu_ns / 1e9);
		break;
	case F_BLOCKED:
		prom_sample(f, "tmabpf_offcpu_seconds_total", with(buf, labels, "reason", "blocked"),
			    s->total.blocked_ns / 1e9);
		break;
	case F_RUNQ:
		prom_sample(f, "tmabpf_offcpu_seconds_total", with(buf, labels, "reason", "runqueue"),
			    s->total.runq_ns / 1e9);
		break;
	case F_SW_VOL:
		prom_sample(f, "tmabpf_context_switches_total", with(buf, labels, "kind", "voluntary"), s->total.sw_vol);
		break;
	case F_SW_INVOL:
		prom_sample(f, "tmabpf_context_switches_total", with(buf, labels, "kind", "involuntary"),
			    s->total.sw_invol);
		break;
	case F_MIGR:
		prom_sample(f, "tmabpf_migrations_total", labels, s->total.migrations);
		break;
	}
}

static void emit_counters(FILE *f, const struct daemon_view *v, const char *const *labels, const struct agg_series *s,
			  void *arg)
{
	const char *buf[16];

	for (int e = 0; e < v->evs->n; e++)
		prom_sample(f, "tmabpf_events_total", with(buf, labels, "event", v->evs->ev[e].name), s->total.counters[e]);
}

static void emit_samples(FILE *f, const struct daemon_view *v, const char *const *labels, const struct agg_series *s,
			 void *arg)
{
	const char *buf[16];

	for (int e = 0; e < v->evs->n; e++)
		prom_sample(f, "tmabpf_process_event_samples_total", with(buf, labels, "event", v->evs->ev[e].name),
			    s->total.samples[e]);
}

static void emit_tma(FILE *f, const struct daemon_view *v, const char *const *labels, const struct agg_series *s,
		     void *arg)
{
	struct tma_result res;
	const char *buf[16], *buf2[16];
	char level[16];

	if (!s->last.oncpu_ns || series_tma(v, &s->last, &res))
		return;
	for (int i = 0; i < res.n; i++) {
		const struct tma_node *n = &res.node[i];

		if (n->tma < 1 || n->tma > v->tma_level || isnan(n->value))
			continue;
		snprintf(level, sizeof(level), "%d", n->tma);
		prom_sample(f, "tmabpf_tma_ratio", with(buf2, with(buf, labels, "level", level), "node", n->name),
			    n->value / 100.0);
	}
}

static void process_families(FILE *f, const struct daemon_view *v)
{
	prom_family(f, "tmabpf_oncpu_seconds_total", "counter",
		    "On-CPU time (se.sum_exec_runtime) of the processes' threads, exited threads included.");
	for_each_series(f, v, emit_field, (void *)(long)F_ONCPU);
	prom_family(f, "tmabpf_offcpu_seconds_total", "counter",
		    "Off-CPU time: blocked (sleep, I/O, locks) or runqueue (preempted while runnable).");
	for_each_series(f, v, emit_field, (void *)(long)F_BLOCKED);
	for_each_series(f, v, emit_field, (void *)(long)F_RUNQ);
	prom_family(f, "tmabpf_context_switches_total", "counter",
		    "Context switches away from the threads: voluntary (blocked) or involuntary (preempted).");
	for_each_series(f, v, emit_field, (void *)(long)F_SW_VOL);
	for_each_series(f, v, emit_field, (void *)(long)F_SW_INVOL);
	prom_family(f, "tmabpf_migrations_total", "counter", "Switch-ins on another CPU than the last one.");
	for_each_series(f, v, emit_field, (void *)(long)F_MIGR);
	prom_family(f, "tmabpf_events_total", "counter",
		    "Perf counter deltas virtualised per thread (multiplex-scaled), summed per process.");
	for_each_series(f, v, emit_counters, NULL);
	if (v->self && v->self->event_sampling) {
		prom_family(f, "tmabpf_process_event_samples_total", "counter",
			    "Sampled accounting: the samples behind each process' estimate (tmabpf_events_total); "
			    "from n samples it is good to about 1.96/sqrt(n) relative at 95 %, and a TMA node to "
			    "that of the fewest samples among its events.");
		for_each_series(f, v, emit_samples, NULL);
	}
	if (v->tma_level && (v->tma_plan || v->tma)) {
		prom_family(f, "tmabpf_tma_ratio", "gauge",
			    "Top-down (TMA) breakdown of the last interval, as a ratio of pipeline slots.");
		for_each_series(f, v, emit_tma, NULL);
	}
}

/* The host's and each cgroup's totals, from every thread accounted (exited ones included), whatever
 * has a process series: process series come and go (a dead process's stays expire_ns, a new one's
 * first value is lost to rate()), so sums over them drift under churn; these do not. */
static void total_samples(FILE *f, const char *name, const char *const *labels, const struct agg_series *s,
			  bool oncpu)
{
	const char *buf[16];

	if (oncpu) {
		prom_sample(f, name, labels, s->total.oncpu_ns / 1e9);
		return;
	}
	prom_sample(f, name, with(buf, labels, "reason", "blocked"), s->total.blocked_ns / 1e9);
	prom_sample(f, name, with(buf, labels, "reason", "runqueue"), s->total.runq_ns / 1e9);
}

static void total_families(FILE *f, const struct daemon_view *v)
{
	static const char *const names[] = { "tmabpf_host_oncpu_seconds_total", "tmabpf_host_offcpu_seconds_total",
					     "tmabpf_cgroup_oncpu_seconds_total", "tmabpf_cgroup_offcpu_seconds_total" };
	static const char *const helps[] = {
		"On-CPU time of every thread accounted, exited ones included: the host's, no process series behind it.",
		"Off-CPU time of every thread accounted, blocked or runqueue.",
		"On-CPU time of every thread of the cgroup, exited ones included, with a process series or not.",
		"Off-CPU time of every thread of the cgroup, blocked or runqueue." };
	const struct agg *a = v->agg;
	const char *none[] = { NULL };

	for (int fam = 0; fam < 4; fam++) {
		prom_family(f, names[fam], "counter", helps[fam]);
		if (fam < 2) {
			total_samples(f, names[fam], none, &a->host, fam == 0);
			continue;
		}
		for (size_t i = 0; i < a->cgroups.cap; i++) {
			const struct agg_cgroup *c = a->cgroups.vals[i];

			if (c && c->all.active_ns) {
				const char *labels[] = { "cgroup", c->label, NULL };

				total_samples(f, names[fam], labels, &c->all, fam == 2);
			}
		}
		if (a->overflow.all.active_ns) {
			const char *labels[] = { "cgroup", a->overflow.label, NULL };

			total_samples(f, names[fam], labels, &a->overflow.all, fam == 2);
		}
	}
}

static void thread_families(FILE *f, const struct daemon_view *v)
{
	static const char *const names[] = { "tmabpf_thread_oncpu_seconds_total", "tmabpf_thread_offcpu_seconds_total",
					     "tmabpf_thread_events_total" };
	static const char *const helps[] = { "On-CPU time of the busiest threads (top-N by recent on-CPU time).",
					     "Off-CPU time of the busiest threads.",
					     "Counter deltas of the busiest threads (multiplex-scaled)." };
	const struct agg *a = v->agg;

	for (int fam = 0; fam < 3; fam++) {
		prom_family(f, names[fam], "counter", helps[fam]);
		for (size_t i = 0; i < a->threads.cap; i++) {
			const struct agg_thread *t = a->threads.vals[i];
			char comm[TMABPF_COMM_LEN + 1], pid[16], tid[16];
			const char *buf[16];

			if (!t || !t->exported || t->exited)
				continue;
			memcpy(comm, t->s.comm, TMABPF_COMM_LEN);
			comm[TMABPF_COMM_LEN] = 0;
			snprintf(pid, sizeof(pid), "%u", t->s.pid);
			snprintf(tid, sizeof(tid), "%u", t->s.tid);
			const char *labels[] = { "cgroup", daemon_agg_cgroup_label(t->proc), "comm", comm, "pid", pid,
						 "tid", tid, NULL };
			if (fam == 0) {
				prom_sample(f, names[0], labels, t->s.oncpu_ns / 1e9);
			} else if (fam == 1) {
				prom_sample(f, names[1], with(buf, labels, "reason", "blocked"),
					    t->s.offcpu_blocked_ns / 1e9);
				prom_sample(f, names[1], with(buf, labels, "reason", "runqueue"),
					    t->s.offcpu_runqueue_ns / 1e9);
			} else {
				for (int e = 0; e < v->evs->n; e++)
					prom_sample(f, names[2], with(buf, labels, "event", v->evs->ev[e].name),
						    t->scaled[e]);
			}
		}
	}
}

static void function_families(FILE *f, const struct daemon_view *v)
{
	static const struct {
		const char *name, *help;
		size_t off;
		double scale;
	} fams[] = {
		{ "tmabpf_function_calls_total", "Calls of the probed functions (--uprobe).",
		  offsetof(struct agg_func_sums, calls), 1 },
		{ "tmabpf_function_wall_seconds_total", "Wall time inside the probed functions (outermost calls).",
		  offsetof(struct agg_func_sums, wall_ns), 1e-9 },
		{ "tmabpf_function_oncpu_seconds_total", "On-CPU time inside the probed functions (inclusive).",
		  offsetof(struct agg_func_sums, oncpu_ns), 1e-9 },
		{ "tmabpf_function_self_oncpu_seconds_total", "On-CPU time inside the probed functions minus probed callees.",
		  offsetof(struct agg_func_sums, self_oncpu_ns), 1e-9 },
	};

	if (!v->funcs || !v->uset)
		return;
	for (size_t k = 0; k < sizeof(fams) / sizeof(fams[0]); k++) {
		prom_family(f, fams[k].name, "counter", fams[k].help);
		for (int fn = 0; fn < v->funcs->n && fn < v->uset->nr_funcs; fn++) {
			const struct uprobe_func *uf = &v->uset->funcs[fn];
			const char *labels[] = { "module", v->uset->libs[uf->lib].module, "symbol", uf->symbol, NULL };
			double val = *(const double *)((const char *)&v->funcs->sum[fn] + fams[k].off);

			prom_sample(f, fams[k].name, labels, val * fams[k].scale);
		}
	}
}

/* ---- the sampler's series (daemon_sampling.c) ---- */

struct prom_arg {
	FILE *f;
	const char *name;
	bool samples;
};

static void prom_sums(void *arg, const char *const *labels, const struct dsamp_sums *sums)
{
	struct prom_arg *p = arg;

	prom_sample(p->f, p->name, labels, p->samples ? (double)sums->samples : sums->cpu_ns / 1e9);
}

static void sampler_families(FILE *f, const struct dsamp *s, const struct agg *a)
{
	struct prom_arg p = { .f = f };
	struct symbolizer_stats st = { 0 };

	prom_family(f, "tmabpf_samples_total", "counter", "Samples of tracked threads recorded (all CPUs).");
	prom_sample(f, "tmabpf_samples_total", NULL, s->attached ? (double)s->total.samples : 0);
	if (!s->attached)
		return;
	prom_family(f, "tmabpf_sampled_seconds_total", "counter",
		    "CPU time estimated from all samples: each weighted by its period (1/rate), so rate changes "
		    "leave it unbiased.");
	prom_sample(f, "tmabpf_sampled_seconds_total", NULL, s->total.cpu_ns / 1e9);
	prom_family(f, "tmabpf_sampled_cpu_seconds_total", "counter",
		    "CPU time estimated from samples (weighted by 1/rate), per process or cgroup [other].");
	p.name = "tmabpf_sampled_cpu_seconds_total";
	daemon_sampling_for_each_series(s, a, prom_sums, &p);
	prom_family(f, "tmabpf_process_samples_total", "counter", "Samples per process or cgroup [other].");
	p.name = "tmabpf_process_samples_total";
	p.samples = true;
	daemon_sampling_for_each_series(s, a, prom_sums, &p);
	prom_family(f, "tmabpf_function_sampled_seconds_total", "counter",
		    "CPU time estimated from samples whose leaf is this function (kernel frame first), for the "
		    "--top-functions hottest (process, function) pairs; the rest under module=symbol=\"[other]\".");
	p.name = "tmabpf_function_sampled_seconds_total";
	p.samples = false;
	daemon_sampling_for_each_function(s, a, prom_sums, &p);
	prom_family(f, "tmabpf_sampler_symbolizer_rebuilds_total", "counter",
		    "Rebuilds of the user-space symbolizer (bounds the maps and symbols of processes met).");
	prom_sample(f, "tmabpf_sampler_symbolizer_rebuilds_total", NULL, s->sym_rebuilds);
	prom_family(f, "tmabpf_sampler_symbolizer_exited_forgotten_total", "counter",
		    "Exited processes whose maps the user-space symbolizer forgot (their files' symbols stay).");
	prom_sample(f, "tmabpf_sampler_symbolizer_exited_forgotten_total", NULL, s->sym_forgotten);
	if (s->usym)
		symbolizer_get_stats(s->usym, &st);
	prom_family(f, "tmabpf_sampler_symbol_table_bytes", "gauge",
		    "Files' symbol tables the user-space symbolizer holds now (bounded: least recently used dropped).");
	prom_sample(f, "tmabpf_sampler_symbol_table_bytes", NULL, st.table_bytes);
	prom_family(f, "tmabpf_sampler_symbol_tables_dropped_total", "counter",
		    "Files' symbol tables dropped to keep under the bound (loaded again when met again).");
	prom_sample(f, "tmabpf_sampler_symbol_tables_dropped_total", NULL, s->sym_past.dropped + st.dropped);
	prom_family(f, "tmabpf_sampler_symbol_unnamed_total", "counter",
		    "Addresses left module+0xOFF because their file's dropped table waited to be loaded again.");
	prom_sample(f, "tmabpf_sampler_symbol_unnamed_total", NULL, s->sym_past.unnamed + st.unnamed);
	prom_family(f, "tmabpf_sampler_symbols_deferred_total", "counter",
		    "Addresses left module+0xOFF (JIT code: its mapping) while their file's symbols (their process' "
		    "perf map) were read off the refresh (on a thread of their own): named in the refreshes after.");
	prom_sample(f, "tmabpf_sampler_symbols_deferred_total", NULL, s->sym_past.deferred + st.deferred);
	prom_family(f, "tmabpf_sampler_symbol_reloads_refused_total", "counter",
		    "Dropped symbol tables not loaded again because another file is at the path now (its build "
		    "id, or size and time, differ: replaced on disk, or the pid reused): their frames stay "
		    "module+0xOFF.");
	prom_sample(f, "tmabpf_sampler_symbol_reloads_refused_total", NULL,
		    s->sym_past.reloads_refused + st.reloads_refused);
	prom_family(f, "tmabpf_sampler_unknown_leaf_samples_total", "counter",
		    "Samples whose leaf could not be named (no stack stored).");
	prom_sample(f, "tmabpf_sampler_unknown_leaf_samples_total", NULL, s->unknown_leaf);
}

static void json_sampled(void *arg, const char *const *labels, const struct dsamp_sums *sums)
{
	struct json *j = arg;

	json_obj_begin(j, NULL);
	for (int i = 0; labels[i]; i += 2)
		json_str(j, labels[i], labels[i + 1]);
	json_u64(j, "cpu_ns", (uint64_t)(sums->cpu_ns + 0.5));
	json_u64(j, "samples", sums->samples);
	json_obj_end(j);
}

static void sampler_json(struct json *j, const struct dsamp *s, const struct agg *a)
{
	json_arr_begin(j, "sampled");
	if (s->attached)
		daemon_sampling_for_each_series(s, a, json_sampled, j);
	json_arr_end(j);
	json_arr_begin(j, "sampled_functions");
	if (s->attached)
		daemon_sampling_for_each_function(s, a, json_sampled, j);
	json_arr_end(j);
}

static void gauge(FILE *f, const char *name, const char *help, double val)
{
	prom_family(f, name, "gauge", help);
	prom_sample(f, name, NULL, val);
}

static void counter(FILE *f, const char *name, const char *help, double val)
{
	prom_family(f, name, "counter", help);
	prom_sample(f, name, NULL, val);
}

static void self_families(FILE *f, const struct daemon_view *v)
{
	const struct daemon_self *s = v->self;
	const struct agg *a = v->agg;
	const struct budget *b = s->budget;
	char max[32];

	prom_family(f, "tmabpf_build_info", "gauge", "tmabpf build and host facts (always 1).");
	{
		const char *labels[] = { "version", TMABPF_VERSION, "kernel", v->host->kernel,
					 "recipe", v->recipe ? v->recipe : "none", "pmu", v->host->pmu ? "1" : "0",
					 "accounting", s->accounting ? s->accounting : "switch", "git", version_git(),
					 "libbpf", version_libbpf(), "bpf_arch", version_bpf_arch(), NULL };
		prom_sample(f, "tmabpf_build_info", labels, 1);
	}
	prom_family(f, "tmabpf_bpf_run_seconds_total", "counter",
		    "tmabpf's own BPF run time (kernel BPF stats), per group of programs.");
	{
		const char *sp[] = { "programs", s->accounting && strcmp(s->accounting, "switch") ? "tasks" : "spine", NULL },
			   *ev[] = { "programs", "event_sampling", NULL },
			   *up[] = { "programs", "uprobes", NULL },
			   *sa[] = { "programs", "sampler", NULL };
		prom_sample(f, "tmabpf_bpf_run_seconds_total", sp, s->spine.bpf_run_ns / 1e9);
		if (s->event_sampling)
			prom_sample(f, "tmabpf_bpf_run_seconds_total", ev, s->evsample_run_ns / 1e9);
		if (v->funcs)
			prom_sample(f, "tmabpf_bpf_run_seconds_total", up, s->uprobe_run_ns / 1e9);
		if (v->samp)
			prom_sample(f, "tmabpf_bpf_run_seconds_total", sa, s->sample_run_ns / 1e9);
		prom_family(f, "tmabpf_bpf_runs_total", "counter", "Runs of tmabpf's BPF programs.");
		prom_sample(f, "tmabpf_bpf_runs_total", sp, s->spine.bpf_run_cnt);
		if (v->funcs)
			prom_sample(f, "tmabpf_bpf_runs_total", up, s->uprobe_run_cnt);
		if (v->samp)
			prom_sample(f, "tmabpf_bpf_runs_total", sa, s->sample_run_cnt);
	}
	gauge(f, "tmabpf_bpf_stats_enabled", "1 when kernel BPF run-time stats are on (needed for the budget).",
	      s->spine.run_stats);
	gauge(f, "tmabpf_bpf_cpu_ratio", "tmabpf's BPF run time over the last interval, in CPUs (0.01 = 1 % of one).",
	      s->bpf_cpu_ratio);
	if (s->event_sampling) {
		prom_family(f, "tmabpf_event_samples_total", "counter",
			    "Sampled accounting: samples behind each event's estimates (tmabpf_events_total), all "
			    "processes; an estimate from n samples is good to about 1.96/sqrt(n) relative at 95 %.");
		for (int e = 0; e < v->evs->n; e++) {
			const char *l[] = { "event", v->evs->ev[e].name, NULL };

			prom_sample(f, "tmabpf_event_samples_total", l, s->event_samples[e]);
		}
	}
	gauge(f, "tmabpf_user_cpu_ratio", "The daemon's own CPU time (user and system, all its threads) over the last "
	      "interval, in CPUs; with tmabpf_bpf_cpu_ratio, its whole CPU cost.", s->user_cpu_ratio);
	gauge(f, "tmabpf_bpf_map_memory_bytes", "Kernel memory of the BPF maps the daemon holds (their memlock), "
	      "outside its resident memory; with process_resident_memory_bytes, its whole memory.", s->bpf_map_bytes);
	gauge(f, "tmabpf_overhead_budget_ratio", "The --max-overhead budget, in CPUs.", b->limit);
	counter(f, "tmabpf_overhead_budget_exceeded_intervals_total", "Intervals whose BPF run time was over the budget.",
		b->over_intervals);
	gauge(f, "tmabpf_sampling_available", "1 when the daemon samples (the budget then sets its rate; 0 with --no-sample).", s->sampling);
	gauge(f, "tmabpf_sample_rate_hz", "Effective sampling rate per CPU (0: no sampling).", s->sampling ? b->hz : 0);
	gauge(f, "tmabpf_sample_rate_requested_hz", "Requested sampling rate (--sample-hz).", b->max_hz);
	gauge(f, "tmabpf_sample_weight_seconds", "CPU time one sample stands for at the current rate (1/rate).",
	      s->sampling ? budget_sample_weight_ns(b) / 1e9 : 0);
	counter(f, "tmabpf_budget_rate_changes_total", "Sampling rate changes made by the budget.", b->rate_changes);
	if (v->funcs)
		counter(f, "tmabpf_budget_functions_detached_total", "Probed functions detached to stay in the budget.",
			s->funcs_detached);
	prom_family(f, "tmabpf_drops_total", "counter", "What tmabpf could not account, by reason.");
	{
		static const struct { const char *reason; int stat; } drops[] = {
			{ "threads_map_full", STAT_THREADS_FULL }, { "exit_records_lost", STAT_EXIT_DROPS },
			{ "counter_read_errors", STAT_READ_ERRORS }, { "stacks_map_full", STAT_STACKS_FULL },
			{ "funcs_map_full", STAT_FUNCS_FULL }, { "call_depth_overflow", STAT_DEPTH_OVERFLOW },
			{ "sample_rows_full", STAT_SAMPLE_ROWS_FULL }, { "sample_stacks_full", STAT_SAMPLE_STACKS_FULL },
			{ "sample_notices_lost", STAT_SAMPLE_NOTICES_LOST },
		};
		for (size_t i = 0; i < sizeof(drops) / sizeof(drops[0]); i++) {
			const char *labels[] = { "reason", drops[i].reason, NULL };
			prom_sample(f, "tmabpf_drops_total", labels, s->spine.stat[drops[i].stat]);
		}
		const char *lost[] = { "reason", "threads_evicted_or_lost", NULL };
		prom_sample(f, "tmabpf_drops_total", lost, a->threads_lost);
	}
	prom_family(f, "tmabpf_map_entries", "gauge", "Entries in tmabpf's BPF maps at the last refresh.");
	{
		const char *labels[] = { "map", "threads", NULL };
		prom_sample(f, "tmabpf_map_entries", labels, s->threads_in_map);
		prom_family(f, "tmabpf_map_capacity_entries", "gauge", "Size of tmabpf's BPF maps.");
		prom_sample(f, "tmabpf_map_capacity_entries", labels, s->max_threads);
	}
	prom_family(f, "tmabpf_tracked", "gauge", "Records in the daemon's tables.");
	{
		const char *t[] = { "kind", "threads", NULL }, *p[] = { "kind", "processes", NULL },
			   *c[] = { "kind", "cgroups", NULL };
		prom_sample(f, "tmabpf_tracked", t, a->threads.n);
		prom_sample(f, "tmabpf_tracked", p, a->procs.n);
		prom_sample(f, "tmabpf_tracked", c, a->cgroups.n);
	}
	prom_family(f, "tmabpf_series", "gauge", "Processes and threads with a series of their own, and the limits.");
	{
		snprintf(max, sizeof(max), "%d", a->cfg.top_procs);
		const char *p[] = { "kind", "process", "limit", max, NULL };
		prom_sample(f, "tmabpf_series", p, a->exported_procs);
		char tmax[32];
		snprintf(tmax, sizeof(tmax), "%d", a->cfg.top_threads);
		const char *t[] = { "kind", "thread", "limit", tmax, NULL };
		prom_sample(f, "tmabpf_series", t, a->exported_threads);
	}
	counter(f, "tmabpf_threads_exited_total", "Thread exits folded into their process's sums.", a->threads_exited);
	counter(f, "tmabpf_processes_exited_total", "Processes seen to exit.", a->procs_exited);
	prom_family(f, "tmabpf_http_requests_total", "counter", "Requests to this endpoint, by status code.");
	{
		const char *ok[] = { "code", "200", NULL }, *nf[] = { "code", "404", NULL }, *na[] = { "code", "405", NULL };
		prom_sample(f, "tmabpf_http_requests_total", ok, s->http.ok);
		prom_sample(f, "tmabpf_http_requests_total", nf, s->http.not_found);
		prom_sample(f, "tmabpf_http_requests_total", na, s->http.bad_method);
	}
	prom_family(f, "tmabpf_http_connections_cut_total", "counter",
		    "Connections closed early: a request not answered within its deadline, or the oldest "
		    "connection when too many were open.");
	{
		const char *dl[] = { "reason", "deadline", NULL }, *lim[] = { "reason", "limit", NULL };

		prom_sample(f, "tmabpf_http_connections_cut_total", dl, s->http.cut_deadline);
		prom_sample(f, "tmabpf_http_connections_cut_total", lim, s->http.cut_limit);
	}
	prom_family(f, "tmabpf_profiles_total", "counter",
		    "GET /debug/pprof/profile requests: served (a profile), refused (400 bad seconds=, 429 four "
		    "already in progress, 503 stopping or no sampler), abandoned (the client went away first).");
	{
		const char *ok[] = { "result", "served", NULL }, *no[] = { "result", "refused", NULL },
			   *gone[] = { "result", "abandoned", NULL };

		prom_sample(f, "tmabpf_profiles_total", ok, s->http.profiles);
		prom_sample(f, "tmabpf_profiles_total", no, s->http.profiles_refused);
		prom_sample(f, "tmabpf_profiles_total", gone, s->http.profiles_abandoned);
	}
	counter(f, "tmabpf_refreshes_total", "Drains of the BPF maps.", s->refreshes);
	gauge(f, "tmabpf_refresh_duration_seconds", "How long the last drain and refresh took.", s->refresh_seconds);
	prom_family(f, "tmabpf_refresh_phase_seconds_total", "counter",
		    "Seconds the refreshes spent in each phase: drain (BPF maps read into the series), aggregate "
		    "(series chosen), symbolize (sample rows named), publish (the page written).");
	{
		static const char *const names[REFRESH_PHASES] = { "drain", "aggregate", "symbolize", "publish" };

		for (int i = 0; i < REFRESH_PHASES; i++) {
			const char *l[] = { "phase", names[i], NULL };

			prom_sample(f, "tmabpf_refresh_phase_seconds_total", l, s->phase_seconds[i]);
		}
	}
	counter(f, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", s->cpu_seconds);
	gauge(f, "process_resident_memory_bytes", "Resident memory size in bytes.", s->rss_bytes);
	gauge(f, "process_virtual_memory_bytes", "Virtual memory size in bytes.", s->vm_bytes);
	gauge(f, "process_open_fds", "Number of open file descriptors.", s->open_fds);
	gauge(f, "process_start_time_seconds", "Start time of the process since unix epoch in seconds.", s->start_time);
}

void daemon_metrics_write(FILE *f, const struct daemon_view *v)
{
	process_families(f, v);
	total_families(f, v);
	thread_families(f, v);
	function_families(f, v);
	self_families(f, v);
	if (v->samp)
		sampler_families(f, v->samp, v->agg);
	else
		counter(f, "tmabpf_samples_total", "Samples of tracked threads recorded (all CPUs).", 0);
}

/* ---- JSON lines ---- */

static void json_sums(struct json *j, const struct daemon_view *v, const struct agg_sums *t)
{
	json_u64(j, "oncpu_ns", (uint64_t)t->oncpu_ns);
	json_u64(j, "offcpu_blocked_ns", (uint64_t)t->blocked_ns);
	json_u64(j, "offcpu_runqueue_ns", (uint64_t)t->runq_ns);
	json_u64(j, "switches_voluntary", (uint64_t)t->sw_vol);
	json_u64(j, "switches_involuntary", (uint64_t)t->sw_invol);
	json_u64(j, "migrations", (uint64_t)t->migrations);
	json_obj_begin(j, "counters");
	for (int e = 0; e < v->evs->n; e++)
		json_u64(j, v->evs->ev[e].name, (uint64_t)(t->counters[e] + 0.5));
	json_obj_end(j);
}

struct jsonl_ctx {
	struct json *j;
};

static void json_series(FILE *f, const struct daemon_view *v, const char *const *labels, const struct agg_series *s,
			void *arg)
{
	struct json *j = ((struct jsonl_ctx *)arg)->j;
	struct tma_result res;

	json_obj_begin(j, NULL);
	for (int i = 0; labels[i]; i += 2)
		json_str(j, labels[i], labels[i + 1]);
	json_sums(j, v, &s->total);
	if (v->tma_level && (v->tma_plan || v->tma) && s->last.oncpu_ns && !series_tma(v, &s->last, &res))
		tma_result_json(&res, j, "tma");
	json_obj_end(j);
}

void daemon_metrics_jsonl_write(FILE *f, const struct daemon_view *v, double unix_time)
{
	const struct agg *a = v->agg;
	const struct daemon_self *s = v->self;
	struct jsonl_ctx ctx;
	struct json j;

	json_init(&j, f, false);
	ctx.j = &j;
	json_obj_begin(&j, NULL);
	json_double(&j, "time", unix_time);
	json_u64(&j, "schema", TMABPF_SCHEMA);
	json_arr_begin(&j, "series");
	for_each_series(f, v, json_series, &ctx);
	json_arr_end(&j);
	json_arr_begin(&j, "threads");
	for (size_t i = 0; i < a->threads.cap; i++) {
		const struct agg_thread *t = a->threads.vals[i];
		char comm[TMABPF_COMM_LEN + 1];

		if (!t || !t->exported || t->exited)
			continue;
		memcpy(comm, t->s.comm, TMABPF_COMM_LEN);
		comm[TMABPF_COMM_LEN] = 0;
		json_obj_begin(&j, NULL);
		json_u64(&j, "pid", t->s.pid);
		json_u64(&j, "tid", t->s.tid);
		json_str(&j, "comm", comm);
		json_str(&j, "cgroup", daemon_agg_cgroup_label(t->proc));
		json_u64(&j, "oncpu_ns", t->s.oncpu_ns);
		json_u64(&j, "offcpu_blocked_ns", t->s.offcpu_blocked_ns);
		json_u64(&j, "offcpu_runqueue_ns", t->s.offcpu_runqueue_ns);
		json_obj_begin(&j, "counters");
		for (int e = 0; e < v->evs->n; e++)
			json_u64(&j, v->evs->ev[e].name, (uint64_t)(t->scaled[e] + 0.5));
		json_obj_end(&j);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_arr_begin(&j, "functions");
	for (int fn = 0; v->funcs && v->uset && fn < v->funcs->n && fn < v->uset->nr_funcs; fn++) {
		const struct agg_func_sums *fs = &v->funcs->sum[fn];

		json_obj_begin(&j, NULL);
		json_str(&j, "module", v->uset->libs[v->uset->funcs[fn].lib].module);
		json_str(&j, "symbol", v->uset->funcs[fn].symbol);
		json_u64(&j, "calls", (uint64_t)fs->calls);
		json_u64(&j, "wall_ns", (uint64_t)fs->wall_ns);
		json_u64(&j, "oncpu_ns", (uint64_t)fs->oncpu_ns);
		json_u64(&j, "self_oncpu_ns", (uint64_t)fs->self_oncpu_ns);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	if (v->samp)
		sampler_json(&j, v->samp, a);
	json_obj_begin(&j, "self");
	json_str(&j, "accounting", s->accounting ? s->accounting : "switch");
	json_u64(&j, "bpf_run_ns", s->spine.bpf_run_ns + s->uprobe_run_ns + s->sample_run_ns);
	json_double(&j, "bpf_cpu_ratio", s->bpf_cpu_ratio);
	json_double(&j, "user_cpu_ratio", s->user_cpu_ratio);
	json_double(&j, "bpf_map_memory_bytes", s->bpf_map_bytes);
	json_double(&j, "budget_ratio", s->budget->limit);
	json_double(&j, "sample_rate_hz", s->sampling ? s->budget->hz : 0);
	json_double(&j, "sample_weight_ns", s->sampling ? budget_sample_weight_ns(s->budget) : 0);
	json_u64(&j, "threads_in_map", s->threads_in_map);
	json_u64(&j, "threads_lost", a->threads_lost);
	json_u64(&j, "exit_records_lost", s->spine.stat[STAT_EXIT_DROPS]);
	json_u64(&j, "rss_bytes", (uint64_t)s->rss_bytes);
	json_obj_end(&j);
	json_obj_end(&j);
	json_end(&j);
}
