// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * perstep - a step loop with known truth, for --per-call.  step() is the
 * marker: each call of it from main() is one iteration.  Modes:
 *
 *   barrier  main and one worker meet at a spin barrier twice per step; in
 *            between main computes --work-us of CPU time, the worker
 *            --worker-us, then waits spinning in spin_wait() for main.  Both
 *            measure their CPU time in spin_wait() and in total over the
 *            steps (CLOCK_THREAD_CPUTIME_ID): the true spin share.  Each
 *            step scales both computes by a random 0.5-1.5: steps of a
 *            fixed 2.5 ms beside a 999 Hz sampler put its samples at the
 *            same two places of every step (the sampled share was off by
 *            4 points in 1 run of 9).
 *   nested   step() calls itself --depth times (outermost counts).
 *   threads  --threads threads each call step() --steps times.
 *   driver   step() calls the driver library (--driver PATH, dlopen'd):
 *            cuLaunchKernel --launches times, cuMemcpyHtoD_v2 twice,
 *            cuStreamSynchronize once.
 *   sleep    step() sleeps --sleep-ms; "done N" on stdout after each.
 *   never    computes without calling step().
 *   exit     a worker thread computes --worker-us of CPU time and exits inside
 *            each step: on even steps it is started before step() (it is in
 *            the entry's snapshot, gone at the return), on odd ones inside it
 *            (in neither); step() computes --work-us and joins it.  Prints
 *            the workers' CPU time (CLOCK_THREAD_CPUTIME_ID at their end).
 *   pool     step() hands the work to a worker thread through a pipe and waits
 *            (blocked) for it: the worker writes --pages fresh pages (one
 *            page fault each, no huge pages) per step.  The window's faults
 *            are the worker's, none the calling thread's.
 *   alternate step() computes in work_even() on even steps (--work-us of
 *            wall time) and in work_odd() on odd ones (three times as
 *            long), with no system call in the loop: a sampled window's
 *            top function is known.
 *
 * Output: one JSON line: mode, steps, threads, per-thread spin_ns and
 * cpu_ns (barrier), spin_share.
 */
#include <dlfcn.h>
#include <sys/mman.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *mode = "barrier";
static int steps = 200, nthreads = 2, depth = 3, launches = 7, sleep_ms = 100, pages = 256;
static long work_us = 2000, worker_us = 500;
static const char *driver;

static int (*cu_launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,
			void **);
static int (*cu_sync)(void *);
static int (*cu_memcpy)(unsigned long long, const void *, size_t);

static unsigned long long cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1000000000ull + t.tv_nsec;
}

static volatile double sink;

/* Compute until the thread has used us of CPU time. */
static void compute(long us)
{
	unsigned long long end = cpu_ns() + us * 1000ull;
	double x = 1.0;

	while (cpu_ns() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 1.0000001 + 0.5;
	sink = x;
}

/* The spin barrier of the barrier mode. */
static atomic_int arrived, generation;
static unsigned long long spin_total[2], cpu_total[2];

__attribute__((noinline)) void spin_wait(atomic_int *gen, int seen)
{
	while (atomic_load_explicit(gen, memory_order_acquire) == seen)
		__builtin_ia32_pause();
}

static void barrier(int self)
{
	int g = atomic_load(&generation);

	if (atomic_fetch_add(&arrived, 1) == 1) {
		atomic_store(&arrived, 0);
		atomic_fetch_add(&generation, 1);
	} else {
		unsigned long long t0 = cpu_ns();

		spin_wait(&generation, g);
		spin_total[self] += cpu_ns() - t0;
	}
}

/* us scaled by a random 0.5-1.5 (the barrier mode's jitter) */
static long jitter(long us, unsigned int *seed)
{
	return us / 2 + (long)(rand_r(seed) % (unsigned int)(us + 1));
}

static unsigned long long mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);	/* vDSO: no system call */
	return t.tv_sec * 1000000000ull + t.tv_nsec;
}

/* Compute for us of wall time, reading the clock every ~100 us only. */
static inline __attribute__((always_inline)) void compute_wall(long us)
{
	unsigned long long end = mono_ns() + us * 1000ull;
	double x = 1.0;

	while (mono_ns() < end)
		for (int i = 0; i < 50000; i++)
			x = x * 1.0000001 + 0.5;
	sink = x;
}

__attribute__((noinline, noipa)) void work_even(long us)
{
	compute_wall(us);
}

__attribute__((noinline, noipa)) void work_odd(long us)
{
	compute_wall(3 * us);
}

/* The pool mode's worker: --pages page faults per request. */
static int pool_go[2], pool_done[2];

__attribute__((noinline)) void fault_pages(long n)
{
	char *p = mmap(NULL, n * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	madvise(p, n * 4096, MADV_NOHUGEPAGE);
	for (long i = 0; i < n; i++)
		((volatile char *)p)[i * 4096] = 1;
	munmap(p, n * 4096);
}

static void *pool_worker(void *arg)
{
	char c;

	while (read(pool_go[0], &c, 1) == 1 && c == 'g') {
		fault_pages(pages);
		if (write(pool_done[1], "d", 1) != 1)
			break;
	}
	return NULL;
}

/* The exit mode's worker. */
static pthread_t exit_th;
static unsigned long long exit_cpu_total;

static void *exit_worker(void *arg)
{
	compute(worker_us);
	__atomic_add_fetch(&exit_cpu_total, cpu_ns(), __ATOMIC_RELAXED);
	return NULL;
}

static void *barrier_worker(void *arg)
{
	unsigned long long t0 = cpu_ns();
	unsigned int seed = 2;

	for (int i = 0; i < steps; i++) {
		barrier(1);
		compute(jitter(worker_us, &seed));
		barrier(1);
	}
	cpu_total[1] = cpu_ns() - t0;
	return NULL;
}

__attribute__((noinline, noipa)) void step(int level)
{
	if (!strcmp(mode, "barrier")) {
		static unsigned int seed = 1;

		barrier(0);
		compute(jitter(work_us, &seed));
		barrier(0);
	} else if (!strcmp(mode, "nested")) {
		if (level + 1 < depth)
			step(level + 1);	/* not a tail call: the recursion stays */
		compute(work_us / depth);
	} else if (!strcmp(mode, "driver")) {
		char buf[64] = "";

		cu_memcpy(0, buf, sizeof(buf));
		for (int i = 0; i < launches; i++)
			cu_launch(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
		cu_memcpy(0, buf, sizeof(buf));
		cu_sync(NULL);
		compute(work_us);
	} else if (!strcmp(mode, "sleep")) {
		usleep(sleep_ms * 1000);
	} else if (!strcmp(mode, "pool")) {
		char c;

		if (write(pool_go[1], "g", 1) != 1 || read(pool_done[0], &c, 1) != 1)
			exit(1);
	} else if (!strcmp(mode, "exit")) {
		static int n;

		if (n++ % 2 == 1)
			pthread_create(&exit_th, NULL, exit_worker, NULL);
		compute(work_us);
		pthread_join(exit_th, NULL);
	} else if (!strcmp(mode, "alternate")) {
		static int n;

		if (n++ % 2 == 0)
			work_even(work_us);
		else
			work_odd(work_us);
	} else {
		compute(work_us);
	}
}

static void *step_thread(void *arg)
{
	for (int i = 0; i < steps; i++)
		step(0);
	return NULL;
}

static void load_driver(void)
{
	void *h = driver ? dlopen(driver, RTLD_NOW) : NULL;

	if (!h) {
		fprintf(stderr, "perstep: --driver: %s\n", driver ? dlerror() : "missing");
		exit(2);
	}
	cu_launch = dlsym(h, "cuLaunchKernel");
	cu_sync = dlsym(h, "cuStreamSynchronize");
	cu_memcpy = dlsym(h, "cuMemcpyHtoD_v2");
	if (!cu_launch || !cu_sync || !cu_memcpy) {
		fprintf(stderr, "perstep: %s lacks the CUDA driver names\n", driver);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	pthread_t th[64];

	for (int i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];

		if (!strcmp(k, "--mode")) mode = v;
		else if (!strcmp(k, "--steps")) steps = atoi(v);
		else if (!strcmp(k, "--threads")) nthreads = atoi(v);
		else if (!strcmp(k, "--depth")) depth = atoi(v);
		else if (!strcmp(k, "--work-us")) work_us = atol(v);
		else if (!strcmp(k, "--worker-us")) worker_us = atol(v);
		else if (!strcmp(k, "--driver")) driver = v;
		else if (!strcmp(k, "--launches")) launches = atoi(v);
		else if (!strcmp(k, "--sleep-ms")) sleep_ms = atoi(v);
		else if (!strcmp(k, "--pages")) pages = atoi(v);
		else {
			fprintf(stderr, "perstep: unknown option %s\n", k);
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > 64)
		nthreads = 2;
	if (!strcmp(mode, "barrier")) {
		unsigned long long t0;

		pthread_create(&th[0], NULL, barrier_worker, NULL);
		t0 = cpu_ns();
		for (int i = 0; i < steps; i++)
			step(0);
		cpu_total[0] = cpu_ns() - t0;
		pthread_join(th[0], NULL);
		printf("{\"mode\": \"barrier\", \"steps\": %d, \"spin_ns\": [%llu, %llu], \"cpu_ns\": [%llu, %llu], "
		       "\"spin_share\": %.4f}\n", steps, spin_total[0], spin_total[1], cpu_total[0], cpu_total[1],
		       (double)(spin_total[0] + spin_total[1]) / (cpu_total[0] + cpu_total[1]));
		return 0;
	}
	if (!strcmp(mode, "threads")) {
		for (int t = 0; t < nthreads; t++)
			pthread_create(&th[t], NULL, step_thread, NULL);
		for (int t = 0; t < nthreads; t++)
			pthread_join(th[t], NULL);
	} else if (!strcmp(mode, "pool")) {
		if (pipe(pool_go) || pipe(pool_done))
			return 1;
		pthread_create(&th[0], NULL, pool_worker, NULL);
		for (int i = 0; i < steps; i++)
			step(0);
		if (write(pool_go[1], "q", 1) != 1)
			return 1;
		pthread_join(th[0], NULL);
	} else if (!strcmp(mode, "never")) {
		for (int i = 0; i < steps; i++)
			compute(work_us);
	} else {
		if (!strcmp(mode, "driver"))
			load_driver();
		for (int i = 0; i < steps; i++) {
			if (!strcmp(mode, "exit") && i % 2 == 0)
				pthread_create(&exit_th, NULL, exit_worker, NULL);
			step(0);
			if (!strcmp(mode, "sleep")) {
				printf("done %d\n", i + 1);
				fflush(stdout);
			}
		}
	}
	printf("{\"mode\": \"%s\", \"steps\": %d, \"threads\": %d, \"worker_cpu_ns\": %llu}\n", mode, steps, nthreads,
	       exit_cpu_total);
	return 0;
}
