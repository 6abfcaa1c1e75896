/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The edges of a run.  At stop, the slice a thread is running has not been
 * folded yet (the spine folds at switches, samples and exits): make every CPU
 * switch once, so that the running thread's slice is counted up to the stop.
 * Then every live thread's open slice is closed at the stop: its time since
 * its last switch, in its state (thread_close_slice).  And threads of a -p
 * process that have no record at all (not seeded at attach) are listed,
 * blocked for the whole run.
 */
#ifndef TMABPF_TARGET_EDGES_H
#define TMABPF_TARGET_EDGES_H
#include <sys/types.h>
#include "model/thread_table.h"

/* Run a thread of ours on each of ncpus CPUs once (sched_switch then folds whatever target thread
 * ran there).  0, or -errno when no thread could be started. */
int edges_switch_every_cpu(int ncpus);

/* Close every live thread's open slice at stop_ns (thread_close_slice).  *untraced_ns: the time
 * booked as blocked for switch-outs the kernel did not trace; returns how many threads had one. */
int edges_close_slices(struct thread_table *tt, unsigned long long stop_ns, unsigned long long *untraced_ns);

/* Add the threads of the -p processes pids[] that the table lacks (they never ran): blocked for
 * the whole run (t0_ns .. t0_ns + duration_ns, CLOCK_MONOTONIC).  Returns how many were added. */
int edges_add_idle_threads(struct thread_table *tt, const pid_t *pids, int npids, unsigned long long t0_ns,
			   unsigned long long duration_ns);

#endif
