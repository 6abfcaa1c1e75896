// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * jitmap - runs code from an anonymous executable mapping and names it in
 * /tmp/perf-PID.map, as JIT compilers do (oneDNN with DNNL_JIT_PROFILE=1,
 * V8 --perf-basic-prof): a test of perf-map symbolization.
 *
 *   jitmap [--seconds S] [--delay-ms MS]
 *
 * It copies a small counting loop (machine code for x86-64 or arm64, with
 * a frame pointer) into an mmap'ed page, writes
 *   "<addr> <size> jit_spin_loop" and "<addr+64> 40 jit_never_called"
 * to /tmp/perf-PID.map, waits MS, then calls the loop for S seconds from
 * jit_caller().  The map file is left behind, as V8 does; callers remove it.
 * Prints {"pid": P, "code": "0x...", "calls": N} at the end.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
static const unsigned char code[] = {
	0x55,			/* push %rbp */
	0x48, 0x89, 0xe5,	/* mov %rsp,%rbp */
	0x48, 0x89, 0xf8,	/* mov %rdi,%rax */
	0x48, 0xff, 0xc8,	/* 1: dec %rax */
	0x75, 0xfb,		/* jne 1b */
	0x5d,			/* pop %rbp */
	0xc3,			/* ret */
};
#elif defined(__aarch64__)
static const uint32_t code[] = {
	0xa9bf7bfd,		/* stp x29, x30, [sp, #-16]! */
	0x910003fd,		/* mov x29, sp */
	0xf1000400,		/* 1: subs x0, x0, #1 */
	0x54ffffe1,		/* b.ne 1b */
	0xa8c17bfd,		/* ldp x29, x30, [sp], #16 */
	0xd65f03c0,		/* ret */
};
#else
#error "jitmap: no machine code for this architecture"
#endif

typedef uint64_t (*spin_fn)(uint64_t n);

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned long jit_caller(spin_fn f, double seconds)
{
	double end = now_s() + seconds;
	unsigned long calls = 0;

	while (now_s() < end) {
		f(2000000);
		calls++;
	}
	return calls;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, 's' }, { "delay-ms", required_argument, NULL, 'd' }, {},
	};
	double seconds = 3;
	int delay_ms = 0, c;
	char path[64];
	unsigned char *mem;
	unsigned long calls;
	FILE *f;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 's')
			seconds = atof(optarg);
		else if (c == 'd')
			delay_ms = atoi(optarg);
		else
			return 2;
	}
	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	memcpy(mem, code, sizeof(code));
	__builtin___clear_cache((char *)mem, (char *)mem + sizeof(code));
	if (mprotect(mem, 4096, PROT_READ | PROT_EXEC))
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx %zx jit_spin_loop\n", (unsigned long)(uintptr_t)mem, sizeof(code));
	fprintf(f, "%lx 28 jit_never_called\n", (unsigned long)(uintptr_t)mem + 64);
	fclose(f);
	if (delay_ms)
		usleep((useconds_t)delay_ms * 1000);
	calls = jit_caller((spin_fn)(void *)mem, seconds);
	printf("{\"pid\": %d, \"code\": \"%#lx\", \"calls\": %lu}\n", getpid(), (unsigned long)(uintptr_t)mem, calls);
	return 0;
}
