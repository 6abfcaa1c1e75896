// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * pingpong - two threads pass one byte back and forth over two pipes.
 *
 * Each round trip is: main writes to pipe A, peer reads it and writes to
 * pipe B, main reads it. Both threads block in read() each round, so a
 * round trip costs two voluntary context switches (exactly, when --pin
 * puts both threads on one CPU). Used to measure the overhead a
 * profiler's scheduler hooks add per context switch.
 *
 * Output, one line on stdout:
 *   roundtrips=N ns_per_roundtrip=X switches_per_roundtrip=S nvcsw_per_roundtrip=V nivcsw_per_roundtrip=I
 *   cpu_ns_per_roundtrip=C
 * or with --json:
 *   {"roundtrips": N, "pinned": B, "elapsed_ns": E, "ns_per_roundtrip": X,
 *    "switches_per_roundtrip": S, "nvcsw_per_roundtrip": V,
 *    "nivcsw_per_roundtrip": I, "nvcsw": ..., "nivcsw": ...}
 *   switches  = (voluntary + involuntary) context switches / round trip
 *   nvcsw     = voluntary context switches, getrusage(RUSAGE_SELF) delta
 *               over the timed loop (both threads)
 *   nivcsw    = involuntary ones
 *   cpu_ns    = user + system time of both threads per round trip,
 *               getrusage(RUSAGE_SELF): what the round trips cost in CPU,
 *               which other tenants of a shared box disturb less than time
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "lib/clock.h"

#define WARMUP_ROUNDTRIPS 1000

struct options {
	uint64_t roundtrips;
	bool pin, batch, json;
};

struct peer {
	int rfd, wfd;          /* peer reads rfd, writes wfd */
	uint64_t count;        /* round trips to serve (warm-up included) */
	int pin_cpu;           /* -1: not pinned */
	bool batch;            /* SCHED_BATCH */
};

__attribute__((noreturn, format(printf, 1, 2)))
static void fatal(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "pingpong: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}


static void pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fatal("pin to CPU %d: %s", cpu, strerror(errno));
}

/* SCHED_BATCH: a woken thread does not preempt the one that woke it */
static void set_batch(void)
{
	struct sched_param sp = { .sched_priority = 0 };

	if (sched_setscheduler(0, SCHED_BATCH, &sp))
		fatal("sched_setscheduler(SCHED_BATCH): %s", strerror(errno));
}

static int first_allowed_cpu(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		fatal("sched_getaffinity: %s", strerror(errno));
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			return c;
	fatal("no CPU allowed");
}

static void send_byte(int fd)
{
	char b = 'x';

	while (write(fd, &b, 1) != 1)
		if (errno != EINTR)
			fatal("write: %s", strerror(errno));
}

static void recv_byte(int fd)
{
	char b;
	ssize_t n;

	while ((n = read(fd, &b, 1)) != 1) {
		if (n == 0)
			fatal("read: unexpected end of pipe");
		if (errno != EINTR)
			fatal("read: %s", strerror(errno));
	}
}

static void *peer_main(void *arg)
{
	struct peer *p = arg;

	pthread_setname_np(pthread_self(), "pp-peer");
	if (p->pin_cpu >= 0)
		pin_self(p->pin_cpu);
	if (p->batch)
		set_batch();
	for (uint64_t i = 0; i < p->count; i++) {
		recv_byte(p->rfd);
		send_byte(p->wfd);
	}
	return NULL;
}

static void ping(int wfd, int rfd, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		send_byte(wfd);
		recv_byte(rfd);
	}
}

struct measurement {
	uint64_t elapsed_ns;
	uint64_t cpu_ns;	/* user + system time of both threads */
	long nvcsw, nivcsw;
};

static uint64_t tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000ULL + (uint64_t)tv->tv_usec * 1000ULL;
}

static void run(const struct options *o, struct measurement *m)
{
	int a[2], b[2];
	struct rusage r0, r1;
	struct peer peer;
	pthread_t th;
	uint64_t t0;
	int err;

	if (pipe(a) || pipe(b))
		fatal("pipe: %s", strerror(errno));
	peer = (struct peer){ .rfd = a[0], .wfd = b[1], .pin_cpu = -1,
			      .count = o->roundtrips + WARMUP_ROUNDTRIPS };
	if (o->pin) {
		peer.pin_cpu = first_allowed_cpu();
		pin_self(peer.pin_cpu);
	}
	peer.batch = o->batch;
	if (o->batch)
		set_batch();
	err = pthread_create(&th, NULL, peer_main, &peer);
	if (err)
		fatal("pthread_create: %s", strerror(err));

	ping(a[1], b[0], WARMUP_ROUNDTRIPS);
	getrusage(RUSAGE_SELF, &r0);
	t0 = mono_ns();
	ping(a[1], b[0], o->roundtrips);
	m->elapsed_ns = mono_ns() - t0;
	getrusage(RUSAGE_SELF, &r1);
	m->nvcsw = r1.ru_nvcsw - r0.ru_nvcsw;
	m->nivcsw = r1.ru_nivcsw - r0.ru_nivcsw;
	m->cpu_ns = tv_ns(&r1.ru_utime) + tv_ns(&r1.ru_stime) - tv_ns(&r0.ru_utime) - tv_ns(&r0.ru_stime);
	pthread_join(th, NULL);
}

static void print_result(const struct options *o, const struct measurement *m)
{
	double n = (double)o->roundtrips;
	double ns = (double)m->elapsed_ns / n;
	double vol = (double)m->nvcsw / n, invol = (double)m->nivcsw / n;

	if (o->json)
		printf("{\"roundtrips\": %llu, \"pinned\": %s, \"batch\": %s, "
		       "\"elapsed_ns\": %llu, "
		       "\"ns_per_roundtrip\": %.1f, \"switches_per_roundtrip\": %.3f, "
		       "\"nvcsw_per_roundtrip\": %.3f, \"nivcsw_per_roundtrip\": %.3f, "
		       "\"nvcsw\": %ld, \"nivcsw\": %ld, \"cpu_ns_per_roundtrip\": %.1f}\n",
		       (unsigned long long)o->roundtrips, o->pin ? "true" : "false",
		       o->batch ? "true" : "false",
		       (unsigned long long)m->elapsed_ns, ns, vol + invol, vol,
		       invol, m->nvcsw, m->nivcsw, (double)m->cpu_ns / n);
	else
		printf("roundtrips=%llu ns_per_roundtrip=%.1f "
		       "switches_per_roundtrip=%.3f nvcsw_per_roundtrip=%.3f "
		       "nivcsw_per_roundtrip=%.3f cpu_ns_per_roundtrip=%.1f\n",
		       (unsigned long long)o->roundtrips, ns, vol + invol, vol,
		       invol, (double)m->cpu_ns / n);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pingpong [-n|--roundtrips N] [--pin] [--batch] [--json]\n"
		"Two threads ping-pong one byte over two pipes N times (default\n"
		"200000, after %d warm-up round trips) and report the cost of a\n"
		"round trip and the context switches it caused.\n"
		"  -n, --roundtrips N  round trips to time (default 200000)\n"
		"  --pin               both threads on one CPU: 2 switches per round trip\n"
		"  --batch             SCHED_BATCH: no wakeup preemption, so with --pin\n"
		"                      both switches are voluntary (nvcsw 2 per round trip)\n"
		"  --json              print one JSON object\n"
		"  -h, --help          this help\n", WARMUP_ROUNDTRIPS);
}

__attribute__((noreturn, format(printf, 1, 2)))
static void bad_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "pingpong: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(pingpong --help for usage)\n");
	exit(2);
}

static uint64_t parse_count(const char *s)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < 1 || v > 1000000000ULL)
		bad_usage("--roundtrips: '%s' is not an integer in [1, 1000000000]", s);
	return v;
}

static void parse_cmdline(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "roundtrips", required_argument, NULL, 'n' },
		{ "pin", no_argument, NULL, 'p' },
		{ "batch", no_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;

	*o = (struct options){ .roundtrips = 200000 };
	while ((c = getopt_long(argc, argv, "n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': o->roundtrips = parse_count(optarg); break;
		case 'p': o->pin = true; break;
		case 'b': o->batch = true; break;
		case 'j': o->json = true; break;
		case 'h': usage(stdout); exit(0);
		default: bad_usage("bad option");
		}
	}
	if (optind < argc)
		bad_usage("unexpected argument '%s'", argv[optind]);
}

int main(int argc, char **argv)
{
	struct options o;
	struct measurement m;

	parse_cmdline(argc, argv, &o);
	run(&o, &m);
	print_result(&o, &m);
	return 0;
}
