// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Event sampling (--sample-events, the daemon's sampled accounting): every
 * event of the run becomes a sampling perf event per CPU, each with its own
 * period (fixed within an interval, set by the loader from the event's measured
 * rate: evsamples_loader.h says why not the kernel's frequency mode), and all of
 * them run tmabpf_evsample.  The link's BPF cookie is the event's index.  At
 * each overflow the period is added to event e's estimate in the row of
 * (thread, user stack, kernel stack), the rows samples.bpf.c keeps (the loader
 * reuses its maps: sample_rows.bpf.h), and the sample is counted for e, so
 * that each estimate carries its sampling error (samples per event).
 *
 * When events share counters (more events than counters), each runs part of
 * the time and samples only then: its periods are scaled by the event's
 * enabled / running time, read at the overflow (bpf_perf_prog_read_value),
 * into the estimate's enabled field, as a count's multiplex scaling is.
 *
 * Nothing runs at context switches; nothing is folded into the spine's thread
 * sums.  With cfg_thread_est (the CLI's --sample-events, whose thread times
 * come from the task iterator), the sample is also added to the thread's own
 * estimate in its task storage (thread_est.bpf.h), which the iterator reads.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "account.bpf.h"
#include "sample_rows.bpf.h"
#include "thread_est.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* take user and kernel stacks (else rows per thread only); written by user space while it runs
 * (the daemon's sampled accounting takes stacks only while a profile is being taken) */
bool cfg_stacks = true;
const volatile bool cfg_thread_est = false;

/* The thread's estimate of event e.  Its storage is created in process context by the task
 * programs (tasks.bpf.c: the targets' threads at the first iteration, their children at fork):
 * here, in NMI context on a PMU, it is only looked up. */
static __always_inline void thread_est_add(struct task_struct *task, __u64 e, __u64 period, __u64 enabled)
{
	struct thread_est *t = bpf_task_storage_get(&thread_est, task, 0, 0);

	if (!t) {
		stat_inc(STAT_THREAD_EST_LOST);
		return;
	}
	__sync_fetch_and_add(&t->c[e].value, period);
	__sync_fetch_and_add(&t->c[e].enabled, enabled);
	__sync_fetch_and_add(&t->c[e].running, period);
}

SEC("perf_event")
int tmabpf_evsample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 e = bpf_get_attach_cookie(ctx), period = ctx->sample_period, enabled = period;
	struct bpf_perf_event_value v;
	struct sample_key key;
	struct sample_stats *s;

	if (e >= TMABPF_MAX_EVENTS || !task_tracked(task->tgid, task->pid))
		return 0;
	/* multiplexed: this event counted running / enabled of the time; 10 fractional bits */
	if (!bpf_perf_prog_read_value(ctx, &v, sizeof(v)) && v.running && v.enabled > v.running &&
	    v.enabled < (1ULL << 53))
		enabled = period * ((v.enabled << 10) / v.running) >> 10;
	if (cfg_thread_est)
		thread_est_add(task, e, period, enabled);
	s = row_of(ctx, task, task->tgid, task->pid, cfg_stacks, &key);
	if (!s)
		return 0;
	__sync_fetch_and_add(&s->count, 1);
	__sync_fetch_and_add(&s->ev_samples[e], 1);
	__sync_fetch_and_add(&s->c[e].value, period);
	__sync_fetch_and_add(&s->c[e].enabled, enabled);
	__sync_fetch_and_add(&s->c[e].running, period);
	return 0;
}
