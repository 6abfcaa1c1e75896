/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Benchmarks: BPF run time of the programs a child tmabpf holds. */
#ifndef TMABPF_BENCH_CHILD_PROGS_H
#define TMABPF_BENCH_CHILD_PROGS_H
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

/* Sum the kernel BPF stats of the programs named in names (NULL-terminated;
 * names NULL: all of them) that process child holds, found through its fds
 * in /proc/PID/fdinfo, so that other tmabpf instances on the host do not
 * count.  A link and its
 * program both name the program's id: only program fds are counted. */
/* The file at /proc/PID/exe path is this program (or cannot be read). */
static inline bool same_exe(const char *path)
{
	char a[4096], b[4096];
	ssize_t n = readlink(path, a, sizeof(a) - 1), m = readlink("/proc/self/exe", b, sizeof(b) - 1);

	if (n <= 0 || m <= 0)
		return true;
	a[n] = b[m] = 0;
	return !strcmp(a, b);
}

static inline void child_prog_stats(pid_t child, const char *const *names, unsigned long long *ns,
				    unsigned long long *cnt)
{
	char dir[64], path[320], line[256];
	struct dirent *de;
	DIR *d;

	*ns = *cnt = 0;
	/* a child forked but not yet exec'd holds copies of this process's own program fds (the bench's
	 * baselines): counted, they made a peer that had not attached look as if it had fired */
	snprintf(path, sizeof(path), "/proc/%d/exe", child);
	if (same_exe(path))
		return;
	snprintf(dir, sizeof(dir), "/proc/%d/fdinfo", child);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		unsigned int id = 0;
		char target[64];
		ssize_t n;
		FILE *f;
		int fd;

		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "prog_id: %u", &id) == 1)
				break;
		if (f)
			fclose(f);
		snprintf(path, sizeof(path), "/proc/%d/fd/%s", child, de->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = 0;
		if (!id || !strstr(target, "bpf-prog") || (fd = bpf_prog_get_fd_by_id(id)) < 0)
			continue;
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (bpf_prog_get_info_by_fd(fd, &info, &len) == 0)
			for (const char *const *nm = names; !names || *nm; nm++)
				if (!names || !strcmp(info.name, *nm)) {
					*ns += info.run_time_ns;
					*cnt += info.run_cnt;
					break;
				}
		close(fd);
	}
	if (d)
		closedir(d);
}

#endif
