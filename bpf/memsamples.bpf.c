// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Memory samples (--mem-samples): one address-carrying sampling event per
 * CPU (PEBS load latency on Intel, IBS op on AMD, or the page-faults software
 * event as a test/diagnostic source) runs tmabpf_mem_sample.  A sample of a
 * tracked thread is an accounting point (account.bpf.h), and its thread,
 * instruction pointer and data address (bpf_perf_event_data.addr, present
 * because the event has PERF_SAMPLE_ADDR) go to user space, which bins the
 * address into the process' mapping and the IP into its function.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "account.bpf.h"
#include "mem_sample.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} mem_samples SEC(".maps");

STAT_MAP(mem_stats, MEM_STAT_MAX);

SEC("perf_event")
int tmabpf_mem_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct thread_stats *t;
	struct mem_sample *m;

	pcpu_inc(&mem_stats, MEM_STAT_SEEN);
	t = thread_get(task);
	if (!t)
		return 0;
	pcpu_inc(&mem_stats, MEM_STAT_TARGET);
	account_current_irq(t, task, bpf_ktime_get_ns(), false);
	m = bpf_ringbuf_reserve(&mem_samples, sizeof(*m), 0);
	if (!m) {
		pcpu_inc(&mem_stats, MEM_STAT_LOST);
		return 0;
	}
	m->pid = t->pid;
	m->tid = t->tid;
	m->ip = PT_REGS_IP(&ctx->regs);
	m->addr = ctx->addr;
	bpf_ringbuf_submit(m, BPF_RB_NO_WAKEUP);	/* drained on a timer (ring_buffer__consume) */
	return 0;
}
