/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Test helper: a perf_event uprobe at (path, file offset), to prove that an
 * offset really is where the kernel plants a probe. */
#ifndef TMABPF_TEST_UPROBE_OPEN_H
#define TMABPF_TEST_UPROBE_OPEN_H
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/perf_event.h>

/* The uprobe PMU's type, or -1 when the kernel has none. */
static __attribute__((unused)) int uprobe_pmu_type(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
	int t = -1;

	if (f) {
		if (fscanf(f, "%d", &t) != 1)
			t = -1;
		fclose(f);
	}
	return t;
}

/* A counting uprobe on (path, offset) for pid (0: self): fd, or -errno (-ENOENT: no uprobe PMU). */
static __attribute__((unused)) int uprobe_open(const char *path, uint64_t offset, pid_t pid)
{
	struct perf_event_attr attr;
	int type = uprobe_pmu_type(), fd;

	if (type < 0)
		return -ENOENT;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config1 = (uint64_t)(uintptr_t)path;	/* uprobe_path */
	attr.config2 = offset;				/* probe_offset */
	fd = syscall(__NR_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

#endif
