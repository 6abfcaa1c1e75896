// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * --roofline: the work of every known GEMM/GEMV call, from its arguments, on
 * the known entries that no --uprobe probes (those it probes read their
 * arguments in the --uprobe entry path itself: bpf/uprobes.bpf.c).
 *
 * One uprobe session program on the known entries (cblas_?gemm, cblas_?gemv,
 * ?gemm_, ?gemv_, dnnl_sgemm, MKL's cblas_?gemm_batch and _batch_strided); the
 * attach cookie says which signature, the element size and the function
 * (bpf/roof_shapes.h).  The work and the sums are bpf/roof_work.bpf.h's, its
 * maps shared with the --uprobe program when there is one (and its slots, where
 * a known call it probes is open).  Only a thread's
 * outermost known call is counted and timed: a CBLAS wrapper calling the
 * Fortran routine is one call, and its nested entries return 1 so that their
 * returns do not even trap.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "roof_work.bpf.h"
#include "target_filter.bpf.h"
#include "uslots.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

extern bool bpf_session_is_return(void) __weak __ksym;

/* the target filter: the spine's pids map, reused by fd, and its rule */
TARGET_FILTER_SHARED()

/* with --uprobe: its slots (uslots.bpf.h, reused by fd), where a probed known call is open and
 * where the one opened here is announced (ustack.roof_other_sp) */
const volatile bool cfg_roof_uslots = false;

SEC("uprobe.multi")
int tmabpf_roofline(struct pt_regs *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 id;

	if (bpf_session_is_return()) {
		roof_leave(task, bpf_ktime_get_ns(), cfg_roof_uslots ? uslot_of(task->pid) : NULL);
		return 0;
	}
	id = bpf_get_current_pid_tgid();
	if (!shared_tracked(id >> 32, (__u32)id))
		return 1;
	return roof_enter(ctx, task, bpf_get_attach_cookie(ctx), PT_REGS_SP(ctx),
			  cfg_roof_uslots ? uslot_of(task->pid) : NULL);
}
