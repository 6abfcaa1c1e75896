/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A text table that fits a width: its cells measured, the columns of the highest priority dropped
 * first when the width is short, a name column elided in the middle (text_fit.h) down to its minimum
 * before a column goes; and the names of the hidden columns, gathered once per report and said in one
 * "(N columns hidden: ...; widen or --width)" line.  For the tables outside the view model (tmabpf
 * diff, the report's off-CPU, memory-sample and roofline sections); view_model.h has its own.  Never
 * wider than its width: with only the always-shown columns left, their text is cut in the middle; short
 * of that, the table is left out in one line that says the --width it needs.
 */
#ifndef TMABPF_TEXT_TABLE_H
#define TMABPF_TEXT_TABLE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define TEXT_TABLE_MAX_COLS 40
/* A number column is as wide as its cells: a longer header (an event's name) is elided in the middle
 * down to this many columns, as the threads table's are ("CPU_CLK…THREAD"), whole in the note. */
#define TEXT_TABLE_HEADER_KEPT 14
/* When the always-shown columns alone are wider than the width, the text (left-aligned) columns are cut
 * in the middle down to this many columns (a name first); narrower still, the table is left out. */
#define TEXT_TABLE_CUT_MIN 6

struct text_col {
	const char *name;	/* header */
	int prio;		/* 1: always shown; the highest numbers go first (the rightmost first among equals) */
	bool left;		/* left-aligned (names), else right-aligned (numbers) */
	int min;		/* > 0: a name column, elided in the middle down to min columns before others go */
	int gap;		/* spaces before it (0: one) */
	/* how a name wider than its column is shortened into out, returning the columns written (NULL:
	 * text_elide_middle; a C++ name: cxx_name_shorten) */
	int (*shorten)(const char *s, int width, char *out, size_t outlen);
};

struct text_table {
	int ncols;
	struct text_col col[TEXT_TABLE_MAX_COLS];
	int width[TEXT_TABLE_MAX_COLS];	/* after text_table_fit: the columns each takes, 0 when hidden */
	int needs;			/* after text_table_fit: 0, or the columns it needs when left out */
	char **cell;			/* row-major, ncols a row */
	size_t nrows, cap;
};

/* The hidden columns' names of one report (or one interval), each once, every one counted
 * (text_hidden_print frees them). */
struct text_hidden {
	char **names;	/* n whole names, compared whole */
	int n, cap;
};

/* ncols from 1 to TEXT_TABLE_MAX_COLS; any other is a bug: said on stderr, then abort(). */
void text_table_init(struct text_table *t, const struct text_col *cols, int ncols);
/* A row of ncols cells (copied); -1 when out of memory. */
int text_table_add(struct text_table *t, const char *const *cells);
/* The widths in width columns; the hidden columns' names added to hid (NULL: not kept).  false when even
 * the always-shown columns, their text cut to TEXT_TABLE_CUT_MIN, are wider: the table is left out (every
 * width 0; its rows print nothing), text_table_print_needs says so. */
bool text_table_fit(struct text_table *t, int width, struct text_hidden *hid);
/* After a text_table_fit that left the table out: "  (table left out: it needs --width N)" (N the columns
 * it needs, at least TEXT_WIDTH_MIN), wrapped to width; else nothing. */
void text_table_print_needs(const struct text_table *t, FILE *f, int width);
/* The header, or row i, as fitted (a line each); text_table_print_cells: row i (TEXT_TABLE_HEADER: the
 * header) without its newline (what follows it on the line is the caller's). */
#define TEXT_TABLE_HEADER ((size_t)-1)
void text_table_print_header(const struct text_table *t, FILE *f);
void text_table_print_row(const struct text_table *t, size_t i, FILE *f);
void text_table_print_cells(const struct text_table *t, size_t i, FILE *f);
/* The columns the fitted table takes. */
int text_table_width(const struct text_table *t);
/* text_table_fit, the header and every row; or, left out, text_table_print_needs. */
void text_table_print(struct text_table *t, FILE *f, int width, struct text_hidden *hid);
void text_table_free(struct text_table *t);

/* name added to h unless it is there already. */
void text_hidden_add(struct text_hidden *h, const char *name);
/* "  (N columns hidden: A B C; widen or --width)" wrapped to width, when any is; then h is empty. */
void text_hidden_print(struct text_hidden *h, FILE *f, int width);

#endif
