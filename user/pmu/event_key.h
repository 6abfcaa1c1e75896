/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Canonical names of PMU events, and their encoding for a CPU recipe.
 * A key is NAME[:uHEX][:cN][:e1][:i1] in upper case (umask override, cmask,
 * edge, invert); perf's spellings map to it: cpu/NAME,cmask=1,edge/,
 * cpu@NAME\,cmask\=1@, NAME:c1, hybrid cpu_core/NAME/, -A's "NAME [cpu]",
 * and the slots/topdown-* perf-metrics aliases.  Used by the -e parser
 * (events.c) and by the TMA engine; knows nothing of TMA formulas.
 */
#ifndef TMABPF_EVENT_KEY_H
#define TMABPF_EVENT_KEY_H
#include <stddef.h>
#include <linux/perf_event.h>

#define TMA_KEY_LEN 96

struct tma_cpu;
struct tma_event_enc;

/* Canonical key of an event name; 0, -EINVAL (not a name: raw terms, empty), -ENAMETOOLONG. */
int tma_event_key(const char *name, char *out, size_t len);
/* The recipe's explicit encoding entry for key, NULL when the default rule applies. */
const struct tma_event_enc *tma_event_enc(const struct tma_cpu *c, const char *key);
/* Encode a key for CPU c into attr (counting, exclude_guest as perf stat):
 * the recipe's entry, else (Intel) libpfm4's A:B:c=N:e=1:i=1 with the umask patched. */
int tma_encode_key(const struct tma_cpu *c, const char *key, struct perf_event_attr *attr,
		   char *err, size_t errlen);

/* perf's spelling of a key for perf stat -e: name, or cpu/name,umask=..,cmask=N,edge,inv/ */
int tma_event_perf_name(const char *key, char *out, size_t len);

#endif
