/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * --sample-events without a per-switch program: each thread's event
 * estimates (the sampled periods, as the sample rows add them) kept in the
 * thread's own task storage by the event sampler (evsamples.bpf.c), and read
 * with the thread's scheduler counts by the task iterator and at its exit
 * (tasks.bpf.c).  The storage is created in process context by the task
 * programs (the targets' threads at the first iteration, their children at
 * fork); the sampler, in NMI context on a PMU, only looks it up.  The
 * storage lives and dies with the task, so an exiting thread's estimate
 * comes with its final record.  One map: the loader of
 * the second object reuses the first's.
 */
#ifndef TMABPF_THREAD_EST_BPF_H
#define TMABPF_THREAD_EST_BPF_H
#include "tmabpf.h"

struct thread_est {
	struct counter_val c[TMABPF_MAX_EVENTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_est);
} thread_est SEC(".maps");

#endif
