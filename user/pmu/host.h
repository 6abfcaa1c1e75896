/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What machine we run on: kernel, CPU model, CPU count, PMU presence, privileges. */
#ifndef TMABPF_HOST_H
#define TMABPF_HOST_H
#include <stdbool.h>
#include <stddef.h>

struct host_info {
	char kernel[128];	/* uname -r */
	char cpu[160];		/* /proc/cpuinfo model name */
	int ncpus;		/* possible CPUs (map sizing) */
	int ncpus_online;
	bool pmu;		/* a core hardware PMU is registered */
	char pmu_why[256];	/* why not / which one */
};

void host_info_read(struct host_info *h);
/* 0 when we may load BPF and open system-wide perf events; else -EPERM and a one-line reason. */
int host_check_privilege(char *err, size_t errlen);
/* Reason from dmesg-style sources for a missing PMU, best effort (e.g. "no PMU driver for family 6 model 167"). */
void host_pmu_reason(char *buf, size_t len);

#endif
