// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Nested calls across two libraries and the program, for the one-window check
 * (tests/test_uprobe_window.py), built three times:
 *   -DPART_INNER  libwin_inner.so: win_inner(), a little arithmetic
 *   -DPART_OUTER  libwin_outer.so: win_outer(), WIN_CALLS calls of win_inner()
 *   (neither)     the program: THREADS threads (argv[1]) each call win_step() in a tight
 *                 loop, which calls win_outer() once; prints "ready" and runs until killed, or
 *                 for argv[2] seconds.
 * Ground truth: calls(win_outer) = calls(win_step), calls(win_inner) = WIN_CALLS * calls(win_outer).
 */
#define WIN_CALLS 16

#if defined(PART_INNER)
__attribute__((noinline)) void win_inner(volatile unsigned long *x)
{
	for (int i = 0; i < 20; i++)
		*x += i;
}
#elif defined(PART_OUTER)
void win_inner(volatile unsigned long *x);

__attribute__((noinline)) void win_outer(volatile unsigned long *x)
{
	for (int i = 0; i < WIN_CALLS; i++)
		win_inner(x);
}
#else
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void done(int sig)
{
	(void)sig;
	_exit(0);
}

void win_outer(volatile unsigned long *x);

__attribute__((noinline)) void win_step(volatile unsigned long *x)
{
	win_outer(x);
	__asm__ volatile("" ::: "memory");	/* not a tail call: win_step's frame stays */
}

static void *loop(void *arg)
{
	volatile unsigned long x = 0;

	(void)arg;
	for (;;)
		win_step(&x);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	pthread_t t;

	if (argc > 2) {
		signal(SIGALRM, done);
		alarm(atoi(argv[2]));
	}
	for (int i = 1; i < threads; i++)
		pthread_create(&t, NULL, loop, NULL);
	printf("ready %d\n", WIN_CALLS);
	fflush(stdout);
	loop(NULL);
	return 0;
}
#endif
