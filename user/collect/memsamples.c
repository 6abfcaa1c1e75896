// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The --mem-samples feature: load/attach the sample program, bin addresses and IPs.  See memsamples.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collect/bpf_util.h"
#include "collect/memsamples.h"
#include "lib/grow.h"
#include "lib/warn.h"
#include "pmu/perf_open.h"
#include "threads.skel.h"
#include "memsamples.skel.h"

static bool pid_seen(struct memsamples *m, unsigned int pid)
{
	for (size_t i = 0; i < m->npids; i++)
		if (m->pids[i] == pid)
			return true;
	unsigned int *v = grow(m->pids, &m->cappids, m->npids, sizeof(*v), 32);

	if (!v)
		return true;
	m->pids = v;
	m->pids[m->npids++] = pid;
	return false;
}

static void func_add(struct memsamples *m, unsigned int pid, const char *module, const char *symbol)
{
	for (size_t i = m->nfuncs; i > 0; i--) {	/* newest first: samples come in runs */
		struct mem_func *f = &m->funcs[i - 1];

		if (f->pid == pid && f->module == module && f->symbol == symbol) {
			f->count++;
			return;
		}
	}
	struct mem_func *v = grow(m->funcs, &m->capfuncs, m->nfuncs, sizeof(*v), 64);

	if (!v)
		return;
	m->funcs = v;
	m->funcs[m->nfuncs++] = (struct mem_func){ .pid = pid, .module = module, .symbol = symbol, .count = 1 };
}

#define KERNEL_START 0xffff800000000000ULL

static int on_sample(void *ctx, void *data, size_t size)
{
	struct memsamples *m = ctx;
	const struct mem_sample *s = data;
	struct sym_info si;

	if (size < sizeof(*s))
		return 0;
	if (!pid_seen(m, s->pid))
		symbolizer_add_pid(m->sym, (int)s->pid);
	if (s->ip >= KERNEL_START)
		symbolizer_kernel(m->sym, s->ip, false, &si);
	else
		symbolizer_user(m->sym, (int)s->pid, s->ip, false, &si);
	func_add(m, s->pid, si.module, symbolizer_label(m->sym, &si));
	mem_bins_add(&m->bins, s->pid, s->addr);
	m->samples++;
	return 0;
}

int memsamples_load(struct memsamples *m, const struct mem_event *ev, struct threads_prog *tp, char *err,
		    size_t errlen)
{
	int r;

	memset(m, 0, sizeof(*m));
	m->ev = *ev;
	m->nr_cpus = tp->nr_cpus;
	mem_bins_init(&m->bins, NULL, NULL);
	m->loaded = true;	/* memsamples_free() cleans up from here */
	m->sym = symbolizer_new();
	m->skel = memsamples_bpf__open();
	if (!m->sym || !m->skel) {
		r = -errno;
		err_set(err, errlen, "opening the memory-sample program: %s", strerror(-r));
		return r;
	}
	m->skel->rodata->account_cfg = tp->acfg;
	r = threads_share_maps(tp, m->skel->obj);
	if (!r)
		r = memsamples_bpf__load(m->skel);
	if (r)
		return bpf_load_error(r, err, errlen, "loading the memory-sample program", &(struct bpf_hints){ 0 });
	if (!(m->rb = ringbuf_open(bpf_map__fd(m->skel->maps.mem_samples), on_sample, m, "memory-sample", err, errlen)))
		return -errno;
	return 0;
}

static int open_event(struct perf_event_attr *a, int cpu, int group)
{
	return (int)syscall(__NR_perf_event_open, a, -1, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

int memsamples_attach(struct memsamples *m, char *err, size_t errlen)
{
	int attached = 0;

	m->fds = malloc(sizeof(*m->fds) * m->nr_cpus);
	m->aux_fds = malloc(sizeof(*m->aux_fds) * m->nr_cpus);
	m->links = calloc(m->nr_cpus, sizeof(*m->links));
	if (!m->fds || !m->aux_fds || !m->links) {
		err_set(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (int cpu = 0; cpu < m->nr_cpus; cpu++)
		m->fds[cpu] = m->aux_fds[cpu] = -1;
	for (int cpu = 0; cpu < m->nr_cpus; cpu++) {
		struct perf_event_attr *a = &m->ev.attr;

		if (m->ev.aux && (m->aux_fds[cpu] = open_event(&m->ev.aux_attr, cpu, -1)) < 0)
			goto fail;
		m->fds[cpu] = open_event(a, cpu, m->ev.aux ? m->aux_fds[cpu] : -1);
		if (m->fds[cpu] < 0)
			goto fail;
		m->links[cpu] = bpf_program__attach_perf_event(m->skel->progs.tmabpf_mem_sample, m->fds[cpu]);
		if (!m->links[cpu]) {
			int r = -errno;

			err_set(err, errlen, "attaching the memory-sample program on CPU %d: %s", cpu, strerror(-r));
			return r;
		}
		attached++;
		continue;
fail:
		if (errno == ENODEV || errno == ENXIO)
			continue;	/* offline CPU */
		err_set(err, errlen, "cannot open %s on CPU %d: %s (%s)", m->ev.name, cpu, strerror(errno),
			 perf_open_hint(errno, a));
		return -errno;
	}
	if (!attached) {
		err_set(err, errlen, "no CPU could open %s", m->ev.name);
		return -ENODEV;
	}
	return 0;
}

void memsamples_poll(struct memsamples *m)
{
	if (m->rb)
		ring_buffer__consume(m->rb);
}

void memsamples_detach(struct memsamples *m)
{
	for (int cpu = 0; m->fds && cpu < m->nr_cpus; cpu++) {
		if (m->links[cpu])
			bpf_link__destroy(m->links[cpu]);	/* closes the event too */
		else if (m->fds[cpu] >= 0)
			close(m->fds[cpu]);
		if (m->aux_fds[cpu] >= 0)
			close(m->aux_fds[cpu]);
	}
	free(m->fds);
	free(m->aux_fds);
	free(m->links);
	m->fds = m->aux_fds = NULL;
	m->links = NULL;
}

static int cmp_func(const void *a, const void *b)
{
	const struct mem_func *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

int memsamples_collect(struct memsamples *m)
{
	struct mem_result *r = &m->res;

	if (!m->loaded || !m->skel)
		return -ENOENT;
	memsamples_poll(m);
	unsigned long long st[MEM_STAT_MAX] = {};

	stat_map_sum(bpf_map__fd(m->skel->maps.mem_stats), MEM_STAT_MAX, st);
	*r = (struct mem_result){ .ev = &m->ev, .samples = m->samples, .seen = st[MEM_STAT_SEEN],
				  .target = st[MEM_STAT_TARGET], .lost = st[MEM_STAT_LOST] };
	qsort(m->funcs, m->nfuncs, sizeof(*m->funcs), cmp_func);
	mem_bins_sort(&m->bins);
	r->funcs = m->funcs;
	r->nfuncs = m->nfuncs;
	r->bins = m->bins.v;
	r->nbins = m->bins.n;
	if (r->lost)
		warn_add("--mem-samples: %llu samples lost (ring buffer full): raise the period or sample fewer threads",
			 r->lost);
	return 0;
}

void memsamples_free(struct memsamples *m)
{
	if (!m->loaded)
		return;
	memsamples_detach(m);
	ring_buffer__free(m->rb);
	memsamples_bpf__destroy(m->skel);
	symbolizer_free(m->sym);
	mem_bins_free(&m->bins);
	free(m->funcs);
	free(m->pids);
	memset(m, 0, sizeof(*m));
}
