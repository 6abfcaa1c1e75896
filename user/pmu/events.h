/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Event specifications: names -> perf_event_attr, grouping. */
#ifndef TMABPF_EVENTS_H
#define TMABPF_EVENTS_H
#include <stdbool.h>
#include <stddef.h>
#include <linux/perf_event.h>
#include "bpf/tmabpf.h"

#define EVENT_NAME_LEN 128

struct event_desc {
	char name[EVENT_NAME_LEN];	/* name shown in reports (as the user wrote it, or canonical) */
	char pmu[32];			/* "software", "msr", "cpu", "raw", ... */
	struct perf_event_attr attr;	/* type, config, config1, config2, exclude_* */
	int group;			/* events with the same group >= 0 are opened as one group; -1 alone */
	bool leader;			/* first event of its group */
	bool from_user;			/* given with -e */
	char need[128];			/* which metric(s) need it (dry-run); "" when user-selected */
};

struct event_list {
	int n;
	struct event_desc ev[TMABPF_MAX_EVENTS];
};

struct tma_cpu;

/* Event names are for a CPU: cpu, the recipe CPU (--cpu NAME, or the detected host's; NULL:
 * none).  Hardware names resolve through libpfm4 for that CPU (perf JSON dotted names or
 * libpfm4 NAME:UMASK, case-insensitive), then the TMA recipe's own table; cpu/../ terms use a
 * built-in format table for the recipe CPU's vendor (Intel, AMD, Arm; so that --cpu NAME encodes
 * for that machine, not this one), else sysfs, else the host vendor's built-in table. */

/* Parse one event token (no list separators), perf's modifiers included
 * (name:ukhGHp, pmu/.../ukhGHp). 0 or -errno with err filled. */
int events_parse_one(const char *tok, const struct tma_cpu *cpu, struct event_desc *d, char *err, size_t errlen);
/* Parse "a,b,pmu/x=1,y=2/,c,{d,e}:u" (commas inside pmu/.../ and {group} do not
 * split; a {group} is opened as one perf group); appends to l. */
int events_parse_list(const char *spec, const struct tma_cpu *cpu, struct event_list *l, char *err, size_t errlen);
/* Append d unless the same counter (type, config1/2, exclude_* and precise_ip:
 * modifiers included) is already there in the same group; returns its index. */
int events_add(struct event_list *l, const struct event_desc *d, char *err, size_t errlen);
/* A software clock (task-clock, cpu-clock): its count is nanoseconds. */
bool events_count_ns(const struct event_desc *d);
/* Index of the event named name, or -1. */
int events_find(const struct event_list *l, const char *name);
/* True when the host has a hardware (cpu/cpu_core/armv8...) PMU registered. */
bool events_host_has_pmu(char *why, size_t whylen);
const char *events_type_name(__u32 type);

#endif
