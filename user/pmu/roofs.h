/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * roofs: this host's measured roofs (peak FLOP/s, bandwidth per cache level),
 * the identity of the host they were measured on, and their cache file.
 *
 * The figures come from likwid-bench (pmu/roofs_likwid.c), each the median of
 * several repeats with its spread.  They are kept per host in a JSON file
 * (ROOFS_DEFAULT_PATH); a file measured on another CPU (model, microcode or
 * online CPU count differ) or by another format version is refused, never
 * used silently.  roof_at() gives the attainable FLOP/s at an arithmetic
 * intensity: min(peak, bandwidth x intensity), the roofline model.
 */
#ifndef TMABPF_ROOFS_H
#define TMABPF_ROOFS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ROOFS_DEFAULT_PATH "/var/lib/tmabpf/roofs.json"
/* 2: copy is likwid-bench's copy_* (ordinary stores); format 1's was copy_mem_* (non-temporal) */
#define ROOFS_FORMAT 2
#define ROOFS_SPREAD_WARN 0.10	/* (max - min) / median above this: a noisy figure */

enum roof_prec { ROOF_SP, ROOF_DP, ROOF__PRECS };
enum roof_bw { ROOF_READ, ROOF_TRIAD, ROOF_COPY, ROOF__BWS };
enum roof_level { ROOF_L1, ROOF_L2, ROOF_L3, ROOF_DRAM, ROOF__LEVELS };
enum roof_threads { ROOF_ONE, ROOF_ALL, ROOF__THREADS };

struct roof_figure {
	bool valid;
	double median, min, max;	/* FLOP/s or bytes/s */
	int repeats;
	uint64_t ws_bytes;		/* working set of the run (all threads) */
	char kernel[40];		/* likwid-bench test name */
};

struct roof_host {
	char cpu[160];		/* /proc/cpuinfo model name */
	char microcode[32];
	char kernel[128];	/* uname -r */
	char isa[16];		/* widest vector ISA measured: avx512, avx2, sse, neon, scalar */
	int cpus;		/* online CPUs */
};

struct roofs {
	struct roof_host host;
	int64_t measured_at;	/* seconds since the epoch */
	int threads[ROOF__THREADS];	/* 1 and the online CPUs */
	uint64_t cache_bytes[ROOF_DRAM];	/* one L1d, L2, L3 instance */
	struct roof_figure flops[ROOF__PRECS][ROOF__THREADS];
	struct roof_figure bw[ROOF__BWS][ROOF__LEVELS][ROOF__THREADS];
};

/* This host's identity now. */
void roofs_host_now(struct roof_host *h);
/* The cache sizes of CPU 0 (sysfs), 0 where unknown. */
void roofs_cache_sizes(uint64_t bytes[ROOF_DRAM]);

/* Write r to path as JSON (mode 0644; the directory is created).  0 or -errno with err. */
int roofs_save(const struct roofs *r, const char *path, char *err, size_t errlen);
/* Read path into r: 0; -ENOENT when there is none; -EINVAL for a file that is not a roofs file
 * of this format; -ESTALE when it was measured on another host (err says what differs). */
int roofs_load(struct roofs *r, const char *path, const struct roof_host *now, char *err, size_t errlen);

/* Names for output and the file: "sp"/"dp", "read"/"triad"/"copy", "L1".."DRAM", "1"/"all". */
const char *roof_prec_name(enum roof_prec p);
const char *roof_bw_name(enum roof_bw b);
const char *roof_level_name(enum roof_level l);

/* The spread of a figure: (max - min) / median, 0 when not valid. */
double roof_spread(const struct roof_figure *f);

/* Attainable FLOP/s at arithmetic intensity ai (FLOP per byte) with the data in level, for
 * one thread or all: min(peak, read bandwidth x ai).  0 when the roofs lack a figure. */
double roof_at(const struct roofs *r, enum roof_prec p, enum roof_level l, enum roof_threads t, double ai);

#endif
