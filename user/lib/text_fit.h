/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Text that fits a width: a name elided in the middle ("sgemm_ker…_HASWELL"), never cut raw, and
 * prose wrapped at spaces, for the text outputs' --width (report_text.c, the report's sections, the
 * live view's drill-down).  Widths count columns (UTF-8 continuation bytes take none; "…" is one).
 */
#ifndef TMABPF_TEXT_FIT_H
#define TMABPF_TEXT_FIT_H
#include <stddef.h>
#include <stdio.h>

/* The narrowest --width the text outputs take. */
#define TEXT_WIDTH_MIN 40
/* The text outputs' width (--width): opt when set (> 0), else f's terminal's, else 80. */
int text_width(FILE *f, int opt);
/* Columns s takes. */
int text_columns(const char *s);
/* The display columns of the UTF-8 character at s (wcwidth under C.UTF-8: a wide character 2, a
 * combining mark 0), its bytes in *len. */
int text_char(const char *s, size_t *len);
/* The longest tail of s within cols columns (never starting at a combining mark). */
const char *text_tail(const char *s, int cols);
/* s in at most width columns into out (outlen bytes): whole when it fits, else its head and tail
 * around one "…"; returns the columns written. */
int text_elide_middle(const char *s, int width, char *out, size_t outlen);
/* s (one paragraph, no newline) written to f in lines of at most width columns, broken at spaces,
 * a field (what follows two spaces) kept on one line when it fits one; lines after the first
 * indented by indent spaces; a word wider than a line (whatever its length) is elided in the middle to
 * a line of its own, its true head and tail around one "…"; one that fits is written whole. */
void text_wrap(FILE *f, int width, int indent, const char *s);
/* Each line of text (lines end at '\n') that is wider than width wrapped as text_wrap does, its
 * continuation indented 4 past the line's own indent; the others written as they are. */
void text_wrap_lines(FILE *f, int width, const char *text);
/* text_wrap of a printf format. */
void text_wrapf(FILE *f, int width, int indent, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
