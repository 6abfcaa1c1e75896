// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * churn - thread and process churn, for the daemon's soak test: many
 * short-lived threads (each touches a fresh page and spins briefly), forked
 * processes that start a few threads of their own and exit, and optionally
 * long-lived sleeping threads held for the whole run (to fill an LRU map).
 *
 *   churn [--threads N] [--procs P] [--hold H] [--seconds S] [--batch B]
 *     N  short threads in total, the forked processes' threads included (10000)
 *     P  processes forked, each running 4 threads (N includes them) (200)
 *     H  threads that sleep until the end (0)
 *     S  spread the churn over about S seconds (10)
 *     B  threads started at once (32)
 *
 * Output, one line: {"threads": T, "processes": P, "held": H, "seconds": S,
 *                    "faults": F, "cpu_ns": C}
 * (T counts every thread that ran, the held ones and the processes' included;
 * F and C: page faults (minor + major) and user + system time of this process
 * and its reaped children, getrusage(RUSAGE_SELF) + getrusage(RUSAGE_CHILDREN)
 * just before the line is printed).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROC_THREADS 4
#define MAX_BATCH 1024

static volatile int stop_holders;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "churn: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void *short_thread(void *arg)
{
	long page = sysconf(_SC_PAGESIZE);
	volatile char *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double end = now_s() + 50e-6;

	if (p != MAP_FAILED) {
		p[0] = 1;
		munmap((void *)p, page);
	}
	while (now_s() < end)
		;
	return arg;
}

static void *hold_thread(void *arg)
{
	while (!stop_holders)
		usleep(100 * 1000);
	return arg;
}

static void run_batch(int n)
{
	pthread_t th[MAX_BATCH];

	for (int i = 0; i < n; i++) {
		int r = pthread_create(&th[i], NULL, short_thread, NULL);

		if (r) {
			errno = r;
			die("pthread_create");
		}
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

static void fork_one(void)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (pid == 0) {
		run_batch(PROC_THREADS);
		_exit(0);
	}
	if (waitpid(pid, NULL, 0) < 0)
		die("waitpid");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 'n' }, { "procs", required_argument, NULL, 'p' },
		{ "hold", required_argument, NULL, 'H' },    { "seconds", required_argument, NULL, 's' },
		{ "batch", required_argument, NULL, 'b' },   { "help", no_argument, NULL, 'h' },
		{},
	};
	long threads = 10000, procs = 200, hold = 0, batch = 32;
	double seconds = 10, t0;
	pthread_t *holders;
	long done = 0, forked = 0;
	int c;

	while ((c = getopt_long(argc, argv, "n:p:H:s:b:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n': threads = atol(optarg); break;
		case 'p': procs = atol(optarg); break;
		case 'H': hold = atol(optarg); break;
		case 's': seconds = atof(optarg); break;
		case 'b': batch = atol(optarg); break;
		default:
			fprintf(stderr, "usage: churn [--threads N] [--procs P] [--hold H] [--seconds S] [--batch B]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (threads < 0 || procs < 0 || hold < 0 || batch < 1 || batch > MAX_BATCH || procs * PROC_THREADS > threads ||
	    !(seconds >= 0)) {
		fprintf(stderr, "churn: bad arguments (batch 1..%d, procs*%d <= threads)\n", MAX_BATCH, PROC_THREADS);
		return 2;
	}
	holders = calloc(hold ? hold : 1, sizeof(*holders));
	for (long i = 0; i < hold; i++) {
		pthread_attr_t a;

		pthread_attr_init(&a);
		pthread_attr_setstacksize(&a, 64 * 1024);
		if ((errno = pthread_create(&holders[i], &a, hold_thread, NULL)))
			die("pthread_create (hold)");
		pthread_attr_destroy(&a);
	}
	t0 = now_s();
	while (done < threads) {
		/* forks spread evenly among the batches */
		long n = threads - done < batch ? threads - done : batch;

		if (forked < procs && (double)forked / procs <= (double)done / threads) {
			fork_one();
			forked++;
			done += PROC_THREADS;
			continue;
		}
		run_batch((int)n);
		done += n;
		/* pace: about `seconds` in all */
		double behind = t0 + seconds * done / threads - now_s();
		if (behind > 0)
			usleep((useconds_t)(behind * 1e6));
	}
	stop_holders = 1;
	for (long i = 0; i < hold; i++)
		pthread_join(holders[i], NULL);
	struct rusage self, kids;

	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	printf("{\"threads\": %ld, \"processes\": %ld, \"held\": %ld, \"seconds\": %.3f, \"faults\": %ld, "
	       "\"cpu_ns\": %lld}\n", done + hold, forked, hold, now_s() - t0,
	       self.ru_minflt + self.ru_majflt + kids.ru_minflt + kids.ru_majflt,
	       (long long)(self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec + kids.ru_stime.tv_sec) *
			       1000000000LL +
		       (long long)(self.ru_utime.tv_usec + self.ru_stime.tv_usec + kids.ru_utime.tv_usec +
				   kids.ru_stime.tv_usec) * 1000LL);
	return 0;
}
