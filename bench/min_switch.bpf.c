// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Hand-minimal sched_switch programs, the baseline tmabpf's switch cost is
 * compared with: one records a timestamp per tid; the other also reads the
 * same per-CPU counters tmabpf reads. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} ts_by_tid SEC(".maps");

#include "min_counters.bpf.h"

SEC("tp_btf/sched_switch")
int BPF_PROG(minimal_ts, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 tid = next->pid;
	__u64 now = bpf_ktime_get_ns();

	bpf_map_update_elem(&ts_by_tid, &tid, &now, BPF_ANY);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(minimal_reads, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 tid = next->pid;
	__u64 now = bpf_ktime_get_ns();

	bpf_map_update_elem(&ts_by_tid, &tid, &now, BPF_ANY);
	return read_all();
}
