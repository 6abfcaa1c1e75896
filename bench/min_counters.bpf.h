/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Shared by the hand-minimal baselines: the same per-CPU counter reads tmabpf
 * does (PERF_EVENT_ARRAY at event * nr_cpus + cpu), into a per-CPU array. */
#ifndef TMABPF_MIN_COUNTERS_BPF_H
#define TMABPF_MIN_COUNTERS_BPF_H

const volatile __u32 nr_events = 0;
const volatile __u32 nr_cpus = 1;

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

static __always_inline int read_all(void)
{
	__u32 cpu = bpf_get_smp_processor_id();

	for (__u32 e = 0; e < 24 && e < nr_events; e++) {
		__u32 key = e;	/* the loop variable must not have its address taken */
		struct bpf_perf_event_value *v = bpf_map_lookup_elem(&last, &key);

		if (v)
			bpf_perf_event_read_value(&counters, e * nr_cpus + cpu, v, sizeof(*v));
	}
	return 0;
}

#endif
