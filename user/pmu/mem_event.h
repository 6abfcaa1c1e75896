/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * mem_event: the address-carrying sampling event of --mem-samples.
 *   pmu (default): the recipe CPU's precise memory event:
 *     Intel: MEM_TRANS_RETIRED.LOAD_LATENCY_GT_128 (PEBS load latency, event 0xcd umask 0x1,
 *            ldlat=128 in config1: loads that took more than 128 cycles, i.e. mostly L3
 *            misses/DRAM), precise_ip=2, period 1009 (the event's SampleAfterValue);
 *            Sapphire Rapids needs the mem-loads-aux event (0x03/0x82) as group leader;
 *     AMD:   IBS op (the dynamic ibs_op PMU), cnt_ctl=1 (count dispatched ops),
 *            l3missonly=1 (report only ops that missed L3), period 200000 ops.
 *   page-faults: the page-faults software event, period 1: every page fault,
 *     with the faulting address.  A test and diagnostic source (it works with
 *     no PMU), not a memory-stall measure.
 */
#ifndef TMABPF_MEM_EVENT_H
#define TMABPF_MEM_EVENT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/perf_event.h>

struct tma_cpu;

struct mem_event {
	char source[16];		/* "pmu", "page-faults" */
	char name[96];			/* what is sampled */
	char pmu[32];			/* "cpu", "ibs_op", "software" */
	struct perf_event_attr attr;
	bool aux;			/* needs aux_attr as group leader (SPR load latency) */
	struct perf_event_attr aux_attr;
	unsigned int ldlat;		/* Intel: load-latency threshold (config1) */
};

/* "pmu" or "page-faults" (NULL: "pmu"); false for anything else. */
bool mem_event_source_ok(const char *source);
/* The event for source on cpu (NULL: unknown CPU).  host: a real run (the
 * ibs_op type must exist in sysfs); else a dry run (type printed as 0 when
 * absent).  0, or -ENOTSUP/-ENOENT with why filled (one line). */
int mem_event_choose(const char *source, const struct tma_cpu *cpu, bool host, struct mem_event *ev, char *why,
		     size_t whylen);
/* The dry-run line: the exact perf_event_attr (and its group leader). */
void mem_event_print(const struct mem_event *ev, FILE *f);

#endif
