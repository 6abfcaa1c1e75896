/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Other users' names made safe for terminals and text outputs, as ps and top show them.  A comm,
 * an ELF or perf-map symbol, a module or cgroup path, anything read back from a report, shown in
 * the report, the live view, diff or --folded: every control byte (C0, DEL, and
 * the C1 controls U+0080-U+009F, which terminals obey too) and every byte that is not part of
 * valid UTF-8 becomes '?'.  Valid UTF-8 is kept.  So no escape sequence (OSC 52, CSI 2J) reaches
 * a terminal and no newline forges a row.
 */
#ifndef TMABPF_TEXT_SAFE_H
#define TMABPF_TEXT_SAFE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence at p (1-4; a NUL is 1), or 0 when the bytes there are not one. */
int utf8_seq_len(const unsigned char *p);
/* Bytes of the character at p (at least 1; p not at its NUL) and, in *replace, whether it is shown as
 * '?': a control character or a byte of invalid UTF-8 (then 1 byte; utf8_seq_len(p) is 0). */
int text_safe_char(const unsigned char *p, bool *replace);
/* s as it may be shown: s itself when nothing needs replacing (no copy), else buf holding the
 * replaced copy, cut at a character boundary to fit len.  NULL stays NULL. */
const char *text_safe(const char *s, char *buf, size_t len);
/* text_safe of a string of any length, written to f. */
void text_safe_fputs(const char *s, FILE *f);
/* text_safe of s for XML (SVG) text and attributes: '<', '>', '&' and '"' escaped, at most max
 * characters of it written (none when f is NULL).  Returns the characters s holds (all of them). */
size_t text_safe_xml_fputs(const char *s, size_t max, FILE *f);

#endif
