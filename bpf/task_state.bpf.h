/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A task's scheduler state, on old and new kernels (CO-RE). */
#ifndef TMABPF_TASK_STATE_BPF_H
#define TMABPF_TASK_STATE_BPF_H

/* task->__state (>= 5.14) or task->state (older). */
struct task_struct___o {
	volatile long state;
} __attribute__((preserve_access_index));

struct task_struct___x {
	unsigned int __state;
} __attribute__((preserve_access_index));

static __always_inline long task_state(struct task_struct *task)
{
	struct task_struct___x *t = (void *)task;

	if (bpf_core_field_exists(t->__state))
		return t->__state;
	return ((struct task_struct___o *)task)->state;
}

#endif
