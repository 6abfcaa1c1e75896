// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <errno.h>
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
#include "collect/evsamples_loader.h"
#include "lib/clock.h"
#include "lib/warn.h"
#include "pmu/perf_open.h"
#include "evsamples.skel.h"

int evsamples_load(struct evsamples_prog *p, struct samples_prog *s, bool stacks, int thread_est_fd, char *err,
		   size_t errlen)
{
	int r;

	memset(p, 0, sizeof(*p));
	p->nr_cpus = s->nr_cpus;
	p->skel = evsamples_bpf__open();
	if (!p->skel) {
		err_set(err, errlen, "opening the event-sampling program: %s", strerror(errno));
		return -errno;
	}
	p->skel->rodata->account_cfg = *samples_account_cfg(s);
	p->skel->data->cfg_stacks = stacks;
	p->skel->rodata->cfg_thread_est = thread_est_fd >= 0;
	r = samples_share_maps(s, p->skel->obj);
	if (!r && thread_est_fd >= 0)
		r = bpf_map__reuse_fd(p->skel->maps.thread_est, thread_est_fd);
	if (!r)
		r = evsamples_bpf__load(p->skel);
	if (r)
		return bpf_load_error(r, err, errlen, "loading the event-sampling program", &stacks_hints);
	return 0;
}

void evsamples_set_stacks(struct evsamples_prog *p, bool on)
{
	__atomic_store_n(&p->skel->data->cfg_stacks, on, __ATOMIC_RELEASE);
}

static int sys_perf_event_open(struct perf_event_attr *a, int cpu)
{
	return (int)syscall(__NR_perf_event_open, a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* The first period of an event, before its rate is known: time (ns) and hardware events as if
 * counting a billion a second, other software events (faults, switches) 10,000 a second. */
static unsigned long long first_period(const struct perf_event_attr *a, int freq)
{
	bool clock = a->type == PERF_TYPE_SOFTWARE &&
		     (a->config == PERF_COUNT_SW_CPU_CLOCK || a->config == PERF_COUNT_SW_TASK_CLOCK);
	unsigned long long per_s = a->type != PERF_TYPE_SOFTWARE || clock ? 1000000000ULL : 10000ULL;

	return per_s / freq > EVSAMPLE_MIN_PERIOD ? per_s / freq : EVSAMPLE_MIN_PERIOD;
}

/* Event e as a sampling event with a fixed period: its counting attr, alone (groups are for
 * counting together; each sampling event runs on its own and says how long it ran). */
static void sampling_attr(struct perf_event_attr *a, const struct event_desc *d, unsigned long long period)
{
	*a = d->attr;
	a->size = sizeof(*a);
	a->freq = 0;
	a->sample_period = period;
	a->sample_type = 0;
	a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	a->disabled = 0;
	a->inherit = 0;
	a->pinned = 0;
}

static int per_event_freq(double hz, int nev)
{
	int f = (int)(hz / (nev ? nev : 1) + 0.5);

	return f < 1 ? 1 : f;
}

/* Open event e on every CPU and attach; 0 when at least one CPU samples it, else why in p->why[e]. */
/* Undo a partly attached event: its CPUs must not go on adding samples to an event reported as
 * not sampled.  Returns -1. */
static int detach_event(struct evsamples_prog *p, int e)
{
	for (int cpu = 0; cpu < p->nr_cpus; cpu++) {
		int i = e * p->nr_cpus + cpu;

		if (p->links[i])
			bpf_link__destroy(p->links[i]);	/* closes the event too */
		else if (p->pfds[i] >= 0)
			close(p->pfds[i]);
		p->links[i] = NULL;
		p->pfds[i] = -1;
	}
	return -1;
}

static int attach_event(struct evsamples_prog *p, int e, const struct event_desc *d)
{
	struct perf_event_attr a;
	int attached = 0;

	p->period[e] = first_period(&d->attr, p->freq);
	sampling_attr(&a, d, p->period[e]);
	for (int cpu = 0; cpu < p->nr_cpus; cpu++) {
		int i = e * p->nr_cpus + cpu, fd = sys_perf_event_open(&a, cpu);
		LIBBPF_OPTS(bpf_perf_event_opts, opts, .bpf_cookie = (__u64)e);

		if (fd < 0) {
			if (errno == ENODEV || errno == ENXIO)
				continue;	/* offline CPU */
			snprintf(p->why[e], sizeof(p->why[e]), "%s (%s)", strerror(errno),
				 errno == EINVAL ? "it cannot sample, or the rate is above kernel.perf_event_max_sample_rate"
				 : perf_open_hint(errno, &a));
			return detach_event(p, e);
		}
		p->pfds[i] = fd;
		p->links[i] = bpf_program__attach_perf_event_opts(p->skel->progs.tmabpf_evsample, fd, &opts);
		if (!p->links[i]) {
			snprintf(p->why[e], sizeof(p->why[e]), "attaching the program on CPU %d: %s", cpu, strerror(errno));
			return detach_event(p, e);
		}
		attached++;
	}
	if (!attached)
		snprintf(p->why[e], sizeof(p->why[e]), "no CPU could take it");
	p->ncpus_open = attached > p->ncpus_open ? attached : p->ncpus_open;
	return attached ? 0 : -1;
}

int evsamples_attach(struct evsamples_prog *p, const struct event_list *evs, double hz, char *err, size_t errlen)
{
	size_t n = (size_t)evs->n * p->nr_cpus;
	int open = 0;

	p->nev = evs->n;
	p->hz = hz;
	p->freq = per_event_freq(hz, evs->n);
	p->pfds = malloc(sizeof(*p->pfds) * (n ? n : 1));
	p->links = calloc(n ? n : 1, sizeof(*p->links));
	if (!p->pfds || !p->links) {
		err_set(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		p->pfds[i] = -1;
	for (int e = 0; e < evs->n; e++) {
		p->why[e][0] = 0;
		p->open[e] = attach_event(p, e, &evs->ev[e]) == 0;
		open += p->open[e];
	}
	if (!open) {
		err_set(err, errlen, "no event can sample: %s: %s", evs->n ? evs->ev[0].name : "(none)",
			p->why[0][0] ? p->why[0] : "no events");
		return -ENODEV;
	}
	p->adapt_ns = mono_ns();
	p->next_ns = p->adapt_ns + EVSAMPLE_FIRST_ADAPT_MS * 1000000ULL;
	return 0;
}

/* Event e's count on every CPU since its events opened. */
static unsigned long long event_count(const struct evsamples_prog *p, int e)
{
	unsigned long long sum = 0;

	for (int cpu = 0; cpu < p->nr_cpus; cpu++) {
		__u64 v[3];
		int fd = p->pfds[e * p->nr_cpus + cpu];

		if (fd >= 0 && read(fd, v, sizeof(v)) == sizeof(v))
			sum += v[0];
	}
	return sum;
}

void evsamples_adapt(struct evsamples_prog *p, unsigned long long now)
{
	double dt = (double)(now - p->adapt_ns) / 1e9;

	if (!p->pfds || now < p->next_ns || dt <= 0)
		return;
	for (int e = 0; e < p->nev; e++) {
		unsigned long long c, want;
		double rate;

		if (!p->open[e])
			continue;
		c = event_count(p, e);
		if (c < p->count[e]) {	/* a CPU's read failed this time: no rate, keep the period */
			p->count[e] = c;
			continue;
		}
		rate = (double)(c - p->count[e]) / dt / (p->ncpus_open ? p->ncpus_open : 1);	/* per CPU */
		p->count[e] = c;
		if (c == 0 || rate <= 0)
			continue;	/* no events: no news of its rate */
		want = (unsigned long long)(rate / p->freq);
		/* A quiet second must not set the period of the next burst (page faults come in bursts):
		 * at most a quarter less per step, so a burst samples at most ~4x the rate asked. */
		want = want < p->period[e] / EVSAMPLE_MAX_STEP_DOWN ? p->period[e] / EVSAMPLE_MAX_STEP_DOWN : want;
		/* At a period of 1 the kernel overflows without updating the period it reports
		 * (perf_swevent_event(): hw.last_period stays the previous one): 2 at least. */
		want = want < EVSAMPLE_MIN_PERIOD ? EVSAMPLE_MIN_PERIOD : want;
		if (want == p->period[e])
			continue;
		for (int cpu = 0; cpu < p->nr_cpus; cpu++) {
			int fd = p->pfds[e * p->nr_cpus + cpu];

			if (fd >= 0 && ioctl(fd, PERF_EVENT_IOC_PERIOD, &want))
				warn_add("--sample-events: setting the period of event %d: %s", e, strerror(errno));
		}
		p->period[e] = want;
	}
	p->adapt_ns = now;
	p->next_ns = now + EVSAMPLE_ADAPT_MS * 1000000ULL;
}

void evsamples_set_rate(struct evsamples_prog *p, double hz)
{
	p->hz = hz;
	p->freq = per_event_freq(hz, p->nev);
}

void evsamples_times(const struct evsamples_prog *p, int e, struct evsample_times *t)
{
	if (!p->pfds) {
		*t = e < p->nev ? p->times[e] : (struct evsample_times){};
		return;
	}
	t->enabled = t->running = 0;
	for (int cpu = 0; e < p->nev && cpu < p->nr_cpus; cpu++) {
		__u64 v[3];
		int fd = p->pfds[e * p->nr_cpus + cpu];

		if (fd >= 0 && read(fd, v, sizeof(v)) == sizeof(v)) {
			t->enabled += v[1];
			t->running += v[2];
		}
	}
}

void evsamples_shared(const struct evsamples_prog *p, const struct event_list *evs, char *out, size_t len)
{
	double lo = 101, hi = -1;
	size_t n = 0;

	out[0] = 0;
	for (int e = 0; e < p->nev; e++) {
		struct evsample_times t;
		double pct;

		evsamples_times(p, e, &t);
		if (!t.enabled || t.running >= t.enabled)
			continue;
		pct = 100.0 * t.running / t.enabled;
		lo = pct < lo ? pct : lo;
		hi = pct > hi ? pct : hi;
		n += snprintf(out + n, n < len ? len - n : 0, "%s%s", n ? ", " : "", evs->ev[e].name);
	}
	if (n && n < len)
		snprintf(out + n, len - n, " (running %.0f-%.0f %% of the time)", lo, hi);
}

void evsamples_run_stats(const struct evsamples_prog *p, unsigned long long *ns, unsigned long long *cnt)
{
	*ns = *cnt = 0;
	if (p->skel)
		prog_run_stats_add(p->skel->progs.tmabpf_evsample, ns, cnt);
}

void evsamples_detach(struct evsamples_prog *p)
{
	if (!p->pfds)
		return;
	for (int e = 0; e < p->nev; e++)
		evsamples_times(p, e, &p->times[e]);
	for (int i = 0; i < p->nev * p->nr_cpus; i++) {
		if (p->links[i])
			bpf_link__destroy(p->links[i]);	/* closes the event too */
		else if (p->pfds[i] >= 0)
			close(p->pfds[i]);
	}
	free(p->pfds);
	free(p->links);
	p->pfds = NULL;
	p->links = NULL;
}

void evsamples_destroy(struct evsamples_prog *p)
{
	evsamples_detach(p);
	evsamples_bpf__destroy(p->skel);
	p->skel = NULL;
}
