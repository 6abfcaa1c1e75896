// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* libbpf helpers every loader uses.  See bpf_util.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collect/bpf_util.h"
#include "lib/kernel_file.h"
#include "lib/warn.h"

static bool log_verbose;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return log_verbose ? vfprintf(stderr, fmt, ap) : 0;
}

void bpf_log_init(bool verbose)
{
	log_verbose = verbose;
	libbpf_set_print(libbpf_print);
}

/* What limits BPF map memory: since Linux 5.11 it is charged to the memory cgroup, not
 * RLIMIT_MEMLOCK.  "/sys/fs/cgroup/X/memory.max (now 67108864)", from /proc/self/cgroup. */
static void memcg_limit(char *out, size_t len)
{
	FILE *f = fopen("/proc/self/cgroup", "re"), *v;
	char line[2048], path[2200] = "", val[64] = "";
	bool v1 = false;

	snprintf(out, len, "the memory limit of tmabpf's cgroup (memory.max)");
	while (f && fgets(line, sizeof(line), f)) {
		char *m = strstr(line, ":memory:/");

		line[strcspn(line, "\n")] = 0;
		if (m) {	/* cgroup v1's memory controller */
			snprintf(path, sizeof(path), "/sys/fs/cgroup/memory%s/memory.limit_in_bytes", m + 8);
			v1 = true;
		} else if (!strncmp(line, "0::/", 4) && !v1) {
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.max", line + 3);
		}
	}
	if (f)
		fclose(f);
	if (!path[0])
		return;
	if ((v = fopen(path, "re"))) {
		if (fgets(val, sizeof(val), v))
			val[strcspn(val, "\n")] = 0;
		fclose(v);
	}
	snprintf(out, len, "%s (now %s)", path, val[0] ? val : "unreadable");
}

int bpf_load_error(int err, char *buf, size_t len, const char *what, const struct bpf_hints *h)
{
	bool lacks = h->lacks && (err == -ENOENT || err == -ESRCH || (h->einval_lacks && err == -EINVAL));

	if (err == -E2BIG || err == -ENOMEM) {
		char limit[2400];

		memcg_limit(limit, sizeof(limit));
		err_set(buf, len, "%s: %s (maps too large: %s%s%sraise %s: BPF memory is charged to the memory cgroup "
			"since Linux 5.11, RLIMIT_MEMLOCK does not apply)", what, strerror(-err), h->size_opt ? "lower " : "",
			h->size_opt ? h->size_opt : "", h->size_opt ? " or " : "", limit);
	} else {
		err_set(buf, len, "%s: %s (%s)", what, strerror(-err),
			err == -EPERM ? "need root or CAP_BPF+CAP_PERFMON" :
			err == -EACCES ? "the BPF verifier refused it: rerun with --verbose for libbpf's log" :
			lacks ? h->lacks : "rerun with --verbose for libbpf's log; see the kernel log");
	}
	return err;
}

struct ring_buffer *ringbuf_open(int map_fd, int (*fn)(void *ctx, void *data, size_t size), void *ctx,
				 const char *what, char *err, size_t errlen)
{
	struct ring_buffer *rb = ring_buffer__new(map_fd, fn, ctx, NULL);

	if (!rb)
		err_set(err, errlen, "creating the %s ring buffer: %s", what, strerror(errno));
	return rb;
}

/* BPF_ENABLE_STATS needs CAP_SYS_ADMIN; an administrator may have turned the
 * stats on for everyone instead (sysctl kernel.bpf_stats_enabled=1). */
bool bpf_stats_sysctl_on(void)
{
	return kernel_file_int("/proc/sys/kernel/bpf_stats_enabled", 0) == 1;
}

int bpf_stats_enable(bool *on)
{
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);	/* best effort; reported when missing */

	*on = fd >= 0 || bpf_stats_sysctl_on();
	return fd;
}

int bpf_need_btf(char *err, size_t errlen)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK) == 0)
		return 0;
	err_set(err, errlen, "kernel BTF missing (/sys/kernel/btf/vmlinux): tmabpf needs CONFIG_DEBUG_INFO_BTF=y");
	return -ENOENT;
}

unsigned int ringbuf_bytes(unsigned long want)
{
	unsigned int sz = 1u << 20;

	while (sz < want && sz < (1u << 28))
		sz <<= 1;
	return sz;
}

void prog_run_stats_add(struct bpf_program *prog, unsigned long long *ns, unsigned long long *cnt)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_program__fd(prog) >= 0 && bpf_prog_get_info_by_fd(bpf_program__fd(prog), &info, &len) == 0) {
		*ns += info.run_time_ns;
		*cnt += info.run_cnt;
	}
}

void obj_run_stats_add(struct bpf_object *obj, unsigned long long *ns, unsigned long long *cnt)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj)
		prog_run_stats_add(prog, ns, cnt);
}

void stat_map_sum(int fd, unsigned int nslots, unsigned long long *out)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *v = calloc(ncpu > 0 ? ncpu : 1, sizeof(*v));

	for (__u32 slot = 0; v && ncpu > 0 && slot < nslots; slot++)
		if (bpf_map_lookup_elem(fd, &slot, v) == 0)
			for (int c = 0; c < ncpu; c++)
				out[slot] += v[c];
	free(v);
}

int bpf_iter_run_once(struct bpf_program *prog)
{
	struct bpf_link *l = bpf_program__attach_iter(prog, NULL);
	char buf[64];
	int fd, r = 0;

	if (!l)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(l));
	if (fd < 0)
		r = -errno;
	else
		while ((r = read(fd, buf, sizeof(buf))) > 0)
			;
	if (r < 0)
		r = -errno;
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(l);
	return r;
}

int bpf_share_maps(struct bpf_object *from, struct bpf_object *obj, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct bpf_map *mine = bpf_object__find_map_by_name(obj, names[i]);
		struct bpf_map *theirs = bpf_object__find_map_by_name(from, names[i]);
		int r;

		if (!mine || !theirs)
			return -ENOENT;
		if ((r = bpf_map__reuse_fd(mine, bpf_map__fd(theirs))))
			return r;
	}
	return 0;
}
