/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Loader for bpf/thread_states.bpf.c (--trace thread states): the state-change programs sharing the
 * spine's thread filter, their ring buffer, and the iterator that records each thread's state at attach. */
#ifndef TMABPF_THREAD_STATES_LOADER_H
#define TMABPF_THREAD_STATES_LOADER_H
#include <stddef.h>
#include "collect/threads_loader.h"

struct thread_states_bpf;

struct thread_states_prog {
	struct thread_states_bpf *skel;	/* its links: sched_switch, sched_wakeup, sched_wakeup_new, sched_process_exit */
};

/* Load with a ring of ring_bytes (a power of two) whose records wake the reader once wake_bytes wait,
 * reusing the spine's maps (threads_load first). */
int thread_states_load(struct thread_states_prog *p, struct threads_prog *tp, unsigned int ring_bytes,
		       unsigned int wake_bytes, char *err, size_t errlen);
/* Attach, then record every tracked thread's state (the iterator). */
int thread_states_attach(struct thread_states_prog *p, char *err, size_t errlen);
/* The ring buffer's map fd (struct state_rec records). */
int thread_states_ring_fd(const struct thread_states_prog *p);
void thread_states_detach(struct thread_states_prog *p);
void thread_states_destroy(struct thread_states_prog *p);

#endif
