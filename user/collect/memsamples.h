/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * memsamples: the --mem-samples feature.  Opens the address-carrying event
 * (mem_event.c) on every CPU with bpf/memsamples.bpf.c attached (the spine's
 * maps reused), and for each sample of a tracked thread bins the data
 * address by mapping (mem_bins.c) and the IP by function (symbolize.c),
 * as the samples arrive, while their processes live.
 */
#ifndef TMABPF_MEMSAMPLES_H
#define TMABPF_MEMSAMPLES_H
#include <stdbool.h>
#include <stddef.h>
#include "bpf/mem_sample.h"
#include "collect/mem_bins.h"
#include "collect/threads_loader.h"
#include "model/results.h"
#include "pmu/mem_event.h"
#include "sym/symbolize.h"

struct memsamples_bpf;
struct bpf_link;
struct ring_buffer;

struct memsamples {
	struct memsamples_bpf *skel;
	struct ring_buffer *rb;
	int nr_cpus;
	int *fds, *aux_fds;		/* per CPU; -1 where not open */
	struct bpf_link **links;
	struct mem_event ev;
	struct symbolizer *sym;
	struct mem_bins bins;
	struct mem_func *funcs;
	size_t nfuncs, capfuncs;
	unsigned int *pids;
	size_t npids, cappids;
	unsigned long long samples;
	bool loaded;
	struct mem_result res;
};

/* Load, reusing the spine's maps (threads_load first). */
int memsamples_load(struct memsamples *m, const struct mem_event *ev, struct threads_prog *tp, char *err,
		    size_t errlen);
/* Open the event on every CPU and attach; -errno with err filled when the event cannot be opened. */
int memsamples_attach(struct memsamples *m, char *err, size_t errlen);
/* Bin the samples that arrived (call every poll). */
void memsamples_poll(struct memsamples *m);
void memsamples_detach(struct memsamples *m);
/* Last samples, counters, sorted tables into m->res; losses become warnings. */
int memsamples_collect(struct memsamples *m);
void memsamples_free(struct memsamples *m);

#endif
