/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * mem_bins: data addresses -> the mapping of the process they fall in, with
 * a count per (pid, mapping).  Maps are read (/proc/PID/maps, procmaps.c)
 * when a process is first met and again when an address is in none of its
 * mappings (mapped since); the last read stays in use after the process
 * exits.  Mapping names: file-backed: the file's base name; [heap], [stack],
 * [vdso], named anonymous memory ([anon:NAME]) as the kernel prints them;
 * other anonymous memory: "[anon:START-END]" (hex).  An address in no
 * mapping even after a re-read: "[unmapped]", start = end = 0.
 */
#ifndef TMABPF_MEM_BINS_H
#define TMABPF_MEM_BINS_H
#include <stddef.h>
#include <stdint.h>
#include "model/results.h"	/* struct mem_bin */
#include "sym/procmaps.h"

struct mem_bins_proc;

/* Reads pid's maps: procmaps_load by default; tests substitute their own. */
typedef int (*mem_maps_reader)(int pid, struct procmaps *out, void *ctx);

struct mem_bins {
	mem_maps_reader read;
	void *read_ctx;
	struct mem_bins_proc *procs;
	size_t nprocs, capprocs;
	struct mem_bin *v;
	size_t n, cap;
	unsigned long long rereads;	/* maps read again after a miss */
};

void mem_bins_init(struct mem_bins *b, mem_maps_reader read, void *ctx);
/* Bin one address of pid; 0 or -ENOMEM. */
int mem_bins_add(struct mem_bins *b, unsigned int pid, uint64_t addr);
/* Read pid's maps now (first sight; after an exec). */
void mem_bins_reload(struct mem_bins *b, unsigned int pid);
/* The name of a mapping, as above, into buf. */
void mem_bins_name(const struct procmaps_entry *e, char *buf, size_t len);
/* Sort the bins by count, descending. */
void mem_bins_sort(struct mem_bins *b);
void mem_bins_free(struct mem_bins *b);

#endif
