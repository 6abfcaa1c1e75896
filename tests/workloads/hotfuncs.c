// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * hotfuncs - a CPU-bound workload with functions of known relative cost,
 * for checking sampling profilers (tmabpf --sample, perf record).
 *
 *   hotfuncs [--threads N] [--seconds S] [--delay-ms MS] [--out FILE] MODE
 *
 * Each of N threads (named "hf-0", "hf-1", ...) waits --delay-ms (so that
 * profilers can attach), then runs rounds of MODE for S seconds:
 *
 *   spin     hf_run -> hf_outer -> hf_middle -> hf_leaf   5 units
 *                      hf_outer -> hf_b                   3 units
 *            hf_run -> hf_c                               2 units
 *            one unit is about 0.1 ms of a dependent multiply-add chain, so
 *            a round is about 1 ms; hf_leaf, hf_b and hf_c do the work.
 *            Each round scales its units by a random 0.5-1.5: rounds of a
 *            fixed length beside a sampler of the same period (999 Hz) hit
 *            the same place of each round for seconds, which moved shares
 *            by up to 4.5 points from the ground truth, differently in each
 *            of two samplers running at once.
 *   sys      hf_sys: read() 64 KiB from /dev/zero: time in the kernel
 *   memset   hf_memset: memset() 256 KiB: libc's memset implementation,
 *            an IFUNC target with a local symbol (named from libc's debug
 *            file only)
 *   bench    hf_leaf rounds; prints the work rate (--seconds long), for
 *            overhead benchmarks
 *
 * Functions are global, noinline and have frame pointers, so stacks unwind
 * through them.  Ground truth: each call of a working function is timed
 * with CLOCK_THREAD_CPUTIME_ID by its caller (a round is long enough that
 * the clock reads cost < 0.1 %).  Output (stdout or --out), one JSON
 * object after the threads finish:
 *   {"pid": P, "mode": M, "seconds": S, "threads": [{"tid": T, "comm": C,
 *    "cpu_ns": total, "functions": {"hf_leaf": ns, ...}}],
 *    "units_per_s": work rate over wall time, "units_per_cpu_s": over the
 *    threads' CPU time (what preemption by other load does not change)}
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define UNIT_ITERS 50000
#define MAX_THREADS 64
#define NFUNCS 6

enum { F_LEAF, F_B, F_C, F_SYS, F_MEMSET, F_BENCH };
static const char *const fnames[NFUNCS] = { "hf_leaf", "hf_b", "hf_c", "hf_sys", "hf_memset", "hf_leaf" };

struct worker {
	pthread_t th;
	int idx;
	pid_t tid;
	char comm[16];
	long long cpu_ns;
	long long fn_ns[NFUNCS];
	unsigned long long units;
};

static const char *mode = "spin";
static double seconds = 5;
static int delay_ms;
static volatile uint64_t sink;

static long long now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* this round's scale of a unit, in thousandths (spin mode: random, see above) */
static __thread long unit_milli = 1000;

static uint64_t spin_units(int units, uint64_t x)
{
	for (long i = 0; i < (long)units * UNIT_ITERS * unit_milli / 1000; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

__attribute__((noinline)) uint64_t hf_leaf(int units, uint64_t x)
{
	return spin_units(units, x);
}

__attribute__((noinline)) uint64_t hf_middle(int units, uint64_t x)
{
	return hf_leaf(units, x) + 1;
}

__attribute__((noinline)) uint64_t hf_b(int units, uint64_t x)
{
	return spin_units(units, x ^ 0x5555);
}

__attribute__((noinline)) uint64_t hf_c(int units, uint64_t x)
{
	return spin_units(units, x ^ 0xaaaa);
}

/* hf_middle -> hf_leaf (5 units), then hf_b (3 units): each timed by its caller */
__attribute__((noinline)) uint64_t hf_outer(struct worker *w, uint64_t x)
{
	long long t0 = now_ns(CLOCK_THREAD_CPUTIME_ID), t1, t2;

	x = hf_middle(5, x);
	t1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	x = hf_b(3, x);
	t2 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	w->fn_ns[F_LEAF] += t1 - t0;
	w->fn_ns[F_B] += t2 - t1;
	return x;
}

__attribute__((noinline)) void hf_sys(int fd, char *buf, size_t len)
{
	if (read(fd, buf, len) < 0)
		abort();
}

__attribute__((noinline)) void hf_memset(char *buf, size_t len, int round)
{
	memset(buf, round & 0xff, len);
	__asm__ volatile("" : : "r"(buf) : "memory");
}

__attribute__((noinline)) void hf_run(struct worker *w)
{
	long long end = now_ns(CLOCK_MONOTONIC) + (long long)(seconds * 1e9), t0, t1;
	size_t len = strcmp(mode, "sys") ? 256 << 10 : 64 << 10;
	char *buf = malloc(len);
	int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	uint64_t x = (uint64_t)w->idx + 1;
	unsigned int seed = (unsigned int)w->idx * 2654435761u + 1;
	int round = 0;

	if (!buf || fd < 0)
		abort();
	memset(buf, 1, len);
	while (now_ns(CLOCK_MONOTONIC) < end) {
		t0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		if (!strcmp(mode, "spin")) {
			unit_milli = 500 + (long)(rand_r(&seed) % 1001);
			x = hf_outer(w, x);
			t0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
			x = hf_c(2, x);
			t1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
			w->fn_ns[F_C] += t1 - t0;
			w->units += 10 * unit_milli / 1000;
			continue;
		}
		if (!strcmp(mode, "sys")) {
			hf_sys(fd, buf, len);
			t1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
			w->fn_ns[F_SYS] += t1 - t0;
		} else if (!strcmp(mode, "memset")) {
			hf_memset(buf, len, round++);
			t1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
			w->fn_ns[F_MEMSET] += t1 - t0;
		} else {
			x = hf_leaf(10, x);
			t1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
			w->fn_ns[F_BENCH] += t1 - t0;
		}
		w->units += 10;
	}
	sink += x;
	close(fd);
	free(buf);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	long long c0;

	w->tid = (pid_t)gettid();
	snprintf(w->comm, sizeof(w->comm), "hf-%d", w->idx);
	pthread_setname_np(pthread_self(), w->comm);
	if (delay_ms)
		usleep((useconds_t)delay_ms * 1000);
	c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	hf_run(w);
	w->cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: hotfuncs [--threads N] [--seconds S] [--delay-ms MS] [--out FILE] "
			"spin|sys|memset|bench\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 't' }, { "seconds", required_argument, NULL, 's' },
		{ "delay-ms", required_argument, NULL, 'd' }, { "out", required_argument, NULL, 'o' }, {},
	};
	static struct worker w[MAX_THREADS];
	const char *out = NULL;
	unsigned long long units = 0;
	long long t0, wall, cpu = 0;
	int nthreads = 1, c;
	FILE *f = stdout;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't': nthreads = atoi(optarg); break;
		case 's': seconds = atof(optarg); break;
		case 'd': delay_ms = atoi(optarg); break;
		case 'o': out = optarg; break;
		default: usage();
		}
	}
	if (optind < argc)
		mode = argv[optind];
	if (nthreads < 1 || nthreads > MAX_THREADS || !(seconds > 0) ||
	    (strcmp(mode, "spin") && strcmp(mode, "sys") && strcmp(mode, "memset") && strcmp(mode, "bench")))
		usage();
	t0 = now_ns(CLOCK_MONOTONIC);
	for (int i = 0; i < nthreads; i++) {
		w[i].idx = i;
		if (pthread_create(&w[i].th, NULL, worker_main, &w[i]))
			return 1;
	}
	for (int i = 0; i < nthreads; i++) {
		pthread_join(w[i].th, NULL);
		units += w[i].units;
		cpu += w[i].cpu_ns;
	}
	wall = now_ns(CLOCK_MONOTONIC) - t0 - (long long)delay_ms * 1000000;
	if (out && !(f = fopen(out, "w"))) {
		fprintf(stderr, "hotfuncs: %s: %s\n", out, strerror(errno));
		return 1;
	}
	fprintf(f, "{\"pid\": %d, \"mode\": \"%s\", \"seconds\": %g, \"units_per_s\": %.1f, \"units_per_cpu_s\": %.1f, "
		"\"threads\": [", getpid(), mode, seconds, wall > 0 ? units * 1e9 / wall : 0.0,
		cpu > 0 ? units * 1e9 / cpu : 0.0);
	for (int i = 0; i < nthreads; i++) {
		fprintf(f, "%s{\"tid\": %d, \"comm\": \"%s\", \"cpu_ns\": %lld, \"functions\": {", i ? ", " : "", w[i].tid,
			w[i].comm, w[i].cpu_ns);
		for (int k = 0, first = 1; k < NFUNCS; k++) {
			if (!w[i].fn_ns[k])
				continue;
			fprintf(f, "%s\"%s\": %lld", first ? "" : ", ", fnames[k], w[i].fn_ns[k]);
			first = 0;
		}
		fprintf(f, "}}");
	}
	fprintf(f, "]}\n");
	if (f != stdout)
		fclose(f);
	return 0;
}
