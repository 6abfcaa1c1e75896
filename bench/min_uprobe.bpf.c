// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Baselines for the per-call uprobe cost: an empty entry+return pair, and a
 * hand-minimal pair doing the counter reads tmabpf does into a per-CPU array. */
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
