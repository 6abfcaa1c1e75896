// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Hand-minimal sched_switch programs, the baseline tmabpf's switch cost is
 * compared with: one records a timestamp per tid; the other also reads the
 * same per-CPU counters tmabpf reads. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 nr_events = 0;
const volatile __u32 nr_cpus = 1;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} ts_by_tid SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 24);
	__type(key, __u32);
	__type(value, struct bpf_perf_event_value);
} last SEC(".maps");

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
	__u32 tid = next->pid, cpu = bpf_get_smp_processor_id();
	__u64 now = bpf_ktime_get_ns();

	bpf_map_update_elem(&ts_by_tid, &tid, &now, BPF_ANY);
	for (__u32 e = 0; e < 24 && e < nr_events; e++) {
		__u32 key = e;	/* the loop variable must not have its address taken */
		struct bpf_perf_event_value *v = bpf_map_lookup_elem(&last, &key);

		if (v)
			bpf_perf_event_read_value(&counters, e * nr_cpus + cpu, v, sizeof(*v));
	}
	return 0;
}
