/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* "Did you mean": the nearest of some known names to a mistyped one (edit distance). */
#ifndef TMABPF_SUGGEST_H
#define TMABPF_SUGGEST_H
#include <stddef.h>

#define SUGGEST_MAX_LEN 128	/* longer words are never near anything */

/* Levenshtein distance of a and b, giving up (returns limit + 1) beyond limit. */
int suggest_distance(const char *a, const char *b, int limit);

/* The candidate nearest to word: within max(2, strlen(word) / 4) edits, or one that word is a
 * prefix of; NULL when none is near enough.  Ties go to the earlier candidate. */
const char *suggest_nearest(const char *word, const char *const *cands, size_t n);

#endif
