/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Diagnostics: one clear line on stderr, kept for the report's "warnings". */
#ifndef TMABPF_WARN_H
#define TMABPF_WARN_H
#include <stddef.h>

#define WARN_MAX 64
#define EXIT_USAGE 2	/* exit status of bad input: one line said why */

/* Print "tmabpf: <msg>" on stderr and keep msg for the report. */
void warn_add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The kept warnings, in the order said (at most WARN_MAX: the first half, a line saying how many were
 * left out, and the latest); warn_get(warn_count() - 1) is the latest. */
size_t warn_count(void);
const char *warn_get(size_t i);
/* How many warnings were said in all, repeats and those not kept included. */
size_t warn_total(void);
/* Format a one-line error into err (no-op when err is NULL or errlen 0). */
void err_set(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Print "tmabpf: error: <msg>" on stderr. */
void err_print(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "tmabpf: <msg>" on stderr: what a run is doing (attached, sampling at, ...), not kept. */
void note_print(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print nothing from now on (the fuzzers run the parsers millions of times). */
void warn_quiet(void);
/* --quiet: from now on only errors are said; warnings are still kept for the report. */
void warn_errors_only(void);

#endif
