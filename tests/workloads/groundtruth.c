// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * groundtruth - a workload whose true costs are known, used to check a
 * profiler's per-thread and per-function accounting.
 *
 * Every scenario runs in its own named thread. A thread does its setup
 * (name, CPU pinning, pre-faulting its stack, warming up the libc calls it
 * will make) BEFORE the start barrier, so that the measured "work window"
 * that follows contains only the scenario's own work. All threads pass the
 * barrier together once the main thread has finished --wait-signal and
 * --delay-ms. The main thread then only joins the workers and prints.
 *
 * Probed functions (global, never inlined or cloned, frame pointer set up,
 * so each begins with "push %rbp"): gt_fault_pages, gt_spin, gt_sleep,
 * gt_outer, gt_recurse, gt_migrate, gt_longjmp_outer, gt_longjmp_leaf.
 * None of them contains measurement code: every measurement is taken by the
 * caller around the call.
 *
 * Output: one JSON object (stdout, or --out FILE), printed after all
 * workers have finished:
 *
 *   pid, page_size, repeat, ncpus (CPUs allowed at start)
 *   process_minflt process_majflt process_cpu_ns
 *                          getrusage(RUSAGE_SELF) just before the JSON is
 *                          written: every thread's faults and user+system
 *                          time since the fork, exec and setup included
 *   threads[]: one per scenario thread
 *     tid, comm, scenario    thread id, its name, the scenario string
 *     pinned_cpu             CPU the thread was pinned to, or -1
 *     minflt majflt nvcsw nivcsw
 *                            getrusage(RUSAGE_THREAD) at the END of the work
 *                            window: absolute, i.e. counting the thread's
 *                            setup too
 *     minflt_start majflt_start nvcsw_start nivcsw_start
 *                            the same, at the START of the work window;
 *                            X - X_start is what the work itself cost
 *     utime_ns stime_ns      getrusage(RUSAGE_THREAD) user/system time at
 *                            the end (absolute, microsecond resolution)
 *     utime_start_ns stime_start_ns   the same at the start
 *     cpu_ns                 CLOCK_THREAD_CPUTIME_ID end - start of the work
 *     start_cpu_ns           CLOCK_THREAD_CPUTIME_ID (absolute) at the start
 *     wall_ns                CLOCK_MONOTONIC end - start of the work
 *     start_mono_ns end_mono_ns   CLOCK_MONOTONIC (absolute) at start / end
 *     migrations             gt_migrate calls that really changed CPU
 *     schedstat_run_ns schedstat_wait_ns   /proc/self/task/TID/schedstat's run time and
 *                            runqueue wait at the END of the work window (absolute; 0 when
 *                            the kernel has no schedstat); *_start_ns: at the START
 *     region {start, end}    region:PAGES only: the [start, end) it mapped (anonymous,
 *                            named "gt-region"; each page written once, in the work window)
 *     functions{NAME: {...}} one entry per probed function that ran:
 *       calls     times the function was entered (uprobe hits expected)
 *       returns   times it returned normally (uretprobe hits expected;
 *                 0 for gt_longjmp_leaf, which always longjmp()s out)
 *       cpu_ns    CLOCK_THREAD_CPUTIME_ID delta summed over the calls
 *       wall_ns   CLOCK_MONOTONIC delta summed over the calls
 *       minflt    getrusage(RUSAGE_THREAD) ru_minflt delta summed
 *       majflt    the same of ru_majflt (measured calls only): a fault the
 *                 kernel retried counts major (FAULT_FLAG_TRIED), and the
 *                 page-faults event counts it, so that event's truth is
 *                 minflt + majflt
 *       These are measured by the caller around each call, so they include
 *       one clock/getrusage call's worth of overhead (a few microseconds),
 *       never the probed function's own measurement code (it has none).
 *       "nominal": true marks a function that only ever ran nested inside
 *       another probed function ("nested_in"); it is not measured on its
 *       own: calls/returns are exact, cpu_ns is the requested spin time (a
 *       lower bound) for gt_spin/gt_longjmp_leaf, minflt is the exact
 *       page count for gt_fault_pages, and unknown values are null. The
 *       enclosing function's measured numbers include them.
 *       gt_recurse: calls counts every level; cpu_ns/wall_ns/minflt are
 *       measured around the outermost call only ("outermost_calls" of them)
 *       and so are inclusive of all levels.
 *
 * Page faults: the work window (minflt - minflt_start) holds exactly the
 * scenario's pages (PAGES x calls), nothing else. The setup before it
 * costs about 5 faults per thread (4 pre-faulted stack pages, 1 at thread
 * start; more for deep recursion), the first thread created 1-2 more (libc
 * pages). With uprobes attached, the first probe hit in the process maps
 * the kernel's uprobe XOL page: 1 extra fault for whichever thread that is.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif

#ifdef __clang__
#define GT_PROBED __attribute__((noinline, used))
#else
/*
 * noipa: no inlining, no cloning (.constprop/.isra), no IPA noreturn guess;
 * no-schedule-insns2: nothing scheduled ahead of "push %rbp"
 */
#define GT_PROBED __attribute__((noipa, used, optimize("no-schedule-insns2")))
#endif
/* placed after a call, keeps it from becoming a tail call (jmp) */
#define NO_TAILCALL() __asm__ __volatile__("" ::: "memory")

#define NSEC_PER_SEC 1000000000ULL
#define NSEC_PER_MSEC 1000000ULL
#define MAX_WORKERS 1024
#define MAX_DEPTH 10000
#define MAX_PAGES (1ULL << 22)
#define STACK_SIZE (8UL << 20)
/* stack touched before the work: a base, plus this much per recursion level */
#define STACK_PREFAULT_BASE (16UL << 10)
#define STACK_PREFAULT_PER_LEVEL 128UL
#define LONGJMP_DEFAULT_SPIN_NS (100 * 1000ULL)

static size_t g_page_size;

/* ------------------------------------------------------------------ */
/* helpers used by the probed functions (always inlined into them)     */

__attribute__((noreturn, format(printf, 1, 2)))
static void fatal(const char *fmt, ...);

static inline __attribute__((always_inline)) uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* pure user-mode work, a few microseconds per call */
static inline __attribute__((always_inline)) void burn(unsigned iters)
{
	uint64_t x = iters;

	for (unsigned i = 0; i < iters; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ __volatile__("" : "+r"(x));
	}
}

/* busy-wait until this thread has used @ns more CPU time */
static inline __attribute__((always_inline)) void spin_cpu(uint64_t ns)
{
	uint64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + ns;

	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		burn(2000);
}

static inline __attribute__((always_inline)) int other_cpu(const cpu_set_t *set,
							    int here)
{
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (c != here && CPU_ISSET(c, set))
			return c;
	return -1;
}

/* ------------------------------------------------------------------ */
/* probed functions                                                    */

/* exactly @n minor faults: one write to each of @n fresh anonymous pages */
GT_PROBED void gt_fault_pages(size_t n)
{
	size_t len = n * g_page_size;
	volatile char *p;

	if (n == 0)
		return;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		fatal("mmap %zu pages: %s", n, strerror(errno));
	if (madvise((void *)p, len, MADV_NOHUGEPAGE))
		fatal("madvise(MADV_NOHUGEPAGE): %s", strerror(errno));
	for (size_t i = 0; i < n; i++)
		p[i * g_page_size] = 1;
	munmap((void *)p, len);
}

GT_PROBED void gt_spin(uint64_t ns)
{
	spin_cpu(ns);
}

GT_PROBED void gt_sleep(uint64_t ns)
{
	struct timespec req = { .tv_sec = ns / NSEC_PER_SEC,
				.tv_nsec = ns % NSEC_PER_SEC };

	while (nanosleep(&req, &req) == -1 && errno == EINTR)
		;
}

/* nested case: both callees run inside gt_outer */
GT_PROBED void gt_outer(size_t pages, uint64_t spin_ns)
{
	gt_spin(spin_ns);
	gt_fault_pages(pages);
	NO_TAILCALL();
}

/* @depth nested frames of gt_recurse, each spinning @spin_ns itself */
GT_PROBED void gt_recurse(int depth, uint64_t spin_ns)
{
	if (depth < 1)
		return;
	spin_cpu(spin_ns);
	if (depth > 1)
		gt_recurse(depth - 1, spin_ns);
	NO_TAILCALL();
}

/*
 * Spin half of @spin_ns here, move to another allowed CPU, spin the other
 * half there, restore the affinity mask. cpus[0]/cpus[1]: the CPU before
 * and the CPU moved to (-1 when there was no other CPU to move to).
 */
GT_PROBED int gt_migrate(uint64_t spin_ns, int cpus[2])
{
	cpu_set_t orig, one;
	int there;

	if (sched_getaffinity(0, sizeof(orig), &orig))
		fatal("sched_getaffinity: %s", strerror(errno));
	spin_cpu(spin_ns / 2);
	cpus[0] = sched_getcpu();
	there = other_cpu(&orig, cpus[0]);
	cpus[1] = there;
	if (there >= 0) {
		CPU_ZERO(&one);
		CPU_SET(there, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			fatal("sched_setaffinity(%d): %s", there, strerror(errno));
	}
	spin_cpu(spin_ns - spin_ns / 2);
	if (there >= 0 && sched_setaffinity(0, sizeof(orig), &orig))
		fatal("sched_setaffinity(restore): %s", strerror(errno));
	NO_TAILCALL();
	return there;
}

/* never returns: jumps back into gt_longjmp_outer's setjmp */
GT_PROBED void gt_longjmp_leaf(jmp_buf *env, uint64_t spin_ns)
{
	spin_cpu(spin_ns);
	longjmp(*env, 1);
}

/* returns 1 once the leaf has longjmp()ed back */
GT_PROBED int gt_longjmp_outer(uint64_t spin_ns)
{
	jmp_buf env;

	if (setjmp(env) == 0) {
		gt_longjmp_leaf(&env, spin_ns);
		return 0;
	}
	return 1;
}

/* ------------------------------------------------------------------ */
/* measurement                                                         */

enum fn_id {
	FN_FAULT_PAGES, FN_SPIN, FN_SLEEP, FN_OUTER, FN_RECURSE, FN_MIGRATE,
	FN_LONGJMP_OUTER, FN_LONGJMP_LEAF, FN_COUNT
};

static const char *const fn_names[FN_COUNT] = {
	"gt_fault_pages", "gt_spin", "gt_sleep", "gt_outer", "gt_recurse",
	"gt_migrate", "gt_longjmp_outer", "gt_longjmp_leaf",
};

static void *const fn_addrs[FN_COUNT] = {
	(void *)gt_fault_pages, (void *)gt_spin, (void *)gt_sleep,
	(void *)gt_outer, (void *)gt_recurse, (void *)gt_migrate,
	(void *)gt_longjmp_outer, (void *)gt_longjmp_leaf,
};

struct fn_stat {
	uint64_t calls, returns, outermost_calls;
	uint64_t cpu_ns, wall_ns, minflt, majflt;
	bool has_majflt;
	bool nominal, has_cpu, has_wall, has_minflt;
	const char *nested_in;
};

struct sample {
	struct rusage ru;
	uint64_t cpu_ns, mono_ns;
	uint64_t sched_run_ns, sched_wait_ns;	/* the kernel's schedstat (worker windows only) */
};

/* order: cheapest-to-disturb clock closest to the measured code */
static void sample_begin(struct sample *s)
{
	getrusage(RUSAGE_THREAD, &s->ru);
	s->mono_ns = clock_ns(CLOCK_MONOTONIC);
	s->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static void sample_end(struct sample *s)
{
	s->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	s->mono_ns = clock_ns(CLOCK_MONOTONIC);
	getrusage(RUSAGE_THREAD, &s->ru);
}

static void stat_add_measured(struct fn_stat *f, const struct sample *a)
{
	struct sample b;

	sample_end(&b);
	f->calls++;
	f->returns++;
	f->outermost_calls++;
	f->cpu_ns += b.cpu_ns - a->cpu_ns;
	f->wall_ns += b.mono_ns - a->mono_ns;
	f->minflt += (uint64_t)(b.ru.ru_minflt - a->ru.ru_minflt);
	f->majflt += (uint64_t)(b.ru.ru_majflt - a->ru.ru_majflt);
	f->has_cpu = f->has_wall = f->has_minflt = f->has_majflt = true;
}

/* @call runs between two samples; the result goes to fn[@id] */
#define MEASURED(w, id, call)                                   \
	do {                                                    \
		struct sample s_;                               \
		sample_begin(&s_);                              \
		call;                                           \
		stat_add_measured(&(w)->res.fn[(id)], &s_);     \
	} while (0)

/* a call made inside another probed function: exact counts, nominal costs */
static struct fn_stat *stat_nested(struct fn_stat *f, const char *outer,
				   bool returns)
{
	f->nominal = true;
	f->nested_in = outer;
	f->calls++;
	f->outermost_calls++;
	if (returns)
		f->returns++;
	return f;
}

/* ------------------------------------------------------------------ */
/* scenarios                                                           */

struct worker;
typedef void (*run_fn)(struct worker *w);

enum arg_type { ARG_COUNT, ARG_MS };

struct scenario_kind {
	const char *name;
	const char *thread_name;  /* a number is appended if per_thread */
	int nargs;
	enum arg_type types[3];
	uint64_t defaults[3];     /* counts, or nanoseconds for ARG_MS */
	uint64_t max[3];
	const char *usage;
	run_fn run;
	bool per_thread;          /* multi, pinned-pair: one worker per thread */
};

struct thread_result {
	pid_t tid;
	int schedstat_fd;	/* /proc/self/task/TID/schedstat, opened in the setup; -1: none */
	char comm[16];
	struct sample start, end;
	struct fn_stat fn[FN_COUNT];
	uint64_t migrations;
	uint64_t region_start, region_end;	/* region:PAGES, else 0 */
};

struct worker {
	pthread_t thread;
	const struct scenario_kind *kind;
	uint64_t arg[3];
	char spec[64];
	char name[16];
	int pin_cpu;
	size_t stack_prefault;
	struct thread_result res;
};

static unsigned g_repeat = 1;
static pthread_barrier_t g_start;

static void run_fault(struct worker *w)
{
	for (unsigned r = 0; r < g_repeat; r++)
		MEASURED(w, FN_FAULT_PAGES, gt_fault_pages(w->arg[0]));
}

static void run_spin(struct worker *w)
{
	for (unsigned r = 0; r < g_repeat; r++)
		MEASURED(w, FN_SPIN, gt_spin(w->arg[0]));
}

/* N x (spin RUN of thread CPU time, sleep SLEEP): N blocked periods in the work window */
static void run_duty(struct worker *w)
{
	for (unsigned r = 0; r < g_repeat; r++)
		for (uint64_t i = 0; i < w->arg[0]; i++) {
			MEASURED(w, FN_SPIN, gt_spin(w->arg[1]));
			MEASURED(w, FN_SLEEP, gt_sleep(w->arg[2]));
		}
}

static void run_sleep(struct worker *w)
{
	for (unsigned r = 0; r < g_repeat; r++)
		MEASURED(w, FN_SLEEP, gt_sleep(w->arg[0]));
}

static void run_outer(struct worker *w)
{
	for (unsigned r = 0; r < g_repeat; r++) {
		struct fn_stat *f;

		MEASURED(w, FN_OUTER, gt_outer(w->arg[0], w->arg[1]));
		f = stat_nested(&w->res.fn[FN_SPIN], "gt_outer", true);
		f->cpu_ns += w->arg[1];
		f->has_cpu = f->has_minflt = true;	/* minflt: 0 */
		f = stat_nested(&w->res.fn[FN_FAULT_PAGES], "gt_outer", true);
		f->minflt += w->arg[0];
		f->has_minflt = true;
	}
}

static void run_recurse(struct worker *w)
{
	struct fn_stat *f = &w->res.fn[FN_RECURSE];

	for (unsigned r = 0; r < g_repeat; r++) {
		MEASURED(w, FN_RECURSE, gt_recurse((int)w->arg[0], w->arg[1]));
		f->calls += w->arg[0] - 1;
		f->returns += w->arg[0] - 1;
	}
}

static void run_migrate(struct worker *w)
{
	for (unsigned r = 0; r < g_repeat; r++) {
		int cpus[2], to;

		MEASURED(w, FN_MIGRATE, to = gt_migrate(w->arg[0], cpus));
		if (to >= 0 && cpus[0] != to)
			w->res.migrations++;
	}
}

static void run_longjmp(struct worker *w)
{
	uint64_t n = w->arg[0] * g_repeat;

	for (uint64_t i = 0; i < n; i++) {
		struct fn_stat *f;
		int back;

		MEASURED(w, FN_LONGJMP_OUTER, back = gt_longjmp_outer(w->arg[1]));
		if (back != 1)
			fatal("gt_longjmp_outer returned %d, expected 1", back);
		f = stat_nested(&w->res.fn[FN_LONGJMP_LEAF], "gt_longjmp_outer",
				false);
		f->cpu_ns += w->arg[1];
		f->has_cpu = true;
	}
}

/* region:PAGES: mmap an anonymous region named "gt-region" (no huge pages,
 * so that each page faults once) in the work window, write one byte to each
 * page once, keep it mapped until the process exits. */
static void run_region(struct worker *w)
{
	size_t len = w->arg[0] * (size_t)sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		fatal("region: mmap %zu bytes: %s", len, strerror(errno));
	prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, len, (unsigned long)"gt-region");
	madvise(p, len, MADV_NOHUGEPAGE);
	for (size_t off = 0; off < len; off += (size_t)sysconf(_SC_PAGESIZE))
		((volatile char *)p)[off] = 1;
	w->res.region_start = (uint64_t)(uintptr_t)p;
	w->res.region_end = (uint64_t)(uintptr_t)p + len;
}

/* arg[0] = thread count (used at parse time), arg[1] calls, arg[2] pages */
static void run_multi(struct worker *w)
{
	uint64_t n = w->arg[1] * g_repeat;

	for (uint64_t i = 0; i < n; i++)
		MEASURED(w, FN_FAULT_PAGES, gt_fault_pages(w->arg[2]));
}

#define MS(x) ((uint64_t)(x) * NSEC_PER_MSEC)
#define MAX_MS MS(3600 * 1000)

static const struct scenario_kind kinds[] = {
	{ "fault", "gt-fault", 1, { ARG_COUNT }, { 256 }, { MAX_PAGES },
	  "fault:PAGES          gt_fault_pages(PAGES)            [256]",
	  run_fault, false },
	{ "spin", "gt-spin", 1, { ARG_MS }, { MS(200) }, { MAX_MS },
	  "spin:MS              gt_spin(MS of thread CPU time)   [200]",
	  run_spin, false },
	{ "region", "gt-region", 1, { ARG_COUNT }, { 256 }, { MAX_PAGES },
	  "region:PAGES         mmap PAGES (named gt-region), write each page once, keep it mapped [256]",
	  run_region, false },
	{ "sleep", "gt-sleep", 1, { ARG_MS }, { MS(200) }, { MAX_MS },
	  "sleep:MS             gt_sleep(MS)                     [200]",
	  run_sleep, false },
	{ "duty", "gt-duty", 3, { ARG_COUNT, ARG_MS, ARG_MS }, { 10, MS(20), MS(30) },
	  { 100000000, MAX_MS, MAX_MS },
	  "duty:N:RUN:SLEEP     N x (gt_spin(RUN ms), gt_sleep(SLEEP ms)) [10:20:30]",
	  run_duty, false },
	{ "pinned-pair", "gt-pin", 1, { ARG_MS }, { MS(200) }, { MAX_MS },
	  "pinned-pair:MS       threads gt-pin0/1 on one CPU, each gt_spin(MS) [200]",
	  run_spin, true },
	{ "outer", "gt-outer", 2, { ARG_COUNT, ARG_MS }, { 128, MS(100) },
	  { MAX_PAGES, MAX_MS },
	  "outer:PAGES:MS       gt_outer -> gt_spin(MS), gt_fault_pages(PAGES) [128:100]",
	  run_outer, false },
	{ "recurse", "gt-recurse", 2, { ARG_COUNT, ARG_MS }, { 8, MS(10) },
	  { MAX_DEPTH, MAX_MS },
	  "recurse:DEPTH:MS     gt_recurse DEPTH levels, MS spin per level [8:10]",
	  run_recurse, false },
	{ "migrate", "gt-migrate", 1, { ARG_MS }, { MS(200) }, { MAX_MS },
	  "migrate:MS           gt_migrate: MS/2 here, MS/2 on the other CPU [200]",
	  run_migrate, false },
	{ "longjmp", "gt-longjmp", 2, { ARG_COUNT, ARG_MS },
	  { 100, LONGJMP_DEFAULT_SPIN_NS }, { 100000000, MAX_MS },
	  "longjmp:COUNT[:MS]   COUNT x gt_longjmp_outer -> gt_longjmp_leaf\n"
	  "                       (spins MS, longjmp()s out)     [100:0.1]",
	  run_longjmp, false },
	{ "multi", "gt-multi", 3, { ARG_COUNT, ARG_COUNT, ARG_COUNT },
	  { 4, 16, 64 }, { 256, 100000000, MAX_PAGES },
	  "multi:THREADS:CALLS:PAGES  threads gt-multi<i>, each CALLS x\n"
	  "                       gt_fault_pages(PAGES)          [4:16:64]",
	  run_multi, true },
};

#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

/* ------------------------------------------------------------------ */
/* worker threads                                                      */

static void fatal(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "groundtruth: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* touch the stack the work will use, so it does not fault later */
static __attribute__((noinline)) void prefault_stack(size_t bytes)
{
	volatile char buf[bytes];

	for (size_t i = 0; i < bytes; i += 256)
		buf[i] = 0;
	(void)buf[0];
}

/* map the probed functions' code pages without calling them */
static void prefault_text(void)
{
	for (int i = 0; i < FN_COUNT; i++)
		(void)*(volatile const char *)fn_addrs[i];
}

/* make the libc calls the work makes once, outside the work window */
static void warm_up_libc(void)
{
	struct timespec zero = { 0, 0 };
	struct sample s;
	cpu_set_t set;
	jmp_buf env;
	void *p;

	p = mmap(NULL, g_page_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		fatal("mmap: %s", strerror(errno));
	madvise(p, g_page_size, MADV_NOHUGEPAGE);
	munmap(p, g_page_size);
	sample_begin(&s);
	sample_end(&s);
	nanosleep(&zero, NULL);
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		sched_setaffinity(0, sizeof(set), &set);
	(void)sched_getcpu();
	if (setjmp(env) == 0)
		longjmp(env, 1);
}

static void pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fatal("pin to CPU %d: %s", cpu, strerror(errno));
}

static void worker_setup(struct worker *w)
{
	memset(&w->res, 0, sizeof(w->res));
	w->res.tid = gettid();
	{
		char path[64];

		snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", (int)w->res.tid);
		w->res.schedstat_fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (pthread_setname_np(pthread_self(), w->name))
		fatal("pthread_setname_np(%s) failed", w->name);
	pthread_getname_np(pthread_self(), w->res.comm, sizeof(w->res.comm));
	if (w->pin_cpu >= 0)
		pin_self(w->pin_cpu);
	prefault_stack(w->stack_prefault);
	prefault_text();
	warm_up_libc();
}

/* The kernel's run and runqueue-wait times of the calling thread, after a CLOCK_THREAD_CPUTIME_ID read
 * (sample_*) brought its runtime up to date: a pread of the file opened in the setup, nothing that blocks.
 * Zeros when the kernel has no schedstat. */
static void read_schedstat(int fd, struct sample *s)
{
	char buf[96];
	ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;
	unsigned long long run = 0, wait = 0;

	if (n > 0) {
		buf[n] = 0;
		sscanf(buf, "%llu %llu", &run, &wait);
	}
	s->sched_run_ns = run;
	s->sched_wait_ns = wait;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	worker_setup(w);
	pthread_barrier_wait(&g_start);
	sample_begin(&w->res.start);
	read_schedstat(w->res.schedstat_fd, &w->res.start);
	w->kind->run(w);
	sample_end(&w->res.end);
	read_schedstat(w->res.schedstat_fd, &w->res.end);
	return NULL;
}

static void start_workers(struct worker *ws, int n)
{
	pthread_attr_t attr;
	int err;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STACK_SIZE);
	for (int i = 0; i < n; i++) {
		err = pthread_create(&ws[i].thread, &attr, worker_main, &ws[i]);
		if (err)
			fatal("pthread_create: %s", strerror(err));
	}
	pthread_attr_destroy(&attr);
}

/* ------------------------------------------------------------------ */
/* JSON output                                                         */

static uint64_t tv_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * NSEC_PER_SEC + (uint64_t)tv.tv_usec * 1000;
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_opt_u64(FILE *f, const char *key, bool has, uint64_t v)
{
	if (has)
		fprintf(f, ", \"%s\": %llu", key, (unsigned long long)v);
	else
		fprintf(f, ", \"%s\": null", key);
}

static void json_fn_stat(FILE *f, const char *name, const struct fn_stat *s)
{
	json_string(f, name);
	fprintf(f, ": {\"calls\": %llu, \"returns\": %llu",
		(unsigned long long)s->calls, (unsigned long long)s->returns);
	json_opt_u64(f, "cpu_ns", s->has_cpu, s->cpu_ns);
	json_opt_u64(f, "wall_ns", s->has_wall, s->wall_ns);
	json_opt_u64(f, "minflt", s->has_minflt, s->minflt);
	if (s->has_majflt)
		fprintf(f, ", \"majflt\": %llu", (unsigned long long)s->majflt);
	if (s->outermost_calls != s->calls)
		fprintf(f, ", \"outermost_calls\": %llu",
			(unsigned long long)s->outermost_calls);
	if (s->nominal) {
		fprintf(f, ", \"nominal\": true, \"nested_in\": ");
		json_string(f, s->nested_in);
	}
	fputc('}', f);
}

static void json_functions(FILE *f, const struct thread_result *r)
{
	bool first = true;

	fprintf(f, "\"functions\": {");
	for (int i = 0; i < FN_COUNT; i++) {
		if (!r->fn[i].calls)
			continue;
		fprintf(f, first ? "" : ", ");
		json_fn_stat(f, fn_names[i], &r->fn[i]);
		first = false;
	}
	fputc('}', f);
}

/* "key": value at the end, "key_start": value at the start */
static void json_ru_pair(FILE *f, const char *key, long start, long end)
{
	fprintf(f, "\"%s\": %ld, \"%s_start\": %ld, ", key, end, key, start);
}

static void json_thread(FILE *f, const struct worker *w)
{
	const struct thread_result *r = &w->res;
	const struct rusage *a = &r->start.ru, *b = &r->end.ru;

	fprintf(f, "{\"tid\": %d, \"comm\": ", (int)r->tid);
	json_string(f, r->comm);
	fprintf(f, ", \"scenario\": ");
	json_string(f, w->spec);
	fprintf(f, ", \"pinned_cpu\": %d, ", w->pin_cpu);
	json_ru_pair(f, "minflt", a->ru_minflt, b->ru_minflt);
	json_ru_pair(f, "majflt", a->ru_majflt, b->ru_majflt);
	json_ru_pair(f, "nvcsw", a->ru_nvcsw, b->ru_nvcsw);
	json_ru_pair(f, "nivcsw", a->ru_nivcsw, b->ru_nivcsw);
	fprintf(f, "\"utime_ns\": %llu, \"utime_start_ns\": %llu, "
		"\"stime_ns\": %llu, \"stime_start_ns\": %llu, ",
		(unsigned long long)tv_ns(b->ru_utime),
		(unsigned long long)tv_ns(a->ru_utime),
		(unsigned long long)tv_ns(b->ru_stime),
		(unsigned long long)tv_ns(a->ru_stime));
	fprintf(f, "\"cpu_ns\": %llu, \"start_cpu_ns\": %llu, "
		"\"wall_ns\": %llu, \"start_mono_ns\": %llu, \"end_mono_ns\": %llu, "
		"\"migrations\": %llu, ",
		(unsigned long long)(r->end.cpu_ns - r->start.cpu_ns),
		(unsigned long long)r->start.cpu_ns,
		(unsigned long long)(r->end.mono_ns - r->start.mono_ns),
		(unsigned long long)r->start.mono_ns,
		(unsigned long long)r->end.mono_ns,
		(unsigned long long)r->migrations);
	fprintf(f, "\"schedstat_run_ns\": %llu, \"schedstat_run_start_ns\": %llu, \"schedstat_wait_ns\": %llu, "
		"\"schedstat_wait_start_ns\": %llu, ", (unsigned long long)r->end.sched_run_ns,
		(unsigned long long)r->start.sched_run_ns, (unsigned long long)r->end.sched_wait_ns,
		(unsigned long long)r->start.sched_wait_ns);
	if (r->region_end)
		fprintf(f, "\"region\": {\"start\": %llu, \"end\": %llu}, ", (unsigned long long)r->region_start,
			(unsigned long long)r->region_end);
	json_functions(f, r);
	fputc('}', f);
}

static void print_json(FILE *f, const struct worker *ws, int n, int ncpus)
{
	struct rusage self;

	getrusage(RUSAGE_SELF, &self);
	fprintf(f, "{\"pid\": %d, \"page_size\": %zu, \"repeat\": %u, "
		"\"ncpus\": %d, \"process_minflt\": %ld, \"process_majflt\": %ld, \"process_cpu_ns\": %llu, "
		"\"threads\": [",
		(int)getpid(), g_page_size, g_repeat, ncpus, self.ru_minflt, self.ru_majflt,
		(unsigned long long)(self.ru_utime.tv_sec + self.ru_stime.tv_sec) * NSEC_PER_SEC +
			(unsigned long long)(self.ru_utime.tv_usec + self.ru_stime.tv_usec) * 1000ULL);
	for (int i = 0; i < n; i++) {
		fprintf(f, i ? ",\n  " : "\n  ");
		json_thread(f, &ws[i]);
	}
	fprintf(f, "\n]}\n");
}

/* ------------------------------------------------------------------ */
/* command line                                                        */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: groundtruth [--delay-ms N] [--wait-signal] [--out FILE] [--repeat R]\n"
		"                   [SCENARIO[:ARGS] ...]\n"
		"Runs each scenario in its own named thread; all start together after\n"
		"--wait-signal (SIGUSR1) and --delay-ms; prints one JSON object with the\n"
		"kernel's per-thread accounting and per-function measurements.\n"
		"options:\n"
		"  --delay-ms N     sleep N ms before starting the work (attach with -p PID)\n"
		"  --wait-signal    wait for SIGUSR1 before starting the work\n"
		"  --out FILE       write the JSON to FILE instead of stdout\n"
		"  --repeat R       call each scenario's function R times (default 1)\n"
		"  -h, --help       this help\n"
		"scenarios (MS may be fractional; defaults in brackets; default: mix):\n");
	for (size_t i = 0; i < NKINDS; i++)
		fprintf(f, "  %s\n", kinds[i].usage);
	fprintf(f, "  mix                  fault:256 spin:200 sleep:200\n");
}

__attribute__((noreturn, format(printf, 1, 2)))
static void bad_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "groundtruth: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(groundtruth --help for usage)\n");
	exit(2);
}

static uint64_t parse_count(const char *s, uint64_t min, uint64_t max,
			    const char *what)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < min || v > max)
		bad_usage("%s: '%s' is not an integer in [%llu, %llu]", what, s,
			  (unsigned long long)min, (unsigned long long)max);
	return v;
}

/* milliseconds (may be fractional) -> nanoseconds */
static uint64_t parse_ms(const char *s, uint64_t max_ns, const char *what)
{
	double v;
	char *end;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0) || v * 1e6 > (double)max_ns)
		bad_usage("%s: '%s' is not a duration in ms in [0, %llu]", what, s,
			  (unsigned long long)(max_ns / NSEC_PER_MSEC));
	return (uint64_t)(v * 1e6 + 0.5);
}

static const struct scenario_kind *find_kind(const char *name)
{
	for (size_t i = 0; i < NKINDS; i++)
		if (!strcmp(kinds[i].name, name))
			return &kinds[i];
	return NULL;
}

static struct worker *add_worker(struct worker *ws, int *n)
{
	if (*n >= MAX_WORKERS)
		bad_usage("too many threads (max %d)", MAX_WORKERS);
	memset(&ws[*n], 0, sizeof(ws[*n]));
	ws[*n].pin_cpu = -1;
	return &ws[(*n)++];
}

static void parse_args_of(const struct scenario_kind *k, char *rest,
			  const char *spec, uint64_t arg[3])
{
	int i;

	for (i = 0; i < k->nargs; i++)
		arg[i] = k->defaults[i];
	for (i = 0; rest && *rest; i++) {
		char *tok = strsep(&rest, ":");

		if (i >= k->nargs)
			bad_usage("%s: too many arguments (see --help)", spec);
		if (k->types[i] == ARG_MS)
			arg[i] = parse_ms(tok, k->max[i], spec);
		else
			arg[i] = parse_count(tok, 1, k->max[i], spec);
	}
}

static int lowest_cpu(const cpu_set_t *set)
{
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, set))
			return c;
	return 0;
}

/* one scenario argument -> one or more workers */
static void add_scenario(struct worker *ws, int *n, const char *spec,
			 int pair_cpu)
{
	char buf[64], *rest, *name;
	const struct scenario_kind *k;
	uint64_t arg[3] = { 0 };
	int threads = 1;

	if (strlen(spec) >= sizeof(buf))
		bad_usage("scenario too long: '%s'", spec);
	strcpy(buf, spec);
	rest = buf;
	name = strsep(&rest, ":");
	k = find_kind(name);
	if (!k)
		bad_usage("unknown scenario '%s'", name);
	parse_args_of(k, rest, spec, arg);
	if (k->run == run_multi)
		threads = (int)arg[0];
	else if (k->per_thread)
		threads = 2;
	for (int t = 0; t < threads; t++) {
		struct worker *w = add_worker(ws, n);

		w->kind = k;
		memcpy(w->arg, arg, sizeof(arg));
		snprintf(w->spec, sizeof(w->spec), "%s", spec);
		if (k->per_thread)
			snprintf(w->name, sizeof(w->name), "%s%d",
				 k->thread_name, t);
		else
			snprintf(w->name, sizeof(w->name), "%s", k->thread_name);
		if (k->per_thread && k->run == run_spin)
			w->pin_cpu = pair_cpu;
		w->stack_prefault = STACK_PREFAULT_BASE;
		if (k->run == run_recurse)
			w->stack_prefault += arg[0] * STACK_PREFAULT_PER_LEVEL;
	}
}

struct options {
	uint64_t delay_ns;
	bool wait_signal;
	const char *out;
};

static int parse_cmdline(int argc, char **argv, struct options *o,
			 struct worker *ws, int pair_cpu)
{
	static const struct option longopts[] = {
		{ "delay-ms", required_argument, NULL, 'd' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ "out", required_argument, NULL, 'o' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c, n = 0;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': o->delay_ns = parse_ms(optarg, MAX_MS, "--delay-ms"); break;
		case 'w': o->wait_signal = true; break;
		case 'o': o->out = optarg; break;
		case 'r': g_repeat = (unsigned)parse_count(optarg, 1, 1000000, "--repeat"); break;
		case 'h': usage(stdout); exit(0);
		default: bad_usage("bad option");
		}
	}
	for (int i = optind; i < argc; i++) {
		if (!strcmp(argv[i], "mix")) {
			add_scenario(ws, &n, "fault:256", pair_cpu);
			add_scenario(ws, &n, "spin:200", pair_cpu);
			add_scenario(ws, &n, "sleep:200", pair_cpu);
		} else {
			add_scenario(ws, &n, argv[i], pair_cpu);
		}
	}
	if (n == 0) {
		add_scenario(ws, &n, "fault:256", pair_cpu);
		add_scenario(ws, &n, "spin:200", pair_cpu);
		add_scenario(ws, &n, "sleep:200", pair_cpu);
	}
	return n;
}

/* ------------------------------------------------------------------ */

static void wait_for_start(const struct options *o, const sigset_t *usr1)
{
	struct timespec ts = { .tv_sec = o->delay_ns / NSEC_PER_SEC,
			       .tv_nsec = o->delay_ns % NSEC_PER_SEC };
	int sig;

	if (o->wait_signal) {
		fprintf(stderr, "groundtruth: pid %d ready, waiting for SIGUSR1\n",
			(int)getpid());
		if (sigwait(usr1, &sig))
			fatal("sigwait failed");
	}
	if (o->delay_ns) {
		fprintf(stderr, "groundtruth: pid %d starting in %llu ms\n",
			(int)getpid(),
			(unsigned long long)(o->delay_ns / NSEC_PER_MSEC));
		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			;
	}
}

int main(int argc, char **argv)
{
	static struct worker workers[MAX_WORKERS];
	struct options opt = { 0 };
	cpu_set_t allowed;
	sigset_t usr1;
	FILE *out = stdout;
	int n;

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		fatal("sched_getaffinity: %s", strerror(errno));
	n = parse_cmdline(argc, argv, &opt, workers, lowest_cpu(&allowed));
	g_page_size = (size_t)sysconf(_SC_PAGESIZE);
	if (opt.out && !(out = fopen(opt.out, "w")))
		fatal("cannot open %s: %s", opt.out, strerror(errno));

	/* blocked in every thread, so sigwait() in main receives it */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	if (opt.wait_signal)
		pthread_sigmask(SIG_BLOCK, &usr1, NULL);

	if (pthread_barrier_init(&g_start, NULL, (unsigned)n + 1))
		fatal("pthread_barrier_init failed");
	start_workers(workers, n);
	wait_for_start(&opt, &usr1);
	pthread_barrier_wait(&g_start);
	for (int i = 0; i < n; i++)
		pthread_join(workers[i].thread, NULL);

	print_json(out, workers, n, CPU_COUNT(&allowed));
	if (fclose(out))
		fatal("writing output: %s", strerror(errno));
	return 0;
}
