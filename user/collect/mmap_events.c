// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Executable mappings from the kernel's perf records.  See mmap_events.h. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <bpf/libbpf.h>
#include "collect/mmap_events.h"
#include "lib/warn.h"
#include "pmu/perf_open.h"

/* PERF_RECORD_MMAP2's body, up to the file name (then the sample_id: pid, tid, time) */
struct mmap2_rec {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	char filename[];
};

struct sample_id {
	uint32_t pid, tid;
	uint64_t time;
};

static void dummy_attr(struct perf_event_attr *a, bool inherit)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a->sample_id_all = 1;
	a->mmap = 1;
	a->mmap2 = 1;		/* executable mappings only: mmap_data stays 0 */
	a->inherit = inherit;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
}

static int add_ring(struct mmap_events *m, int fd)
{
	size_t bytes = (1 + MMAP_EVENTS_RING_PAGES) * m->page;
	void *ring = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int *fds = realloc(m->fds, (m->nrings + 1) * sizeof(*fds));
	void **rings = fds ? realloc(m->rings, (m->nrings + 1) * sizeof(*rings)) : NULL;

	if (fds)
		m->fds = fds;
	if (rings)
		m->rings = rings;
	if (ring == MAP_FAILED || !rings) {
		int e = ring == MAP_FAILED ? errno : ENOMEM;

		if (ring != MAP_FAILED)
			munmap(ring, bytes);
		close(fd);
		return -e;
	}
	m->fds[m->nrings] = fd;
	m->rings[m->nrings++] = ring;
	return 0;
}

/* One event per CPU for thread tid (-1: every thread on the host); offline CPUs are skipped. */
static int open_thread(struct mmap_events *m, int tid, int ncpu, char *err, size_t errlen)
{
	struct perf_event_attr a;
	int opened = 0;

	dummy_attr(&a, tid > 0);
	for (int cpu = 0; cpu < ncpu; cpu++) {
		int fd = perf_open_fd(&a, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC), r;

		if (fd < 0 && (errno == ENODEV || errno == ENXIO))
			continue;
		if (fd < 0 && errno == ESRCH)
			return 0;	/* the thread exited: its process' other threads are followed */
		if (fd < 0) {
			err_set(err, errlen, "mmap records (perf dummy event, pid %d, CPU %d): %s (%s)", tid, cpu,
				strerror(errno), perf_open_hint(errno, &a));
			return -errno;
		}
		if ((r = add_ring(m, fd))) {
			err_set(err, errlen, "mmap records: mapping a ring buffer: %s", strerror(-r));
			return r;
		}
		opened++;
	}
	if (!opened) {
		err_set(err, errlen, "mmap records: no online CPU took the event");
		return -ENODEV;
	}
	return 0;
}

static int count_threads(int pid)
{
	char dir[64];
	struct dirent *d;
	DIR *t;
	int n = 0;

	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	if (!(t = opendir(dir)))
		return 0;
	while ((d = readdir(t)))
		n += d->d_name[0] != '.';
	closedir(t);
	return n;
}

static int open_process(struct mmap_events *m, int pid, int ncpu, char *err, size_t errlen)
{
	char dir[64];
	struct dirent *d;
	DIR *t;
	int r = 0;

	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	if (!(t = opendir(dir)))
		return 0;	/* gone already: nothing of it to follow */
	while (!r && (d = readdir(t)))
		if (d->d_name[0] != '.')
			r = open_thread(m, atoi(d->d_name), ncpu, err, errlen);
	closedir(t);
	return r;
}

int mmap_events_open(struct mmap_events *m, const int *pids, int npids, char *err, size_t errlen)
{
	int ncpu = libbpf_num_possible_cpus(), r = 0, threads = 0;

	memset(m, 0, sizeof(*m));
	m->page = (size_t)sysconf(_SC_PAGESIZE);
	if (ncpu <= 0) {
		err_set(err, errlen, "mmap records: cannot count the CPUs: %s", strerror(-ncpu));
		return ncpu ? ncpu : -ENODEV;
	}
	for (int i = 0; i < npids; i++)
		threads += pids[i] > 0 ? count_threads(pids[i]) : 0;
	if (threads * ncpu > MMAP_EVENTS_MAX_RINGS) {
		if (!(m->only = malloc(npids * sizeof(*m->only)))) {
			err_set(err, errlen, "mmap records: out of memory");
			return -ENOMEM;
		}
		memcpy(m->only, pids, npids * sizeof(*m->only));
		m->nonly = npids;
		npids = 0;
	}
	if (!npids)
		r = open_thread(m, -1, ncpu, err, errlen);
	for (int i = 0; !r && i < npids; i++)
		if (pids[i] > 0)
			r = open_process(m, pids[i], ncpu, err, errlen);
	if (r)
		mmap_events_close(m);
	return r;
}

bool mmap_events_on(const struct mmap_events *m)
{
	return m->nrings > 0;
}

/* The record at tail, contiguous (copied into buf when it wraps round the ring's end). */
static const void *record_at(const char *data, size_t size, uint64_t tail, size_t len, char *buf)
{
	size_t off = tail & (size - 1);

	if (off + len <= size)
		return data + off;
	memcpy(buf, data + off, size - off);
	memcpy(buf + (size - off), data, len - (size - off));
	return buf;
}

static void deliver(struct mmap_events *m, const struct perf_event_header *h, mmap_event_fn fn, void *ctx)
{
	const struct mmap2_rec *r = (const void *)h;
	const struct sample_id *id = (const void *)((const char *)h + h->size - sizeof(*id));
	size_t name_max = h->size - sizeof(*r) - sizeof(*id);
	struct mmap_event ev;

	if (h->size < sizeof(*r) + sizeof(*id) || !memchr(r->filename, 0, name_max))
		return;
	if (m->nonly) {
		int i = 0;

		while (i < m->nonly && m->only[i] != (int)r->pid)
			i++;
		if (i == m->nonly)
			return;	/* another process */
	}
	ev = (struct mmap_event){ .pid = (int)r->pid, .tid = (int)r->tid, .addr = r->addr, .len = r->len,
				  .pgoff = r->pgoff, .maj = r->maj, .min = r->min, .ino = r->ino, .prot = r->prot,
				  .flags = r->flags, .time_ns = id->time, .path = r->filename };
	m->seen++;
	if (fn)
		fn(ctx, &ev);
}

int mmap_events_drain(struct mmap_events *m, mmap_event_fn fn, void *ctx)
{
	size_t size = MMAP_EVENTS_RING_PAGES * m->page;
	char buf[sizeof(struct mmap2_rec) + 4096 + 64];
	int n = 0;

	for (int i = 0; i < m->nrings; i++) {
		struct perf_event_mmap_page *pg = m->rings[i];
		const char *data = (const char *)pg + m->page;
		uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), tail = pg->data_tail;

		while (tail + sizeof(struct perf_event_header) <= head) {
			struct perf_event_header h;
			const struct perf_event_header *rec;

			memcpy(&h, record_at(data, size, tail, sizeof(h), buf), sizeof(h));
			if (h.size < sizeof(h) || tail + h.size > head)
				break;
			if (h.size > sizeof(buf)) {	/* no mapping record is this long */
				tail += h.size;
				continue;
			}
			rec = record_at(data, size, tail, h.size, buf);
			if (h.type == PERF_RECORD_MMAP2) {
				deliver(m, rec, fn, ctx);
				n++;
			} else if (h.type == PERF_RECORD_LOST && h.size >= sizeof(h) + 16) {
				uint64_t lost;

				memcpy(&lost, (const char *)rec + sizeof(h) + 8, sizeof(lost));
				m->lost += lost;
			}
			tail += h.size;
		}
		__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	}
	return n;
}

void mmap_events_close(struct mmap_events *m)
{
	for (int i = 0; i < m->nrings; i++) {
		munmap(m->rings[i], (1 + MMAP_EVENTS_RING_PAGES) * m->page);
		close(m->fds[i]);
	}
	free(m->fds);
	free(m->rings);
	free(m->only);
	memset(m, 0, sizeof(*m));
}
