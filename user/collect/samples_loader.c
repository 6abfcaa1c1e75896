// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collect/bpf_util.h"
#include "collect/map_batch.h"
#include "collect/samples_loader.h"
#include "collect/spin.h"
#include "lib/kernel_file.h"
#include "lib/u64map.h"
#include "lib/warn.h"
#include "pmu/perf_open.h"
#include "threads.skel.h"
#include "samples.skel.h"

int samples_max_rate(void)
{
	return kernel_file_int("/proc/sys/kernel/perf_event_max_sample_rate", -1);
}

static int on_notice(void *ctx, void *data, size_t size)
{
	struct samples_prog *s = ctx;

	if (size >= sizeof(struct sample_key) && s->on_notice)
		s->on_notice(s->ctx, data);
	return 0;
}

int samples_load(struct samples_prog *s, struct threads_prog *tp, const struct samples_cfg *cfg, char *err,
		 size_t errlen)
{
	int r;

	memset(s, 0, sizeof(*s));
	s->nr_cpus = tp ? tp->nr_cpus : libbpf_num_possible_cpus();
	s->hz = cfg->hz;
	s->max_rows = cfg->max_rows;
	s->on_notice = cfg->on_notice;
	s->ctx = cfg->ctx;
	s->skel = samples_bpf__open();
	if (!s->skel) {
		err_set(err, errlen, "opening the sample program: %s", strerror(errno));
		return -errno;
	}
	/* threads first met at a sample keep their cgroup (daemon: account_cfg.cgroup) */
	if (tp)
		s->skel->rodata->account_cfg = tp->acfg;
	else
		account_cfg_fill(&s->skel->rodata->account_cfg, NULL, NULL, NULL, s->nr_cpus);
	s->skel->rodata->cfg_no_account = !tp || cfg->no_deltas;
	s->skel->rodata->cfg_nr_spin = tp && cfg->spin ? cfg->spin->n : 0;
	s->skel->rodata->cfg_percall_samples = tp && cfg->percall_ring;
	if (tp && cfg->percall_ring)
		bpf_map__set_max_entries(s->skel->maps.percall_samples, (__u32)cfg->percall_ring);
	s->standalone = !tp;
	bpf_map__set_max_entries(s->skel->maps.samples, cfg->max_rows);
	bpf_map__set_max_entries(s->skel->maps.sample_stacks, cfg->max_rows);
	bpf_map__set_max_entries(s->skel->maps.sample_bases, tp ? 2 * tp->max_threads : 1);
	if (tp) {
		r = threads_share_maps(tp, s->skel->obj);
	} else {	/* standalone: the spine's maps unused, kept small */
		bpf_map__set_max_entries(s->skel->maps.counters, 1);
		bpf_map__set_max_entries(s->skel->maps.threads, 1);
		bpf_map__set_max_entries(s->skel->maps.pids, 1);
		r = 0;
	}
	if (!r)
		r = samples_bpf__load(s->skel);
	if (r)
		return bpf_load_error(r, err, errlen, "loading the sample program", &stacks_hints);
	for (__u32 i = 0; i < s->skel->rodata->cfg_nr_spin; i++)
		if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.spin_ranges), &i, &cfg->spin->r[i], BPF_ANY)) {
			err_set(err, errlen, "setting the spin functions: %s", strerror(errno));
			return -errno;
		}
	if (!(s->rb = ringbuf_open(bpf_map__fd(s->skel->maps.sample_notices), on_notice, s, "sample", err, errlen)))
		return -errno;
	s->try_cycles = cfg->try_cycles;
	return 0;
}

int samples_percall_fd(const struct samples_prog *s)
{
	return bpf_map__fd(s->skel->maps.percall_samples);
}

static int sys_perf_event_open(struct perf_event_attr *a, int cpu)
{
	return (int)syscall(__NR_perf_event_open, a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void sampling_attr(struct perf_event_attr *a, bool cycles, int hz)
{
	if (hz < 1)
		hz = 1;
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = cycles ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE;
	a->config = cycles ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_SW_CPU_CLOCK;
	a->freq = 1;	/* cpu-clock turns this into a fixed period of 1e9/hz ns */
	a->sample_freq = (unsigned long long)hz;
	a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
}

/* cycles when the host has a PMU and the event samples on every CPU; say why not otherwise. */
static bool choose_cycles(struct samples_prog *s)
{
	struct perf_event_attr a;
	int fd = -1, e = ENODEV;

	if (!s->try_cycles) {
		snprintf(s->why, sizeof(s->why), "no hardware PMU: cycles cannot sample here");
		return false;
	}
	sampling_attr(&a, true, s->hz);
	for (int cpu = 0; cpu < s->nr_cpus && fd < 0; cpu++) {
		fd = sys_perf_event_open(&a, cpu);
		if (fd < 0 && errno != ENODEV && errno != ENXIO) {
			e = errno;
			break;
		}
	}
	if (fd >= 0) {
		close(fd);
		snprintf(s->why, sizeof(s->why), "hardware PMU: cycles");
		return true;
	}
	snprintf(s->why, sizeof(s->why), "cycles cannot sample: %s (%s)", strerror(e), perf_open_hint(e, &a));
	return false;
}

static int samples_attach_events(struct samples_prog *s, char *err, size_t errlen);

int samples_attach(struct samples_prog *s, char *err, size_t errlen)
{
	int r = s->hz > 0 ? samples_attach_events(s, err, errlen) : 0;

	if (r)
		return r;
	s->exec_link = bpf_program__attach(s->skel->progs.tmabpf_sample_exec);
	if (!s->exec_link) {
		r = -errno;
		err_set(err, errlen, "attaching sched_process_exec for --sample: %s", strerror(-r));
		return r;
	}
	return 0;
}

/* The sampling event on every CPU, each with the sample program attached. */
static int samples_attach_events(struct samples_prog *s, char *err, size_t errlen)
{
	struct perf_event_attr a;
	bool cycles = s->event[0] ? !s->cpu_clock : choose_cycles(s);
	int attached = 0;

	s->cpu_clock = !cycles;
	snprintf(s->event, sizeof(s->event), "%s", cycles ? "cycles" : "cpu-clock");
	sampling_attr(&a, cycles, s->hz);
	s->period_ns = 1e9 / s->hz;
	s->pfds = malloc(sizeof(*s->pfds) * s->nr_cpus);
	s->links = calloc(s->nr_cpus, sizeof(*s->links));
	if (!s->pfds || !s->links) {
		free(s->pfds);
		free(s->links);
		s->pfds = NULL;
		s->links = NULL;
		err_set(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (int cpu = 0; cpu < s->nr_cpus; cpu++)
		s->pfds[cpu] = -1;
	for (int cpu = 0; cpu < s->nr_cpus; cpu++) {
		int fd = sys_perf_event_open(&a, cpu);

		s->pfds[cpu] = fd;
		if (fd < 0) {
			if (errno == ENODEV || errno == ENXIO)
				continue;	/* offline CPU */
			err_set(err, errlen, "opening the %s sampling event at %d Hz on CPU %d: %s (%s)", s->event,
				 s->hz, cpu, strerror(errno),
				 errno == EINVAL ? "rate above kernel.perf_event_max_sample_rate?" : perf_open_hint(errno, &a));
			return -errno;
		}
		s->links[cpu] = bpf_program__attach_perf_event(s->skel->progs.tmabpf_sample, fd);
		if (!s->links[cpu]) {
			int r = -errno;

			err_set(err, errlen, "attaching the sample program to CPU %d: %s", cpu, strerror(-r));
			return r;
		}
		attached++;
	}
	if (!attached) {
		err_set(err, errlen, "no CPU could take a %s sampling event", s->event);
		return -ENODEV;
	}
	return 0;
}

/* The events' new period: cpu-clock turned freq into a fixed period at open
 * (attr.freq cleared), so it takes ns; cycles stays in frequency mode and takes Hz. */
static unsigned long long period_value(const struct samples_prog *s, double hz)
{
	if (s->cpu_clock)
		return (unsigned long long)(1e9 / hz + 0.5);
	return hz < 1 ? 1 : (unsigned long long)(hz + 0.5);
}

int samples_set_rate(struct samples_prog *s, double hz, char *err, size_t errlen)
{
	unsigned long long v;
	int bad = -1;

	if (!s->pfds || !(hz > 0)) {
		err_set(err, errlen, "no sampling events open");
		return -EINVAL;
	}
	v = period_value(s, hz);
	if (getenv("TMABPF_TEST_NO_IOC_PERIOD")) {	/* tests: take the re-open path */
		bad = 0;
		errno = ENOTTY;
	}
	for (int cpu = 0; bad < 0 && cpu < s->nr_cpus; cpu++)
		if (s->pfds[cpu] >= 0 && ioctl(s->pfds[cpu], PERF_EVENT_IOC_PERIOD, &v)) {
			bad = cpu;
			break;
		}
	if (bad < 0) {
		s->hz = (int)(hz + 0.5);
		s->period_ns = s->cpu_clock ? (double)v : 1e9 / hz;
		return 0;
	}
	/* an old kernel or an event that refuses: re-open everything at the new rate */
	{
		int e = errno, r;
		struct bpf_link *exec_link = s->exec_link;

		s->exec_link = NULL;	/* the exec program stays attached */
		samples_detach(s);
		s->exec_link = exec_link;
		s->hz = (int)(hz + 0.5) < 1 ? 1 : (int)(hz + 0.5);
		r = samples_attach_events(s, err, errlen);
		if (r)
			return r;
		err_set(err, errlen, "PERF_EVENT_IOC_PERIOD on CPU %d: %s; re-opened the events at %d Hz", bad,
			 strerror(e), s->hz);
		return 1;
	}
}

void samples_poll(struct samples_prog *s)
{
	if (s->rb)
		ring_buffer__consume(s->rb);
}

int samples_read(struct samples_prog *s, struct sample_row **rows, size_t *n)
{
	int r;

	*rows = map_read_rows(bpf_map__fd(s->skel->maps.samples), sizeof(struct sample_key), sizeof(struct sample_stats),
			      offsetof(struct sample_row, s), sizeof(struct sample_row), (size_t)s->max_rows, n, &r);
	return r;
}

static int cmp_stack_id(const void *a, const void *b)
{
	__u64 x = ((const struct stack_entry *)a)->id, y = ((const struct stack_entry *)b)->id;

	return x < y ? -1 : x > y;
}

int samples_read_stacks(struct samples_prog *s, struct stack_entry **out, size_t *n)
{
	int r;

	*out = map_read_rows(bpf_map__fd(s->skel->maps.sample_stacks), sizeof(__u64), sizeof(struct stack_frames),
			     offsetof(struct stack_entry, f), sizeof(struct stack_entry), (size_t)s->max_rows, n, &r);
	if (r)
		return r;
	for (size_t i = 0; i < *n; i++)
		if ((*out)[i].f.nr > TMABPF_STACK_DEPTH)
			(*out)[i].f.nr = TMABPF_STACK_DEPTH;
	qsort(*out, *n, sizeof(**out), cmp_stack_id);
	return 0;
}

int samples_stack_lookup(struct samples_prog *s, __u64 id, struct stack_frames *out)
{
	if (!id || bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.sample_stacks), &id, out))
		return -ENOENT;
	if (out->nr > TMABPF_STACK_DEPTH)
		out->nr = TMABPF_STACK_DEPTH;
	return 0;
}

const struct stack_frames *samples_stack_find(const struct stack_entry *v, size_t n, __u64 id)
{
	struct stack_entry k = { .id = id };
	const struct stack_entry *e = id ? bsearch(&k, v, n, sizeof(*v), cmp_stack_id) : NULL;

	return e ? &e->f : NULL;
}

int samples_share_maps(const struct samples_prog *s, struct bpf_object *obj)
{
	struct bpf_map *mine;

	bpf_object__for_each_map(mine, obj) {
		struct bpf_map *theirs;
		int r;

		if (bpf_map__is_internal(mine))
			continue;
		theirs = bpf_object__find_map_by_name(s->skel->obj, bpf_map__name(mine));
		if (!theirs)
			continue;	/* its own (evsamples' thread_est: the task programs' or none) */
		if ((r = bpf_map__reuse_fd(mine, bpf_map__fd(theirs))))
			return r;
	}
	return 0;
}

const struct account_cfg *samples_account_cfg(const struct samples_prog *s)
{
	return &s->skel->rodata->account_cfg;
}

int samples_rows_fd(const struct samples_prog *s)
{
	return bpf_map__fd(s->skel->maps.samples);
}

int samples_stacks_fd(const struct samples_prog *s)
{
	return bpf_map__fd(s->skel->maps.sample_stacks);
}

size_t samples_stacks_gc(struct samples_prog *s, struct u64map *seen, const struct sample_key *keys, size_t n,
			 size_t max)
{
	int fd = samples_stacks_fd(s);
	struct u64map used = {};
	__u64 key, next, *dead = NULL;
	size_t nd = 0, cap = 0, gone = 0;
	bool ok = true;

	for (size_t i = 0; i < n; i++) {
		if (keys[i].kstack)
			u64map_put(seen, keys[i].kstack, (void *)1);
		if (keys[i].ustack)
			u64map_put(seen, keys[i].ustack, (void *)1);
	}
	if (seen->n < max / 2)
		return 0;
	for (size_t i = 0; i < n && ok; i++) {
		if (keys[i].kstack)
			ok = !u64map_put(&used, keys[i].kstack, (void *)1);
		if (keys[i].ustack && ok)
			ok = !u64map_put(&used, keys[i].ustack, (void *)1);
	}
	for (__u64 *pk = NULL; ok && bpf_map_get_next_key(fd, pk, &next) == 0; pk = &key) {
		key = next;
		if (u64map_get(&used, key))
			continue;
		if (nd == cap) {
			__u64 *v = realloc(dead, (cap = cap ? 2 * cap : 1024) * sizeof(*v));

			if (!v)
				break;
			dead = v;
		}
		dead[nd++] = key;
	}
	for (size_t i = 0; i < nd; i++)
		gone += !bpf_map_delete_elem(fd, &dead[i]);
	free(dead);
	u64map_free(seen);
	*seen = used;	/* what is left stored */
	return gone;
}

void samples_run_stats(struct samples_prog *s, unsigned long long *ns, unsigned long long *cnt)
{
	*ns = *cnt = 0;
	if (s->skel)
		prog_run_stats_add(s->skel->progs.tmabpf_sample, ns, cnt);
}

void samples_stats_add(struct samples_prog *s, struct self_stats *self)
{
	if (s->skel && s->standalone)
		stat_map_sum(bpf_map__fd(s->skel->maps.stats), STAT_MAX, self->stat);
}

void samples_detach(struct samples_prog *s)
{
	bpf_link__destroy(s->exec_link);
	s->exec_link = NULL;
	if (!s->pfds)
		return;
	for (int cpu = 0; cpu < s->nr_cpus; cpu++) {
		if (s->links[cpu])
			bpf_link__destroy(s->links[cpu]);	/* closes the event too */
		else if (s->pfds[cpu] >= 0)
			close(s->pfds[cpu]);
	}
	free(s->pfds);
	free(s->links);
	s->pfds = NULL;
	s->links = NULL;
}

void samples_destroy(struct samples_prog *s)
{
	samples_detach(s);
	ring_buffer__free(s->rb);
	s->rb = NULL;
	samples_bpf__destroy(s->skel);
	s->skel = NULL;
}
