// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* What the daemon publishes at each refresh: the metrics (served by daemon_http.c), --jsonl's line,
 * tmabpf's own process figures, and whether the TMA ratios are exported (zero_counts.h). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "daemon/daemon_publish.h"
#include "lib/clock.h"
#include "lib/warn.h"
#include "model/zero_counts.h"
#include "pmu/cpu_detect.h"

/* Kernel memory of the BPF maps this process holds: the memlock of each map fd (fdinfo). */
static double bpf_maps_memlock(void)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *e;
	double sum = 0;

	if (!dir)
		return 0;
	while ((e = readdir(dir))) {
		char path[300], link[64], line[128];
		ssize_t n;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0 || (link[n] = 0, strcmp(link, "anon_inode:bpf-map")))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%s", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		while (fgets(line, sizeof(line), f)) {
			unsigned long long v;

			if (sscanf(line, "memlock: %llu", &v) == 1)
				sum += (double)v;
		}
		fclose(f);
	}
	closedir(dir);
	return sum;
}

void daemon_publish_self(struct daemon_self *s)
{
	unsigned long size, res;
	FILE *f = fopen("/proc/self/statm", "r");
	DIR *dir;
	long page = sysconf(_SC_PAGESIZE);

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &res) == 2) {
			s->vm_bytes = (double)size * page;
			s->rss_bytes = (double)res * page;
		}
		fclose(f);
	}
	s->cpu_seconds = self_cpu_ns() / 1e9;
	/* the maps are sized at load and never resized: read once (reading every map's fdinfo at each
	 * refresh made the soak test's RSS grow by tens of MB) */
	if (!s->bpf_map_bytes)
		s->bpf_map_bytes = bpf_maps_memlock();
	if ((dir = opendir("/proc/self/fd"))) {
		int n = 0;

		while (readdir(dir))
			n++;
		closedir(dir);
		s->open_fds = n - 3;	/* ".", "..", the directory's own fd */
	}
}

void daemon_publish(struct daemon *D)
{
	const struct run_prep *p = &D->prep;
	struct daemon_view v = {
		.agg = &D->agg, .funcs = D->c.links.uprobes ? &D->funcs : NULL, .uset = D->c.links.uset, .evs = &p->evs,
		.host = &p->host, .recipe = p->cpu ? tma_cpu_name(p->cpu) : NULL, .tma_level = D->tma_zero ? 0 : p->tma_level,
		.tma_plan = p->tma_level && !D->tma_zero ? &p->plan : NULL, .self = &D->self, .samp = D->sampler ? &D->samp : NULL,
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f) {
		daemon_metrics_write(f, &v);
		if (fclose(f) == 0 && daemon_http_publish(D->http, buf, len))
			warn_add("out of memory publishing the metrics");
		free(buf);
	}
	if (outfile_is_open(&D->jsonl)) {
		char err[512];

		daemon_metrics_jsonl_write(D->jsonl.f, &v, unix_time_s());
		if (outfile_flush(&D->jsonl, err, sizeof(err))) {
			if (!D->jsonl_failed)
				warn_add("%s", err);
			D->jsonl_failed = true;
			clearerr(D->jsonl.f);	/* the next interval tries again (the disk may have room by then) */
			D->jsonl.write_errno = 0;
		} else if (D->jsonl_failed) {
			warn_add("--jsonl: writing works again");
			D->jsonl_failed = false;
		}
	}
}

/* The run's rule (zero_counts.h): events of the TMA recipe that have read 0 since the start while
 * others counted make its ratios a clean, false 0 % or 100 %: none is exported, said once. */
void daemon_publish_tma_check(struct daemon *D)
{
	char why[256];
	bool zero;

	if (!D->prep.tma_level)
		return;
	zero = zero_counts_tma(&D->prep.evs, D->agg.counted, (mono_ns() - D->start_ns) / 1e9, why, sizeof(why)) > 0;
	if (zero && !D->tma_zero)
		warn_add("daemon: tmabpf_tma_ratio not exported: %s", why);
	else if (!zero && D->tma_zero)
		warn_add("daemon: every event of the TMA recipe counts now: tmabpf_tma_ratio exported again");
	D->tma_zero = zero;
}
