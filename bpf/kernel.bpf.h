/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The kernel's constants and the fields that differ between kernel versions,
 * in one place (libbpf-tools' core_fixes.bpf.h style). */
#ifndef TMABPF_KERNEL_BPF_H
#define TMABPF_KERNEL_BPF_H

#include <bpf/bpf_core_read.h>

/* task_struct.flags (include/linux/sched.h): #defines, so not in vmlinux.h's BTF */
#define PF_EXITING 0x00000004	/* getting shut down: sched_process_exit has run */
#define PF_KTHREAD 0x00200000	/* a kernel thread: no user stack */

#define EFAULT 14		/* bpf_get_stackid(): no stack to walk (asm-generic/errno-base.h) */

/* task->__state (>= 5.14, commit 2f064a59a11f "sched: Change task_struct::state") or task->state
 * (older): flavours with ___x / ___o suffixes, picked by CO-RE at load. */
struct task_struct___o {
	volatile long state;
} __attribute__((preserve_access_index));

struct task_struct___x {
	unsigned int __state;
} __attribute__((preserve_access_index));

/* The task's scheduler state: 0 runnable (TASK_RUNNING), else why it sleeps. */
static __always_inline long task_state(struct task_struct *task)
{
	struct task_struct___x *t = (void *)task;

	if (bpf_core_field_exists(t->__state))
		return t->__state;
	return ((struct task_struct___o *)task)->state;
}

/* The CPU the task runs on, or last ran on (thread_info.cpu: x86 and arm64 keep it there). */
static __always_inline __u32 task_cpu(struct task_struct *task)
{
	return task->thread_info.cpu;
}

#endif
