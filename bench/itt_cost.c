// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * itt_cost: what an ITT span costs under --itt against a probed call under --uprobe, in one run.
 *
 *   itt_cost TMABPF COLLECTOR [ROUNDS]
 *
 * Each round runs this program as a child four times, N operations each, and takes the child's own
 * time of its loop: ITT spans (task_begin + task_end through COLLECTOR, loaded as an instrumented
 * library loads it: its __itt_api_init fills our table) alone and under `tmabpf --itt`, and calls
 * of a tiny function entered by push %rbp (the class the collector's nop hooks are in: emulated)
 * alone and under `tmabpf --uprobe ':bench_itt_call'`.  Prints the added ns per span and per call,
 * medians over rounds, and their ratio (issue 33's goal: a span costs at most two probed calls).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "itt/itt_abi.h"
#include "lib/clock.h"
#include "tests/workloads/asm_func.h"

#define OPS 100000

#if defined(__x86_64__)
ASM_FUNC_PUSH(bench_itt_call);
int bench_itt_call(int x);
#else
__attribute__((noinline, used)) int bench_itt_call(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}
#endif

typedef struct itt_domain *(*domain_create_fn)(const char *);
typedef struct itt_string_handle *(*string_create_fn)(const char *);
typedef void (*task_begin_fn)(const struct itt_domain *, struct itt_id, struct itt_id, struct itt_string_handle *);
typedef void (*task_end_fn)(const struct itt_domain *);

/* The child: N operations, prints the loop's ns. */
static int child(const char *what, long n, const char *collector)
{
	unsigned long long t0, t1;
	volatile int sink = 0;

	if (!strcmp(what, "spans")) {
		domain_create_fn domain_create = NULL;
		string_create_fn string_create = NULL;
		task_begin_fn begin = NULL;
		task_end_fn end = NULL;
		struct itt_api_info api[] = {
			{ "__itt_domain_create", (void **)&domain_create, NULL, NULL, 0 },
			{ "__itt_string_handle_create", (void **)&string_create, NULL, NULL, 0 },
			{ "__itt_task_begin", (void **)&begin, NULL, NULL, 0 },
			{ "__itt_task_end", (void **)&end, NULL, NULL, 0 },
			{ NULL, NULL, NULL, NULL, 0 },
		};
		struct itt_global g = { .api_list_ptr = api };
		void *lib = dlopen(collector, RTLD_NOW);
		void (*init)(struct itt_global *, int) = lib ? (void (*)(struct itt_global *, int))dlsym(lib, "__itt_api_init")
							     : NULL;
		struct itt_domain *d;
		struct itt_string_handle *h;

		if (!init) {
			fprintf(stderr, "itt_cost: %s: %s\n", collector, dlerror());
			return 1;
		}
		init(&g, 0);
		d = domain_create("bench");
		h = string_create("span");
		t0 = mono_ns();
		for (long i = 0; i < n; i++) {
			begin(d, (struct itt_id){ 0 }, (struct itt_id){ 0 }, h);
			end(d);
		}
		t1 = mono_ns();
	} else {
		t0 = mono_ns();
		for (long i = 0; i < n; i++)
			sink += bench_itt_call((int)i);
		t1 = mono_ns();
	}
	printf("%llu\n", t1 - t0);
	return sink == 42;
}

/* ns per operation of one child run, with the command's prefix (NULL: alone). */
static double run(const char *const *prefix, const char *self, const char *what, const char *collector)
{
	char n[32], buf[64] = "";
	const char *argv[24];
	int fds[2], k = 0, st;
	pid_t pid;
	FILE *f;

	snprintf(n, sizeof(n), "%d", OPS);
	for (; prefix && prefix[k]; k++)
		argv[k] = prefix[k];
	argv[k++] = self;
	argv[k++] = "--child";
	argv[k++] = what;
	argv[k++] = n;
	argv[k++] = collector;
	argv[k] = NULL;
	if (pipe(fds) || (pid = fork()) < 0)
		return -1;
	if (!pid) {
		dup2(fds[1], 1);
		close(fds[0]);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (!f || !fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	if (f)
		fclose(f);
	waitpid(pid, &st, 0);
	return buf[0] ? strtod(buf, NULL) / OPS : -1;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	char self[4096];
	ssize_t len;
	int rounds;
	double span[32], call[32], ratio[32];

	if (argc > 1 && !strcmp(argv[1], "--child"))	/* never the driver again: it forks children */
		return argc == 5 ? child(argv[2], atol(argv[3]), argv[4]) : 2;
	if (argc < 3 || argv[1][0] == '-') {
		fprintf(stderr, "usage: itt_cost TMABPF COLLECTOR [ROUNDS]\n");
		return 2;
	}
	rounds = argc > 3 ? atoi(argv[3]) : 5;
	if (rounds < 1 || rounds > 32)
		rounds = 5;
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[len > 0 ? len : 0] = 0;
	for (int r = 0; r < rounds; r++) {
		const char *itt[] = { argv[1], "--itt", "--quiet", "--", NULL };
		const char *up[] = { argv[1], "--uprobe", ":bench_itt_call", "--quiet", "--", NULL };
		double s0 = run(NULL, self, "spans", argv[2]), s1 = run(itt, self, "spans", argv[2]);
		double c0 = run(NULL, self, "calls", argv[2]), c1 = run(up, self, "calls", argv[2]);

		if (s0 < 0 || s1 < 0 || c0 < 0 || c1 < 0) {
			fprintf(stderr, "itt_cost: a run failed\n");
			return 1;
		}
		span[r] = s1 - s0;
		call[r] = c1 - c0;
		ratio[r] = call[r] > 0 ? span[r] / call[r] : 0;
		printf("round %d: span %.0f ns (alone %.1f), probed call %.0f ns (alone %.1f), span/call %.2f\n", r + 1,
		       span[r], s0, call[r], c0, ratio[r]);
	}
	qsort(span, rounds, sizeof(double), cmp);
	qsort(call, rounds, sizeof(double), cmp);
	qsort(ratio, rounds, sizeof(double), cmp);
	printf("added per span (--itt): %.0f ns; per probed call (--uprobe, emulated entry): %.0f ns; span/call %.2f "
	       "(%.2f .. %.2f; goal <= 2)\n", span[rounds / 2], call[rounds / 2], ratio[rounds / 2], ratio[0],
	       ratio[rounds - 1]);
	return 0;
}
