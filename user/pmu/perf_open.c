// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "lib/warn.h"
#include "pmu/perf_open.h"

static int sys_perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu, int group_fd, unsigned long flags)
{
	return (int)syscall(__NR_perf_event_open, a, pid, cpu, group_fd, flags);
}

int perf_open_fd(struct perf_event_attr *a, pid_t pid, int cpu, int group_fd, unsigned long flags)
{
	return sys_perf_event_open(a, pid, cpu, group_fd, flags);
}

const char *perf_open_hint(int err, const struct perf_event_attr *a)
{
	switch (err) {
	case EACCES:
	case EPERM:
		return "need root or CAP_PERFMON (see /proc/sys/kernel/perf_event_paranoid)";
	case ENOENT:
	case EOPNOTSUPP:
		if (a->type == PERF_TYPE_HARDWARE || a->type == PERF_TYPE_RAW || a->type == PERF_TYPE_HW_CACHE)
			return "hardware counters are unavailable on this host (no PMU, e.g. a VM without vPMU)";
		return "this kernel or PMU does not support the event";
	case EINVAL:
		return "the PMU rejected the encoding (wrong event/umask or reserved bits)";
	case EMFILE:
		return "too many open files: raise 'ulimit -n'";
	case EBUSY:
		return "the counter is in use by another tool";
	default:
		return "perf_event_open failed";
	}
}

/* A group member the PMU refused although it opens alone on that CPU: the
 * group does not fit in the counters (arm_pmu and x86 validate a group's
 * counter needs at open, EINVAL; some drivers answer ENOSPC). */
static bool group_overflows(struct perf_event_attr *a, int cpu, int err)
{
	int fd;

	if (err != EINVAL && err != ENOSPC)
		return false;
	fd = sys_perf_event_open(a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Open event e on every CPU; 0 when it opened on at least one online CPU;
 * -E2BIG when it is a member its group has no counter left for. */
static int open_event(struct perf_counters *pc, const struct event_list *evs, int e, int *leader_fds, int *err_out)
{
	const struct event_desc *d = &evs->ev[e];
	struct perf_event_attr a = d->attr;
	int opened = 0, first_err = 0;

	a.size = sizeof(a);
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	a.disabled = 0;
	a.inherit = 0;
	for (int cpu = 0; cpu < pc->nr_cpus; cpu++) {
		int group_fd = (d->group >= 0 && !d->leader) ? leader_fds[cpu] : -1;
		int fd;

		if (d->group >= 0 && !d->leader && group_fd < 0)
			continue;	/* leader not open on this CPU */
		fd = sys_perf_event_open(&a, -1, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			int err = errno;

			if (err == ENODEV || err == ENXIO)
				continue;	/* offline CPU */
			if (group_fd >= 0 && group_overflows(&a, cpu, err)) {
				*err_out = err;
				return -E2BIG;
			}
			if (!first_err)
				first_err = err;
			continue;
		}
		pc->fds[e * pc->nr_cpus + cpu] = fd;
		if (d->group >= 0 && d->leader)
			leader_fds[cpu] = fd;
		opened++;
	}
	*err_out = first_err;
	return first_err ? -first_err : (opened ? 0 : -ENODEV);
}

static void close_row(struct perf_counters *pc, int e)
{
	for (int cpu = 0; cpu < pc->nr_cpus; cpu++) {
		int *fd = &pc->fds[e * pc->nr_cpus + cpu];

		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
}

/* Drop events marked bad (and whole groups containing one), compacting evs and fds. */
static void compact(struct perf_counters *pc, struct event_list *evs, const bool *bad)
{
	int out = 0;

	for (int e = 0; e < evs->n; e++) {
		bool drop = bad[e];

		for (int k = 0; !drop && k < evs->n; k++)
			drop = evs->ev[e].group >= 0 && evs->ev[k].group == evs->ev[e].group && bad[k];
		if (drop) {
			close_row(pc, e);
			continue;
		}
		if (out != e) {
			evs->ev[out] = evs->ev[e];
			memcpy(&pc->fds[out * pc->nr_cpus], &pc->fds[e * pc->nr_cpus], sizeof(int) * pc->nr_cpus);
		}
		out++;
	}
	evs->n = out;
	pc->nr_events = out;
}

/* "{a,b,...}" of group g, into buf. */
static void group_names(const struct event_list *evs, int g, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (int k = 0; k < evs->n && n + 1 < len; k++)
		if (evs->ev[k].group == g)
			n += snprintf(buf + n, len - n, "%s%s", n ? "," : "{", evs->ev[k].name);
	if (n + 1 < len)
		snprintf(buf + n, len - n, "}");
}

int perf_counters_open(struct perf_counters *pc, struct event_list *evs, int nr_cpus, char *err, size_t errlen)
{
	int leader_fds[evs->n > 0 ? evs->n : 1][nr_cpus];
	bool bad[TMABPF_MAX_EVENTS] = {};
	int priv_err = 0, r;
	char why[512];

	pc->nr_cpus = nr_cpus;
	pc->nr_events = evs->n;
	pc->fds = malloc(sizeof(int) * (evs->n ? evs->n : 1) * nr_cpus);
	if (!pc->fds) {
		err_set(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < evs->n * nr_cpus; i++)
		pc->fds[i] = -1;
	for (int e = 0; e < evs->n; e++) {
		int g = evs->ev[e].group, open_err = 0;
		int *leaders = leader_fds[g >= 0 && g < evs->n ? g : 0];

		if (g >= 0 && evs->ev[e].leader)
			for (int c = 0; c < nr_cpus; c++)
				leaders[c] = -1;
		r = open_event(pc, evs, e, leaders, &open_err);
		if (r == 0)
			continue;
		if (r == -E2BIG && evs->ev[e].from_user) {
			/* the user asked these counted together: that cannot be, say so */
			char names[512];
			int members = 0;

			for (int k = 0; k < evs->n; k++)
				members += evs->ev[k].group == g;
			group_names(evs, g, names, sizeof(names));
			err_set(err, errlen, "-e group %.300s: its %d events cannot be counted together on this PMU "
				 "(%s opens alone, not as member %d: %s); split the group", names, members,
				 evs->ev[e].name, e - g + 1, strerror(open_err));
			perf_counters_close(pc);
			return -E2BIG;
		}
		bad[e] = true;
		if (open_err == EACCES || open_err == EPERM)
			priv_err = open_err;
		perf_open_why(&evs->ev[e], open_err, why, sizeof(why));
		warn_add("%s; continuing without it", why);
	}
	compact(pc, evs, bad);
	if (priv_err) {
		err_set(err, errlen, "perf_event_open: %s: need root or CAP_PERFMON", strerror(priv_err));
		return -priv_err;
	}
	return 0;
}

void perf_open_why(const struct event_desc *d, int err, char *buf, size_t len)
{
	snprintf(buf, len, "event '%s' (type %u config %#llx) cannot be opened: %s: %s", d->name, d->attr.type,
		 (unsigned long long)d->attr.config, strerror(err ? err : ENODEV), perf_open_hint(err, &d->attr));
}

int perf_counters_probe(const struct event_list *evs, int nr_cpus, int *errs)
{
	int leader_fds[evs->n > 0 ? evs->n : 1][nr_cpus];
	struct perf_counters pc = { .nr_cpus = nr_cpus, .nr_events = evs->n };
	int ok = 0;

	pc.fds = malloc(sizeof(int) * (evs->n ? evs->n : 1) * nr_cpus);
	if (!pc.fds)
		return -ENOMEM;
	for (int i = 0; i < evs->n * nr_cpus; i++)
		pc.fds[i] = -1;
	for (int e = 0; e < evs->n; e++) {
		int g = evs->ev[e].group, r;
		int *leaders = leader_fds[g >= 0 && g < evs->n ? g : 0];

		if (g >= 0 && evs->ev[e].leader)
			for (int c = 0; c < nr_cpus; c++)
				leaders[c] = -1;
		errs[e] = 0;
		r = open_event(&pc, evs, e, leaders, &errs[e]);
		if (r == -E2BIG)
			errs[e] = E2BIG;
		else if (r && !errs[e])
			errs[e] = -r;
	}
	/* a group counts whole or not at all, refused by its first refusal (a member of a refused
	 * leader is never tried) */
	for (int e = 0; e < evs->n; e++) {
		for (int k = 0; k < evs->n && evs->ev[e].group >= 0; k++)
			if (evs->ev[k].group == evs->ev[e].group && errs[k]) {
				errs[e] = errs[k];
				break;
			}
		ok += !errs[e];
	}
	perf_counters_close(&pc);
	return ok;
}

void perf_counters_close(struct perf_counters *pc)
{
	if (!pc->fds)
		return;
	for (int e = 0; e < pc->nr_events; e++)
		close_row(pc, e);
	free(pc->fds);
	pc->fds = NULL;
}
