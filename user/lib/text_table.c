// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* A text table that fits a width, and the hidden columns' one note (text_table.h). */
#include <stdlib.h>
#include <string.h>
#include "lib/text_fit.h"
#include "lib/text_table.h"

void text_table_init(struct text_table *t, const struct text_col *cols, int ncols)
{
	/* a table of no column, or of more than it holds, is the caller's bug: said and stopped, never
	 * a column silently dropped (or a zero-byte realloc that frees the rows) */
	if (ncols < 1 || ncols > TEXT_TABLE_MAX_COLS) {
		fprintf(stderr, "tmabpf: bug: a text table of %d columns (1 to %d): please report it\n", ncols,
			TEXT_TABLE_MAX_COLS);
		fflush(stderr);
		abort();
	}
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
	memcpy(t->col, cols, (size_t)t->ncols * sizeof(*cols));
}

int text_table_add(struct text_table *t, const char *const *cells)
{
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 32;
		char **c = realloc(t->cell, cap * (size_t)t->ncols * sizeof(*c));

		if (!c)
			return -1;
		t->cell = c;
		t->cap = cap;
	}
	for (int c = 0; c < t->ncols; c++)
		if (!(t->cell[t->nrows * (size_t)t->ncols + (size_t)c] = strdup(cells[c] ? cells[c] : ""))) {
			while (c--)
				free(t->cell[t->nrows * (size_t)t->ncols + (size_t)c]);
			return -1;
		}
	t->nrows++;
	return 0;
}

static int gap(const struct text_table *t, int c, bool first)
{
	return first ? 0 : t->col[c].gap > 0 ? t->col[c].gap : 1;
}

/* The columns the shown ones take, each at its floor. */
static int taken(const struct text_table *t, const bool *shown, const int *floor)
{
	int n = 0;

	for (int c = 0, first = 1; c < t->ncols; c++)
		if (shown[c]) {
			n += gap(t, c, first) + floor[c];
			first = 0;
		}
	return n;
}

/* Column c shrunk by up to -*spare columns (*spare < 0), not below cut; *spare grows by what it gave. */
static void shrink(struct text_table *t, int c, int cut, int *spare)
{
	int less = t->width[c] - cut < -*spare ? t->width[c] - cut : -*spare;

	if (less > 0) {
		t->width[c] -= less;
		*spare += less;
	}
}

bool text_table_fit(struct text_table *t, int width, struct text_hidden *hid)
{
	int want[TEXT_TABLE_MAX_COLS], floor[TEXT_TABLE_MAX_COLS], cut[TEXT_TABLE_MAX_COLS], spare;
	int dropped[TEXT_TABLE_MAX_COLS], ndropped = 0;	/* in the order they went */
	bool shown[TEXT_TABLE_MAX_COLS];

	for (int c = 0; c < t->ncols; c++) {
		int head = text_columns(t->col[c].name);

		want[c] = t->col[c].left || head < TEXT_TABLE_HEADER_KEPT ? head : TEXT_TABLE_HEADER_KEPT;
		for (size_t i = 0; i < t->nrows; i++) {
			int w = text_columns(t->cell[i * (size_t)t->ncols + (size_t)c]);

			want[c] = w > want[c] ? w : want[c];
		}
		floor[c] = t->col[c].min > 0 && t->col[c].min < want[c] ? t->col[c].min : want[c];
		cut[c] = t->col[c].left && floor[c] > TEXT_TABLE_CUT_MIN ? TEXT_TABLE_CUT_MIN : floor[c];
		shown[c] = true;
	}
	while (taken(t, shown, floor) > width) {	/* the highest priority goes, the rightmost first */
		int drop = -1;

		for (int c = 0; c < t->ncols; c++)
			if (shown[c] && t->col[c].prio > 1 && (drop < 0 || t->col[c].prio >= t->col[drop].prio))
				drop = c;
		if (drop < 0)
			break;
		shown[drop] = false;
		dropped[ndropped++] = drop;
	}
	/* what is left goes to the name columns, the first first */
	spare = width - taken(t, shown, floor);
	for (int c = 0; c < t->ncols; c++) {
		t->width[c] = shown[c] ? floor[c] : 0;
		if (shown[c] && t->col[c].min > 0 && spare > 0) {
			int more = want[c] - floor[c] < spare ? want[c] - floor[c] : spare;

			t->width[c] += more;
			spare -= more;
		}
	}
	/* short of it, only always-shown columns left: the name columns are cut below their floor (the
	 * first first), then the other text columns (the rightmost first), each down to TEXT_TABLE_CUT_MIN */
	for (int c = 0; c < t->ncols && spare < 0; c++)
		if (shown[c] && t->col[c].min > 0)
			shrink(t, c, cut[c], &spare);
	for (int c = t->ncols - 1; c >= 0 && spare < 0; c--)
		if (shown[c] && t->col[c].left && t->col[c].min <= 0)
			shrink(t, c, cut[c], &spare);
	t->needs = spare < 0 ? taken(t, shown, cut) : 0;
	if (t->needs)	/* left out whole: no column of it shown, none said hidden */
		memset(t->width, 0, sizeof(t->width));
	for (int i = 0; hid && !t->needs && i < ndropped; i++)
		text_hidden_add(hid, t->col[dropped[i]].name);
	return !t->needs;
}

void text_table_print_needs(const struct text_table *t, FILE *f, int width)
{
	if (t->needs)
		text_wrapf(f, width, 3, "  (table left out: it needs --width %d)",
			   t->needs > TEXT_WIDTH_MIN ? t->needs : TEXT_WIDTH_MIN);
}

static void print_cells(const struct text_table *t, const char *const *cells, bool header, FILE *f)
{
	for (int c = 0, first = 1; c < t->ncols; c++) {
		/* the fitted cell is the cell, or fewer of its bytes around a 3-byte "…" (a C++ name's
		 * splices at most triple it: cxx_name.c): sized from the cell, never cut */
		size_t cap = 3 * strlen(cells[c]) + 64;
		char *fit;
		int n, pad, last;

		if (!t->width[c])
			continue;
		if (!(fit = malloc(cap))) {
			fprintf(f, "%*s(out of memory)", gap(t, c, first), "");
			return;
		}
		n = !header && t->col[c].shorten ? t->col[c].shorten(cells[c], t->width[c], fit, cap) :
						   text_elide_middle(cells[c], t->width[c], fit, cap);
		pad = t->width[c] - n;
		last = c + 1;
		while (last < t->ncols && !t->width[last])
			last++;
		fprintf(f, "%*s%*s%s", gap(t, c, first), "", t->col[c].left ? 0 : pad, "", fit);
		if (t->col[c].left && last < t->ncols)	/* no trailing blanks */
			fprintf(f, "%*s", pad, "");
		free(fit);
		first = 0;
	}
}

int text_table_width(const struct text_table *t)
{
	int n = 0;

	for (int c = 0, first = 1; c < t->ncols; c++)
		if (t->width[c]) {
			n += gap(t, c, first) + t->width[c];
			first = 0;
		}
	return n;
}

void text_table_print_header(const struct text_table *t, FILE *f)
{
	text_table_print_cells(t, TEXT_TABLE_HEADER, f);
	fputc('\n', f);
}

void text_table_print_cells(const struct text_table *t, size_t i, FILE *f)
{
	const char *names[TEXT_TABLE_MAX_COLS];

	if (i != TEXT_TABLE_HEADER) {
		print_cells(t, (const char *const *)&t->cell[i * (size_t)t->ncols], false, f);
		return;
	}
	for (int c = 0; c < t->ncols; c++)
		names[c] = t->col[c].name;
	print_cells(t, names, true, f);
}

void text_table_print_row(const struct text_table *t, size_t i, FILE *f)
{
	text_table_print_cells(t, i, f);
	fputc('\n', f);
}

void text_table_print(struct text_table *t, FILE *f, int width, struct text_hidden *hid)
{
	if (!text_table_fit(t, width, hid)) {
		text_table_print_needs(t, f, width);
		return;
	}
	text_table_print_header(t, f);
	for (size_t i = 0; i < t->nrows; i++)
		text_table_print_row(t, i, f);
}

void text_table_free(struct text_table *t)
{
	for (size_t i = 0; i < t->nrows * (size_t)t->ncols; i++)
		free(t->cell[i]);
	free(t->cell);
	memset(t, 0, sizeof(*t));
}

void text_hidden_add(struct text_hidden *h, const char *name)
{
	if (!*name)
		return;
	for (int i = 0; i < h->n; i++)
		if (!strcmp(h->names[i], name))
			return;
	if (h->n == h->cap) {
		int cap = h->cap ? h->cap * 2 : 16;
		char **p = realloc(h->names, (size_t)cap * sizeof(*p));

		if (!p) {
			fprintf(stderr, "tmabpf: out of memory: a hidden column's name (%s) left out of the note\n", name);
			return;
		}
		h->names = p;
		h->cap = cap;
	}
	if (!(h->names[h->n] = strdup(name))) {
		fprintf(stderr, "tmabpf: out of memory: a hidden column's name (%s) left out of the note\n", name);
		return;
	}
	h->n++;
}

void text_hidden_print(struct text_hidden *h, FILE *f, int width)
{
	char *list = NULL;
	size_t len = 0;
	FILE *m = h->n ? open_memstream(&list, &len) : NULL;

	for (int i = 0; m && i < h->n; i++)
		fprintf(m, "%s%s", i ? " " : "", h->names[i]);
	if (h->n && (!m || fclose(m)))
		fprintf(stderr, "tmabpf: out of memory: the note of %d hidden columns left out\n", h->n);
	else if (h->n)
		text_wrapf(f, width, 3, "  (%d column%s hidden: %s; widen or --width)", h->n, h->n > 1 ? "s" : "",
			   list);
	free(list);
	for (int i = 0; i < h->n; i++)
		free(h->names[i]);
	free(h->names);
	*h = (struct text_hidden){ 0 };
}
