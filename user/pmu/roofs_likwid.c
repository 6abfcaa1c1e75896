// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Measuring the roofs with likwid-bench (roofs_likwid.h). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib/sorted.h"
#include "lib/warn.h"
#include "pmu/roofs_likwid.h"

extern char **environ;

#define LIKWID_BENCH "likwid-bench"
#define OUT_MAX (64 * 1024)
#define DRAM_MIN_BYTES (256ULL << 20)
#define LIKWID_MISSING "likwid-bench not found: install Debian's likwid package ('make deps', or 'apt install likwid')"

/* Run argv, its stdout and stderr into out (NUL-terminated, truncated at len - 1).  Exit status, or -errno. */
static int run_capture(char *const argv[], char *out, size_t len)
{
	posix_spawn_file_actions_t fa;
	int pipefd[2], status, r;
	size_t n = 0;
	pid_t pid;

	out[0] = 0;
	if (pipe2(pipefd, O_CLOEXEC))
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	r = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (r) {
		close(pipefd[0]);
		return -r;
	}
	for (;;) {
		char buf[4096];
		ssize_t k = read(pipefd[0], buf, sizeof(buf));

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		if (n + 1 < len) {
			size_t c = (size_t)k < len - 1 - n ? (size_t)k : len - 1 - n;

			memcpy(out + n, buf, c);
			n += c;
		}
	}
	out[n] = 0;
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The number after "key:" at the start of a line of likwid-bench's output. */
static bool output_value(const char *out, const char *key, double *v)
{
	size_t kl = strlen(key);

	for (const char *p = out; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, kl) && p[kl] == ':') {
			char *end;

			*v = strtod(p + kl + 1, &end);
			return end != p + kl + 1 && isfinite(*v) && *v > 0;
		}
	return false;
}

/* The first line of out that says what went wrong, for a one-line error. */
static void first_error_line(const char *out, char *buf, size_t len)
{
	const char *p = strstr(out, "ERROR");

	if (!p)
		p = strstr(out, "Error");
	if (!p)
		p = out;
	snprintf(buf, len, "%.*s", (int)strcspn(p, "\n"), p);
}

int roofs_likwid_run(const char *test, unsigned long long ws_bytes, int threads, double seconds, double *value,
		     char *err, size_t errlen)
{
	char w[64], s[32], *out, why[160];
	char *argv[] = { LIKWID_BENCH, "-t", (char *)test, "-W", w, "-s", s, NULL };
	bool flops = !strncmp(test, "peakflops", 9);
	int rc;

	/* likwid-bench's kB is 1000 bytes; at least 1 kB per thread */
	snprintf(w, sizeof(w), "N:%llukB:%d", ws_bytes / 1000 > (unsigned long long)threads ?
		 ws_bytes / 1000 : (unsigned long long)threads, threads);
	snprintf(s, sizeof(s), "%g", seconds);
	out = malloc(OUT_MAX);
	if (!out)
		return -ENOMEM;
	rc = run_capture(argv, out, OUT_MAX);
	if (rc == -ENOENT) {
		err_set(err, errlen, LIKWID_MISSING);
	} else if (rc < 0) {
		err_set(err, errlen, "cannot run %s: %s", LIKWID_BENCH, strerror(-rc));
	} else if (rc > 0 || !output_value(out, flops ? "MFlops/s" : "MByte/s", value)) {
		first_error_line(out, why, sizeof(why));
		err_set(err, errlen, "%s -t %s -W %s failed (exit %d): %s", LIKWID_BENCH, test, w, rc,
			why[0] ? why : "no figure in its output");
		rc = -EIO;
	} else {
		*value *= 1e6;
	}
	free(out);
	return rc < 0 ? rc : 0;
}

/* ---------- which test per figure ---------- */

/* likwid-bench -a: the test names, one per line ("name - description"). */
static int list_tests(char *out, size_t len, char *err, size_t errlen)
{
	char *argv[] = { LIKWID_BENCH, "-a", NULL };
	int rc = run_capture(argv, out, len);

	if (rc == -ENOENT)
		err_set(err, errlen, LIKWID_MISSING);
	else if (rc)
		err_set(err, errlen, "%s -a failed (%s)", LIKWID_BENCH, rc < 0 ? strerror(-rc) : "non-zero exit");
	return rc > 0 ? -EIO : rc;
}

static bool has_test(const char *list, const char *name)
{
	size_t nl = strlen(name);

	for (const char *p = list; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, nl) && (p[nl] == ' ' || p[nl] == '\n' || p[nl] == 0))
			return true;
	return false;
}

/* The first of prefix+suffix, suffix from the widest ISA down, that likwid-bench has. */
static const char *pick_test(const char *list, const char *isa, const char *prefix, const char *const *suffixes,
			     char *buf, size_t len)
{
	static const char *const isas[] = { "avx512", "avx2", "sse", "scalar" };
	int start = 0;

	while (start < 3 && strcmp(isas[start], isa))
		start++;
	for (int i = start; i < 4; i++) {
		snprintf(buf, len, "%s%s", prefix, suffixes[i]);
		if (has_test(list, buf))
			return buf;
	}
	return NULL;
}

/* Suffixes per ISA (avx512, avx2, sse, scalar) of each kind of test. */
static const char *const sfx_fma[] = { "_avx512_fma", "_avx_fma", "_sse", "" };
static const char *const sfx_plain[] = { "_avx512", "_avx", "_sse", "" };

struct plan_item {
	const char *what;		/* "DRAM read, 1 thread" */
	char test[40];
	struct roof_figure *fig;
	unsigned long long ws;
	int threads;
};

/* The working set for a cache level with t threads: half the caches those threads own;
 * 0 when the level cannot be told apart (its share per thread is not above the level below). */
static unsigned long long level_ws(const struct roofs *r, enum roof_level l, int t, int l3_sharing)
{
	unsigned long long l3_total, inst;

	switch (l) {
	case ROOF_L1:
	case ROOF_L2:
		return r->cache_bytes[l] / 2 * (unsigned long long)t;
	case ROOF_L3:
		inst = ((unsigned long long)t + (unsigned long long)l3_sharing - 1) / (unsigned long long)l3_sharing;
		l3_total = r->cache_bytes[ROOF_L3] * inst;
		return l3_total / 2 > 2 * r->cache_bytes[ROOF_L2] * (unsigned long long)t ? l3_total / 2 : 0;
	default:
		inst = ((unsigned long long)r->host.cpus + (unsigned long long)l3_sharing - 1) /
		       (unsigned long long)l3_sharing;
		l3_total = r->cache_bytes[ROOF_L3] * inst;
		return 4 * l3_total > DRAM_MIN_BYTES ? 4 * l3_total : DRAM_MIN_BYTES;
	}
}

/* How many CPUs share CPU 0's L3 (shared_cpu_list), 1 when unknown. */
static int l3_sharing(void)
{
	char buf[256], *p;
	int n = 0;
	FILE *f;

	for (int i = 0; i < 8; i++) {
		char path[96];
		int level = 0;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
		if (!(f = fopen(path, "re")))
			break;
		if (fscanf(f, "%d", &level) != 1)
			level = 0;
		fclose(f);
		if (level != 3)
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/shared_cpu_list", i);
		if (!(f = fopen(path, "re")))
			break;
		if (fgets(buf, sizeof(buf), f))
			for (p = strtok(buf, ",\n"); p; p = strtok(NULL, ",\n")) {
				int a, b;

				if (sscanf(p, "%d-%d", &a, &b) == 2 && b >= a)
					n += b - a + 1;
				else if (sscanf(p, "%d", &a) == 1)
					n++;
			}
		fclose(f);
		break;
	}
	return n > 0 ? n : 1;
}

void roofs_figure_name(char *buf, size_t len, bool flops, int prec_or_bw, enum roof_level l)
{
	if (flops)
		snprintf(buf, len, "peak-%s", prec_or_bw == ROOF_SP ? "fp32" : "fp64");
	else
		snprintf(buf, len, "%s-%s", roof_bw_name(prec_or_bw), roof_level_name(l));
}

/* Is name one of the comma list's items? */
static bool in_list(const char *list, const char *name)
{
	size_t nl = strlen(name);

	for (const char *p = list; p; p = strchr(p, ','), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, nl) && (p[nl] == ',' || p[nl] == 0))
			return true;
	return false;
}

bool roofs_only_valid(const char *only, char *bad, size_t badlen)
{
	for (const char *p = only; p; p = strchr(p, ','), p = p ? p + 1 : NULL) {
		size_t n = strcspn(p, ",");
		bool found = false;
		char name[32];

		for (int f = 0; f < ROOF__PRECS && !found; f++) {
			roofs_figure_name(name, sizeof(name), true, f, ROOF_L1);
			found = strlen(name) == n && !strncmp(p, name, n);
		}
		for (int b = 0; b < ROOF__BWS && !found; b++)
			for (int l = 0; l < ROOF__LEVELS && !found; l++) {
				roofs_figure_name(name, sizeof(name), false, b, l);
				found = strlen(name) == n && !strncmp(p, name, n);
			}
		if (!found) {
			snprintf(bad, badlen, "%.*s", (int)n, p);
			return false;
		}
	}
	return true;
}

static int measure_item(const struct plan_item *it, const struct roofs_measure_opts *o, char *err, size_t errlen)
{
	double v[64];
	int n = o->repeats < 64 ? o->repeats : 64, e;

	if (o->progress)
		o->progress(it->what, NULL, o->arg);
	for (int i = 0; i < n; i++) {
		e = roofs_likwid_run(it->test, it->ws, it->threads, o->seconds, &v[i], err, errlen);
		if (e)
			return e;
	}
	qsort(v, (size_t)n, sizeof(v[0]), sorted_cmp_double);
	*it->fig = (struct roof_figure){
		.valid = true,
		.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2,
		.min = v[0],
		.max = v[n - 1],
		.repeats = n,
		.ws_bytes = it->ws,
	};
	snprintf(it->fig->kernel, sizeof(it->fig->kernel), "%s", it->test);
	if (o->progress)
		o->progress(it->what, it->fig, o->arg);
	return 0;
}

int roofs_measure(struct roofs *r, const struct roofs_measure_opts *o, char *err, size_t errlen)
{
	static const char *const bw_prefix[ROOF__BWS] = { "load", "stream", "copy" };
	const char *const *bw_sfx[ROOF__BWS] = { sfx_plain, sfx_fma, sfx_plain };
	static const char *const flops_prefix[ROOF__PRECS] = { "peakflops_sp", "peakflops" };
	char *list = malloc(OUT_MAX), test[40], what[64], name[32];
	int sharing = l3_sharing(), e;

	if (!list)
		return -ENOMEM;
	e = list_tests(list, OUT_MAX, err, errlen);
	if (e)
		goto out;
	r->threads[ROOF_ONE] = 1;
	r->threads[ROOF_ALL] = r->host.cpus;
	roofs_cache_sizes(r->cache_bytes);
	for (int t = 0; t < ROOF__THREADS && !e; t++) {
		int nt = r->threads[t];

		if (t == ROOF_ALL && (o->skip_all_threads || nt == 1))
			break;
		for (int p = 0; p < ROOF__PRECS && !e; p++) {
			struct plan_item it = { .what = what, .fig = &r->flops[p][t], .threads = nt,
						.ws = r->cache_bytes[ROOF_L1] ? r->cache_bytes[ROOF_L1] / 2 * (unsigned)nt
									      : 16000ULL * (unsigned)nt };

			roofs_figure_name(name, sizeof(name), true, p, ROOF_L1);
			if ((o->only && !in_list(o->only, name)) ||
			    !pick_test(list, r->host.isa, flops_prefix[p], sfx_fma, test, sizeof(test)))
				continue;
			snprintf(it.test, sizeof(it.test), "%s", test);
			snprintf(what, sizeof(what), "peak %s FLOP/s, %d thread%s", p == ROOF_SP ? "fp32" : "fp64", nt,
				 nt > 1 ? "s" : "");
			e = measure_item(&it, o, err, errlen);
		}
		for (int b = 0; b < ROOF__BWS && !e; b++)
			for (int l = 0; l < ROOF__LEVELS && !e; l++) {
				struct plan_item it = { .what = what, .fig = &r->bw[b][l][t], .threads = nt,
							.ws = level_ws(r, l, nt, sharing) };

				roofs_figure_name(name, sizeof(name), false, b, l);
				if ((l < ROOF_DRAM && !r->cache_bytes[l]) || (o->only && !in_list(o->only, name)))
					continue;
				if (!it.ws || !pick_test(list, r->host.isa, bw_prefix[b], bw_sfx[b], test, sizeof(test)))
					continue;
				snprintf(it.test, sizeof(it.test), "%s", test);
				snprintf(what, sizeof(what), "%s %s, %d thread%s", roof_level_name(l), roof_bw_name(b), nt,
					 nt > 1 ? "s" : "");
				e = measure_item(&it, o, err, errlen);
			}
	}
out:
	free(list);
	return e;
}
