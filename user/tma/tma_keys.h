/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Canonical names of PMU events, as the recipes' formulas name them.
 * A key is NAME[:uHEX][:cN][:e1][:i1] in upper case (umask override, cmask,
 * edge, invert); perf's spellings map to it: cpu/NAME,cmask=1,edge/,
 * cpu@NAME\,cmask\=1@, NAME:c1, hybrid cpu_core/NAME/, -A's "NAME [cpu]",
 * and the slots/topdown-* perf-metrics aliases.  Pure string work, used by the
 * TMA engine and by the -e parser; the keys' encodings are pmu/key_encode.h.
 */
#ifndef TMABPF_TMA_KEYS_H
#define TMABPF_TMA_KEYS_H
#include <stdbool.h>
#include <stddef.h>

#define TMA_KEY_LEN 96

struct tma_cpu;
struct tma_event_enc;

/* Canonical key of an event name; 0, -EINVAL (not a name: raw terms, empty), -ENAMETOOLONG. */
int tma_event_key(const char *name, char *out, size_t len);
/* The recipe's explicit encoding entry for key, NULL when the default rule applies. */
const struct tma_event_enc *tma_event_enc(const struct tma_cpu *c, const char *key);
/* A key split into its base name and modifiers (umask, cmask, edge, invert). */
void tma_key_mods(const char *key, char *base, size_t blen, unsigned long long *umask, bool *has_umask,
		  unsigned long long *cmask, bool *edge, bool *inv);
/* perf's spelling of a key for perf stat -e: name, or cpu/name,umask=..,cmask=N,edge,inv/ */
int tma_event_perf_name(const char *key, char *out, size_t len);

#endif
