// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The --json report.  Keys named in the README's report contract are stable. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/clock.h"
#include "lib/version.h"
#include "lib/warn.h"
#include "model/counters.h"
#include "output/report_sections.h"

static void write_header(const struct report *r, struct json *j)
{
	bool scaled[TMABPF_MAX_EVENTS];

	json_obj_begin(j, "tmabpf");
	json_str(j, "version", TMABPF_VERSION);
	json_u64(j, "schema", TMABPF_SCHEMA);
	json_str(j, "git", version_git());
	json_str(j, "libbpf", version_libbpf());
	json_str(j, "bpf_arch", version_bpf_arch());
	json_obj_end(j);
	json_obj_begin(j, "host");
	json_str(j, "kernel", r->host->kernel);
	json_str(j, "cpu", r->host->cpu);
	json_u64(j, "ncpus", (uint64_t)r->host->ncpus_online);
	json_bool(j, "pmu", r->host->pmu);
	json_str(j, "pmu_detail", r->host->pmu_why);
	json_str(j, "recipe", r->recipe);
	json_obj_end(j);
	json_str(j, "target", r->target);
	json_str(j, "stop_reason", r->stop_reason);
	json_str(j, "accounting", r->estimated ? "sampled" : "switch");
	json_u64(j, "duration_ns", r->duration_ns);
	json_u64(j, "start_ns", r->mono_ns - r->duration_ns);
	report_events_scaled(r, scaled);
	json_arr_begin(j, "events");
	for (int e = 0; e < r->evs->n; e++) {
		const struct event_desc *d = &r->evs->ev[e];

		json_obj_begin(j, NULL);
		json_str(j, "name", d->name);
		json_str(j, "type", events_type_name(d->attr.type));
		json_u64(j, "type_id", d->attr.type);
		json_u64(j, "config", d->attr.config);
		json_u64(j, "config1", d->attr.config1);
		json_u64(j, "config2", d->attr.config2);
		json_str(j, "pmu", d->pmu);
		json_bool(j, "scaled", scaled[e]);
		json_obj_end(j);
	}
	json_arr_end(j);
}

/* Fields common to threads and processes. */
static void write_sums(const struct report *r, const struct thread_stats *s, struct json *j)
{
	json_str(j, "comm", s->comm);
	json_u64(j, "oncpu_ns", s->oncpu_ns);
	json_u64(j, "offcpu_ns", s->offcpu_blocked_ns + s->offcpu_runqueue_ns);
	json_u64(j, "offcpu_blocked_ns", s->offcpu_blocked_ns);
	json_u64(j, "offcpu_runqueue_ns", s->offcpu_runqueue_ns);
	json_u64(j, "switches_voluntary", s->switches_voluntary);
	json_u64(j, "switches_involuntary", s->switches_involuntary);
	json_u64(j, "migrations", s->migrations);
	report_counters_json(r, j, "counters", s->c);
	json_obj_begin(j, "counters_running_pct");
	for (int e = 0; e < r->evs->n; e++)
		json_double(j, r->evs->ev[e].name, 100.0 * counter_running_share(&s->c[e]));
	json_obj_end(j);
	report_tma_json(r, s, j);
}

static void write_threads(const struct report *r, struct json *j)
{
	const struct thread_stats **all;
	size_t n = thread_table_all(r->tt, &all);

	json_arr_begin(j, "threads");
	for (size_t i = 0; i < n; i++) {
		if (thread_is_folded(all[i]))
			continue;	/* in "processes" and "folded" */
		json_obj_begin(j, NULL);
		json_u64(j, "pid", all[i]->pid);
		json_u64(j, "tid", all[i]->tid);
		json_bool(j, "exited", all[i]->exited);
		json_u64(j, "first_seen_ns", all[i]->first_seen_ns);
		json_u64(j, "exit_ns", all[i]->exit_ns);
		json_u64(j, "missed_switch_in", all[i]->missed_switch_in);
		write_sums(r, all[i], j);
		json_obj_end(j);
	}
	json_arr_end(j);
	free(all);
}

static void write_processes(const struct report *r, struct json *j)
{
	struct thread_stats *procs;
	size_t n = thread_table_processes(r->tt, &procs);

	json_arr_begin(j, "processes");
	for (size_t i = 0; i < n; i++) {
		json_obj_begin(j, NULL);
		json_u64(j, "pid", procs[i].pid);
		write_sums(r, &procs[i], j);
		json_obj_end(j);
	}
	json_arr_end(j);
	free(procs);
}

/* Exited threads no longer kept one by one (thread_table.h): how many, and the per-comm sums
 * of the processes folded too. */
static void write_folded(const struct report *r, struct json *j)
{
	const struct thread_table *tt = r->tt;

	json_obj_begin(j, "folded");
	json_u64(j, "threads", tt->threads_folded);
	json_u64(j, "processes", tt->procs_folded);
	json_u64(j, "max_exited_threads", tt->max_exited);
	json_u64(j, "max_folded", tt->max_folded);
	json_arr_begin(j, "comms");
	for (size_t i = 0; i < tt->n_fcomm; i++) {
		json_obj_begin(j, NULL);
		json_u64(j, "threads", tt->fcomm[i].threads);
		json_u64(j, "processes", tt->fcomm[i].procs);
		write_sums(r, &tt->fcomm[i].s, j);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

static void write_self(const struct report *r, struct json *j)
{
	const struct self_stats *s = &r->self;
	unsigned long long own = self_cpu_ns(),
			   run_cpu = r->run_cpu_ns ? r->run_cpu_ns : own > r->setup_cpu_ns ? own - r->setup_cpu_ns : 0;

	json_obj_begin(j, "self");
	json_bool(j, "bpf_stats_enabled", s->run_stats);
	json_u64(j, "bpf_run_ns", s->bpf_run_ns);
	json_u64(j, "bpf_run_count", s->bpf_run_cnt);
	json_u64(j, "switch_run_ns", s->switch_run_ns);
	json_u64(j, "switch_run_count", s->switch_run_cnt);
	json_double(j, "switch_ns_per_run", s->switch_run_cnt ? (double)s->switch_run_ns / s->switch_run_cnt : 0.0);
	json_u64(j, "threads_map_full", s->stat[STAT_THREADS_FULL]);
	json_u64(j, "pids_map_full", s->stat[STAT_PIDS_FULL]);
	json_u64(j, "exit_records_lost", s->stat[STAT_EXIT_DROPS]);
	json_u64(j, "counter_read_errors", s->stat[STAT_READ_ERRORS]);
	json_u64(j, "thread_estimate_samples_lost", s->stat[STAT_THREAD_EST_LOST]);
	json_u64(j, "max_threads", s->max_threads);
	/* tmabpf's own user+system time: before the run (load, attach), then over it
	 * to its stop (draining and writing reports come after) */
	json_u64(j, "setup_cpu_ns", r->setup_cpu_ns);
	json_u64(j, "run_cpu_ns", run_cpu);
	json_double(j, "run_cpu_pct", r->duration_ns ? 100.0 * run_cpu / r->duration_ns : 0.0);
	json_obj_end(j);
}

void report_json_write(const struct report *r, FILE *f)
{
	struct json j;

	json_init(&j, f, true);
	json_obj_begin(&j, NULL);
	write_header(r, &j);
	write_threads(r, &j);
	write_processes(r, &j);
	write_folded(r, &j);
	report_functions_json(r, &j);
	report_samples_json(r, &j);
	report_offcpu_json(r, &j);
	report_memsamples_json(r, &j);
	report_roofline_json(r, &j);
	report_iterations_json(r, &j);
	write_self(r, &j);
	json_arr_begin(&j, "warnings");
	for (size_t i = 0; i < warn_count(); i++)
		json_str(&j, NULL, warn_get(i));
	json_arr_end(&j);
	json_obj_end(&j);
	json_end(&j);
}
