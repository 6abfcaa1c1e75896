// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Per-call cost of a uprobe pair by entry-instruction class, measured in this process.  See probe_calib.h. */
#include <errno.h>
#include <stdbool.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "collect/probe_calib.h"
#include "lib/clock.h"
#include "lib/warn.h"
#include "sym/procmaps.h"

#define CALLS 20000
/* A loop stops after CALIB_LOOP_NS: it runs in the middle of a profile (the hot-probe guard), and
 * 3 x 20000 single-stepped calls took 1-2 s of CPU on a 2-vCPU VM (13-37 us each), taken from the
 * target's CPUs: llama.cpp under 10 probes lost more tokens/s to it than to the probes. */
#define CALIB_LOOP_NS 10000000ull

#if defined(__x86_64__)
/* Exact entry instructions, whatever the compiler would emit: push %rbp (emulated), lea (single-stepped). */
__asm__(".text\n"
	".globl tmabpf_calib_emulated\n.type tmabpf_calib_emulated,@function\n"
	"tmabpf_calib_emulated:\n\tpush %rbp\n\tmov %rsp,%rbp\n\tlea 1(%rdi),%eax\n\tpop %rbp\n\tret\n"
	".size tmabpf_calib_emulated,.-tmabpf_calib_emulated\n"
	".globl tmabpf_calib_sstep\n.type tmabpf_calib_sstep,@function\n"
	"tmabpf_calib_sstep:\n\tlea 1(%rdi),%eax\n\tret\n"
	".size tmabpf_calib_sstep,.-tmabpf_calib_sstep\n");
int tmabpf_calib_emulated(int x);
int tmabpf_calib_sstep(int x);

static int read_int(const char *path, const char *fmt, int *out)
{
	FILE *f = fopen(path, "r");
	int ok = f && fscanf(f, fmt, out) == 1;

	if (f)
		fclose(f);
	return ok ? 0 : -ENOENT;
}


/* Best of 3 loops of CALLS calls or CALIB_LOOP_NS (the clock read every 64 calls), ns per call. */
static double per_call(int (*volatile fn)(int))
{
	double best = 1e18;

	for (int r = 0; r < 3; r++) {
		unsigned long long t0 = mono_ns();
		int acc = 0, i;

		for (i = 0; i < CALLS && (i % 64 || mono_ns() - t0 < CALIB_LOOP_NS); i++)
			acc += fn(i);
		__asm__ volatile("" : : "r"(acc));
		if ((double)(mono_ns() - t0) / i < best)
			best = (double)(mono_ns() - t0) / i;
	}
	return best;
}

/* File offset of a function of this binary. */
static int self_offset(void *fn, unsigned long *off)
{
	struct procmaps m;
	const struct procmaps_entry *e;

	if (procmaps_load(0, &m, NULL, 0))
		return -ENOENT;
	e = procmaps_find(&m, (uint64_t)(uintptr_t)fn);
	if (e)
		*off = procmaps_file_offset(e, (uint64_t)(uintptr_t)fn);
	procmaps_free(&m);
	return e ? 0 : -ENOENT;
}

static int open_probe(int type, int ret_bit, bool ret, unsigned long off)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = ret ? 1ULL << ret_bit : 0;
	a.config1 = (uint64_t)(uintptr_t)"/proc/self/exe";
	a.config2 = off;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

int probe_calib_measure(struct probe_calib *c, char *err, size_t errlen)
{
	int (*fns[2])(int) = { tmabpf_calib_emulated, tmabpf_calib_sstep };
	int type, ret_bit = 0;

	if (read_int("/sys/bus/event_source/devices/uprobe/type", "%d", &type)) {
		err_set(err, errlen, "no uprobe PMU (/sys/bus/event_source/devices/uprobe)");
		return -ENOENT;
	}
	read_int("/sys/bus/event_source/devices/uprobe/format/retprobe", "config:%d", &ret_bit);
	for (int k = 0; k < 2; k++) {
		unsigned long off;
		double plain, probed;
		int fd[2];

		if (self_offset((void *)fns[k], &off)) {
			err_set(err, errlen, "cannot find this binary's calibration function in its maps");
			return -ENOENT;
		}
		plain = per_call(fns[k]);
		fd[0] = open_probe(type, ret_bit, false, off);
		fd[1] = fd[0] >= 0 ? open_probe(type, ret_bit, true, off) : -1;
		if (fd[1] < 0) {
			int r = -errno;

			err_set(err, errlen, "opening a uprobe on this process: %s", strerror(-r));
			if (fd[0] >= 0)
				close(fd[0]);
			return r;
		}
		probed = per_call(fns[k]);
		close(fd[0]);
		close(fd[1]);
		c->ns[k] = probed > plain ? probed - plain : 0;
	}
	return 0;
}
#else
int probe_calib_measure(struct probe_calib *c, char *err, size_t errlen)
{
	err_set(err, errlen, "per-class probe costs are measured on x86-64 only");
	return -EOPNOTSUPP;
}
#endif
