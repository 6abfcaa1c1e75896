// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Baselines for the per-call uprobe cost: an empty entry+return pair, a
 * hand-minimal pair doing the counter reads tmabpf does into a per-CPU array,
 * and a hand-minimal per-(thread, function) delta: the same reads, stored per
 * thread at entry, their difference added to a (function, thread) row at
 * return (no nesting, time or migration handling: a floor, not an equivalent). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#include "min_counters.bpf.h"

SEC("uprobe.multi")
int empty_entry(struct pt_regs *ctx) { return 0; }

SEC("uretprobe.multi")
int empty_exit(struct pt_regs *ctx) { return 0; }

/* Loaded as a uprobe session (BPF_TRACE_UPROBE_SESSION) where the kernel has
 * them: returning 0 asks for the return too. */
SEC("uprobe.multi")
int empty_session(struct pt_regs *ctx) { return 0; }

SEC("uprobe.multi")
int minimal_entry(struct pt_regs *ctx) { return read_all(); }

SEC("uretprobe.multi")
int minimal_exit(struct pt_regs *ctx) { return read_all(); }

#define MIN_EVENTS 24

struct fn_delta {
	struct bpf_perf_event_value v[MIN_EVENTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);		/* tid */
	__type(value, struct fn_delta);	/* readings at entry */
} at_entry SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);		/* function cookie << 32 | tid */
	__type(value, struct fn_delta);	/* sums of deltas */
} rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fn_delta);
} delta_zero SEC(".maps");

static __always_inline void read_into(struct fn_delta *d, __u32 cpu, __u32 e)
{
	bpf_perf_event_read_value(&counters, e * nr_cpus + cpu, &d->v[e & (MIN_EVENTS - 1)], sizeof(d->v[0]));
}

SEC("uprobe.multi")
int delta_entry(struct pt_regs *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), cpu = bpf_get_smp_processor_id(), zero = 0;
	struct fn_delta *d = bpf_map_lookup_elem(&at_entry, &tid);

	if (!d) {
		struct fn_delta *z = bpf_map_lookup_elem(&delta_zero, &zero);

		if (!z)
			return 0;
		bpf_map_update_elem(&at_entry, &tid, z, BPF_NOEXIST);
		d = bpf_map_lookup_elem(&at_entry, &tid);
		if (!d)
			return 0;
	}
	for (__u32 e = 0; e < MIN_EVENTS && e < nr_events; e++)
		read_into(d, cpu, e);
	return 0;
}

SEC("uretprobe.multi")
int delta_exit(struct pt_regs *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), cpu = bpf_get_smp_processor_id(), zero = 0;
	__u64 key = bpf_get_attach_cookie(ctx) << 32 | tid;
	struct fn_delta *d = bpf_map_lookup_elem(&at_entry, &tid), *row, *z = bpf_map_lookup_elem(&delta_zero, &zero);

	if (!d || !z)
		return 0;
	row = bpf_map_lookup_elem(&rows, &key);
	if (!row) {
		bpf_map_update_elem(&rows, &key, z, BPF_NOEXIST);
		row = bpf_map_lookup_elem(&rows, &key);
		if (!row)
			return 0;
	}
	for (__u32 e = 0; e < MIN_EVENTS && e < nr_events; e++) {
		struct bpf_perf_event_value v;

		bpf_perf_event_read_value(&counters, e * nr_cpus + cpu, &v, sizeof(v));
		row->v[e].counter += v.counter - d->v[e].counter;
		row->v[e].enabled += v.enabled - d->v[e].enabled;
		row->v[e].running += v.running - d->v[e].running;
	}
	return 0;
}
