/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What every loader does with libbpf: its log, load errors with their likely
 * cause, ring buffer sizes, kernel BPF run-time stats, per-CPU stat slots. */
#ifndef TMABPF_BPF_UTIL_H
#define TMABPF_BPF_UTIL_H
#include <stdbool.h>
#include <stddef.h>

struct bpf_object;
struct bpf_program;

/* libbpf's own log on stderr only with --verbose: our one-line errors say what failed. */
void bpf_log_init(bool verbose);
/* What a loader needs told apart in its errors. */
struct bpf_hints {
	const char *lacks;	/* cause of -ENOENT and -ESRCH: what the kernel lacks; NULL: libbpf's log */
	bool einval_lacks;	/* -EINVAL too */
	const char *size_opt;	/* the option that sizes the maps (-E2BIG, -ENOMEM) */
};

/* The sampling features' maps, sized by --max-sample-stacks. */
static const struct bpf_hints stacks_hints = { .size_opt = "--max-sample-stacks" };

/* "what: strerror (the likely cause and fix)" into buf; returns err (a negative errno). */
int bpf_load_error(int err, char *buf, size_t len, const char *what, const struct bpf_hints *h);
/* A ring buffer on map_fd calling fn(ctx, ...); NULL with "creating the WHAT ring buffer: ..." in err. */
struct ring_buffer;
struct ring_buffer *ringbuf_open(int map_fd, int (*fn)(void *ctx, void *data, size_t size), void *ctx,
				 const char *what, char *err, size_t errlen);
/* kernel.bpf_stats_enabled is 1 (an administrator turned the stats on for everyone). */
bool bpf_stats_sysctl_on(void);
/* Turn on kernel BPF run-time stats (needs CAP_SYS_ADMIN): the fd that keeps them on, or -1;
 * *on: they are on (ours, or kernel.bpf_stats_enabled=1). */
int bpf_stats_enable(bool *on);
/* 0, or -ENOENT with err when the kernel has no BTF (/sys/kernel/btf/vmlinux): CO-RE needs it. */
int bpf_need_btf(char *err, size_t errlen);
/* A ring buffer's size for about `want` bytes: a power of two, 1 MiB to 256 MiB. */
unsigned int ringbuf_bytes(unsigned long want);
/* Add a program's kernel BPF stats (run time, runs) into *ns and *cnt (nothing when not loaded). */
void prog_run_stats_add(struct bpf_program *prog, unsigned long long *ns, unsigned long long *cnt);
/* The same for every loaded program of obj. */
void obj_run_stats_add(struct bpf_object *obj, unsigned long long *ns, unsigned long long *cnt);
/* Run an iter/ program (loaded) over every object once: attach, read to the end, close.  0 or -errno. */
int bpf_iter_run_once(struct bpf_program *prog);
/* Add slots [0, nslots) of a per-CPU u64 array (STAT_MAP), summed over CPUs, into out[]. */
void stat_map_sum(int fd, unsigned int nslots, unsigned long long *out);
/* Make the maps of obj named names[0..n) reuse those of the same names in from (obj not loaded yet):
 * 0, -ENOENT when one is missing on either side, or libbpf's error. */
int bpf_share_maps(struct bpf_object *from, struct bpf_object *obj, const char *const *names, size_t n);

#endif
