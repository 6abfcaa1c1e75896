// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Loader for bpf/thread_states.bpf.c (see thread_states_loader.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collect/bpf_util.h"
#include "collect/thread_states_loader.h"
#include "lib/warn.h"
#include "thread_states.skel.h"

static const struct bpf_hints hints = { .lacks = "kernel lacks BTF (/sys/kernel/btf/vmlinux) or the tracepoint" };

int thread_states_load(struct thread_states_prog *p, struct threads_prog *tp, unsigned int ring_bytes,
		       unsigned int wake_bytes, char *err, size_t errlen)
{
	int r;

	memset(p, 0, sizeof(*p));
	p->skel = thread_states_bpf__open();
	if (!p->skel)
		return bpf_load_error(-errno, err, errlen, "opening the thread-state program", &hints);
	p->skel->rodata->account_cfg = tp->acfg;
	p->skel->rodata->cfg_wake_bytes = wake_bytes;
	if (getenv("TMABPF_TEST_DROP_SWITCH_IN"))	/* the test hook threads.bpf.c has too */
		p->skel->rodata->cfg_test_drop_switch_in = (unsigned int)strtoul(getenv("TMABPF_TEST_DROP_SWITCH_IN"), NULL, 10);
	bpf_map__set_max_entries(p->skel->maps.state_rb, ring_bytes);
	bpf_program__set_autoattach(p->skel->progs.tmabpf_state_seed, false);	/* run once, after the attach */
	r = threads_share_maps(tp, p->skel->obj);
	if (!r)
		r = thread_states_bpf__load(p->skel);
	if (r)
		return bpf_load_error(r, err, errlen, "loading the thread-state program", &hints);
	return 0;
}

int thread_states_attach(struct thread_states_prog *p, char *err, size_t errlen)
{
	int r = thread_states_bpf__attach(p->skel);

	if (r)
		return bpf_load_error(r, err, errlen, "attaching the thread-state programs", &hints);
	if ((r = bpf_iter_run_once(p->skel->progs.tmabpf_state_seed)))
		warn_add("--trace: recording the threads' states at attach: %s; a thread that does not switch, wake "
			 "or exit in the run has no state slices", strerror(-r));
	return 0;
}

int thread_states_ring_fd(const struct thread_states_prog *p)
{
	return bpf_map__fd(p->skel->maps.state_rb);
}

void thread_states_detach(struct thread_states_prog *p)
{
	if (p->skel)
		thread_states_bpf__detach(p->skel);
}

void thread_states_destroy(struct thread_states_prog *p)
{
	thread_states_bpf__destroy(p->skel);
	p->skel = NULL;
}
