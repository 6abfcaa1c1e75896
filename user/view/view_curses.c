// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The live view: ncurses back end of the view model.
 *
 *   header (target, elapsed, CPU and recipe, TMA L1 bar, multiplexing,
 *   tmabpf's own cost, drops) / tabs and sort / table or drill-down /
 *   key help, filter prompt or the latest warning.
 *
 * Keys: t f P e switch tables, < > move the sort column, r reverses, /
 * filters by comm, symbol or pid (typed from empty: Ctrl-U clears, Esc keeps
 * the old filter, Enter the new one), Enter opens a row's drill-down (Esc,
 * Left or Backspace closes it), Space pauses, q quits (and ends a -- COMMAND
 * as Ctrl-C does); arrows, PgUp/PgDn,
 * Home/End move.  Resize is handled (KEY_RESIZE), narrow terminals drop
 * columns by priority (the status line says which), the drill-down wraps
 * its long lines, NO_COLOR turns colours off.
 */
#include <curses.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/text_fit.h"
#include "lib/text_safe.h"
#include "lib/warn.h"
#include "output/report_sections.h"
#include "view/view_curses.h"

#define HEADER_ROWS 5	/* title, CPU, TMA, cost, tabs */

enum { P_TITLE = 1, P_HEAD, P_FE, P_BS, P_BE, P_RE, P_WARN, P_SORT };

struct view_curses {
	struct view *v;
	SCREEN *scr;
	int interval_ms;
	bool repaint;		/* full redraw each interval */
	bool color, utf8;
	enum vm_kind kind;
	bool paused;
	/* selection, kept by identity across refreshes */
	size_t sel, first;
	unsigned int sel_pid;
	long long sel_tid;
	int sel_id;
	bool drill;
	size_t drill_first;
	bool editing;		/* '/' prompt open */
	char edit[64], saved[64];
	size_t nwarn;		/* warnings at the last draw */
	size_t nwarn_open;	/* ... when the view opened (those were printed before) */
	char hidden[256];	/* "3 columns hidden: VCSW IVCSW MIGR; widen" of the table drawn, or "" */
};

bool view_curses_wanted(bool batch, char *why, size_t whylen)
{
	const char *term = getenv("TERM");

	why[0] = 0;
	if (batch || !isatty(STDOUT_FILENO))
		return false;
	if (!isatty(STDIN_FILENO)) {
		snprintf(why, whylen, "stdin is not a terminal (keys cannot be read)");
		return false;
	}
	if (!term || !*term || !strcmp(term, "dumb")) {
		snprintf(why, whylen, "TERM is %s", term && *term ? "dumb" : "unset");
		return false;
	}
	return true;
}

static void init_colors(struct view_curses *c)
{
	const char *nc = getenv("NO_COLOR");

	c->color = !(nc && *nc) && has_colors();	/* https://no-color.org */
	if (!c->color)
		return;
	start_color();
	use_default_colors();
	init_pair(P_TITLE, COLOR_CYAN, -1);
	init_pair(P_HEAD, COLOR_BLACK, COLOR_CYAN);
	init_pair(P_FE, COLOR_BLACK, COLOR_MAGENTA);
	init_pair(P_BS, COLOR_BLACK, COLOR_RED);
	init_pair(P_BE, COLOR_BLACK, COLOR_BLUE);
	init_pair(P_RE, COLOR_BLACK, COLOR_GREEN);
	init_pair(P_WARN, COLOR_YELLOW, -1);
	init_pair(P_SORT, COLOR_BLACK, COLOR_YELLOW);
}

struct view_curses *view_curses_open(struct view *v, int interval_ms, bool repaint, char *err, size_t errlen)
{
	struct view_curses *c = calloc(1, sizeof(*c));
	const char *cs;

	if (!c) {
		err_set(err, errlen, "out of memory");
		return NULL;
	}
	setlocale(LC_CTYPE, "");	/* UTF-8 comms; numbers keep the C locale */
	cs = nl_langinfo(CODESET);
	c->utf8 = cs && !strcmp(cs, "UTF-8");
	c->scr = newterm(NULL, stdout, stdin);
	if (!c->scr) {
		err_set(err, errlen, "ncurses cannot drive TERM=%s", getenv("TERM") ? getenv("TERM") : "");
		free(c);
		return NULL;
	}
	set_term(c->scr);
	c->v = v;
	v->live = true;
	c->interval_ms = interval_ms;
	c->repaint = repaint;
	c->kind = VM_THREADS;
	c->sel_id = -1;
	c->sel_tid = -1;
	c->nwarn = c->nwarn_open = warn_total();
	cbreak();	/* Ctrl-C still raises SIGINT: the run's handler finishes cleanly */
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	init_colors(c);
	view_curses_draw(c);
	return c;
}

struct view_curses *view_curses_start(struct view *v, bool batch, int *interval_ms, bool repaint)
{
	struct view_curses *c;
	char why[256];

	if (!view_curses_wanted(batch, why, sizeof(why))) {
		if (why[0]) {
			warn_add("live view off: %s; printing text summaries (--batch to ask for them)", why);
			if (!*interval_ms)
				*interval_ms = 1000;
		}
		return NULL;
	}
	if (!*interval_ms)
		*interval_ms = 1000;
	c = view_curses_open(v, *interval_ms, repaint, why, sizeof(why));
	if (!c)
		warn_add("live view off: %s; printing text summaries", why);
	return c;
}

void view_curses_close(struct view_curses *c)
{
	if (!c)
		return;
	flushinp();	/* keys typed meanwhile are not the shell's */
	endwin();
	delscreen(c->scr);
	fflush(stdout);
	free(c);
}

bool view_curses_paused(const struct view_curses *c)
{
	return c->paused;
}

/* ---------- drawing helpers ---------- */

static void style_on(struct view_curses *c, int pair, attr_t fallback)
{
	if (c->color && pair)
		attron(COLOR_PAIR(pair));
	else
		attron(fallback);
}

static void style_off(struct view_curses *c, int pair, attr_t fallback)
{
	if (c->color && pair)
		attroff(COLOR_PAIR(pair));
	else
		attroff(fallback);
}

/* Text from x to the right edge, cut to fit; "›" becomes ">" and "…" "~" without UTF-8. */
/* Every string the live view draws: names from other users come through text_safe. */
static void put(struct view_curses *c, int y, int x, const char *s)
{
	char buf[1024], safe[1024];
	size_t k = 0;

	if (y < 0 || y >= LINES || x >= COLS)
		return;
	s = text_safe(s, safe, sizeof(safe));
	for (; *s && k + 4 < sizeof(buf); s++) {
		if (!c->utf8 && !strncmp(s, "\xe2\x80\xba", 3)) {
			buf[k++] = '>';
			s += 2;
			continue;
		}
		if (!c->utf8 && !strncmp(s, "\xe2\x80\xa6", 3)) {	/* "…" */
			buf[k++] = '~';
			s += 2;
			continue;
		}
		buf[k++] = *s;
	}
	buf[k] = 0;
	mvaddnstr(y, x, buf, COLS - x);
}

static void putf(struct view_curses *c, int y, int x, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void putf(struct view_curses *c, int y, int x, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	put(c, y, x, buf);
}

static void draw_bar(struct view_curses *c, int y, int x, const struct vm_tma *t, int width)
{
	static const int pair[VM_TMA_L1] = { P_FE, P_BS, P_BE, P_RE };
	char bar[128];

	if (width >= (int)sizeof(bar))
		width = sizeof(bar) - 1;
	vm_tma_bar(t, width, bar);
	for (int i = 0; bar[i] && x + i < COLS; i++) {
		int p = bar[i] == 'F' ? pair[VM_FE] : bar[i] == 'S' ? pair[VM_BS] : bar[i] == 'B' ? pair[VM_BE] :
			bar[i] == 'R' ? pair[VM_RE] : 0;

		if (c->color && p)
			attron(COLOR_PAIR(p));
		mvaddch(y, x + i, bar[i]);
		if (c->color && p)
			attroff(COLOR_PAIR(p));
	}
}

/* ---------- header ---------- */

static const char *const tab_key[VM_NKINDS] = { "t", "f", "P", "e" };

static void draw_header(struct view_curses *c)
{
	const struct view *v = c->v;
	const struct vm_header *h = &v->hdr;
	const struct vm_table *t = &v->tab[c->kind];
	bool sorted = t->sort_col >= 0 && t->sort_col < t->ncols;
	int x;

	char head[64], target[sizeof(h->target)];
	int room;

	room = snprintf(head, sizeof(head), "tmabpf%s  %.1fs (every %.1fs)  target: ", c->paused ? " PAUSED" : "",
			h->elapsed_s, c->interval_ms / 1000.0);
	room = COLS - room - 2 > 12 ? COLS - room - 2 : 12;	/* elided in the middle, its pid kept ("…": 3 bytes
									 * that put() cuts at as 3 columns) */
	text_elide_middle(h->target, room, target, sizeof(target));
	style_on(c, P_TITLE, A_BOLD);
	putf(c, 0, 0, "%s%s", head, target);
	style_off(c, P_TITLE, A_BOLD);
	if (h->pmu)
		putf(c, 1, 0, "CPU: %s  recipe: %s", h->cpu ? h->cpu : "?", h->recipe ? h->recipe : "none");
	else if (h->tma_level || !v->updated)
		putf(c, 1, 0, "CPU: %s  no PMU: software events", h->cpu ? h->cpu : "?");
	else	/* the TMA line says "off (no PMU: ...)" */
		putf(c, 1, 0, "CPU: %s  events: software", h->cpu ? h->cpu : "?");
	if (!v->updated) {
		putf(c, 2, 0, "TMA: %s", h->tma_level ? "first interval pending" : "off");
	} else if (!h->tma_level) {
		putf(c, 2, 0, "TMA: off (%s)", h->tma_why);
	} else if (!h->tma.ok) {
		putf(c, 2, 0, "TMA L1: n/a (no counts in this interval)");
	} else {
		put(c, 2, 0, "TMA L1 [");
		draw_bar(c, 2, 8, &h->tma, 30);
		putf(c, 2, 38, "] FE %.1f BS %.1f BE %.1f RE %.1f  L2: %s %.1f%%", h->tma.l1[VM_FE], h->tma.l1[VM_BS],
		     h->tma.l1[VM_BE], h->tma.l1[VM_RE], h->tma.l2[0] ? h->tma.l2 : "-", h->tma.l2_value);
	}
	if (h->bpf_stats)
		putf(c, 3, 0, "mux %.1f%%  bpf %.3f%% of 1 CPU, %.0f hits/s  tmabpf %.2f%% CPU  drops: map-full %llu, "
		     "lost %llu", h->mux_pct, h->bpf_cpu_pct, h->bpf_hits_per_s, h->self_cpu_pct, h->map_full, h->lost);
	else
		putf(c, 3, 0, "mux %.1f%%  bpf n/a (kernel BPF stats off)  tmabpf %.2f%% CPU  drops: map-full %llu, "
		     "lost %llu", h->mux_pct, h->self_cpu_pct, h->map_full, h->lost);
	x = 0;
	for (int k = 0; k < VM_NKINDS; k++) {
		if (k == (int)c->kind)
			attron(A_REVERSE | A_BOLD);
		putf(c, 4, x, "[%s]%s", tab_key[k], v->tab[k].title ? v->tab[k].title : "");
		if (k == (int)c->kind)
			attroff(A_REVERSE | A_BOLD);
		x += 4 + (int)strlen(v->tab[k].title ? v->tab[k].title : "") + 1;
	}
	putf(c, 4, x, " %zu/%zu rows  sort: %s%s%s%s", t->nrows, t->total, sorted ? t->col[t->sort_col].name : "-",
	     !sorted ? "" : (t->col[t->sort_col].fmt == VM_F_STR) != t->reverse ? " (asc)" : " (desc)",
	     v->filter[0] ? "  filter: " : "", v->filter);
}

/* ---------- table ---------- */

/* Lines the token view (--per-call) takes above the status line. */
static int token_rows;

static int rows_room(void)
{
	int n = LINES - HEADER_ROWS - 2 - token_rows;	/* table header, status line */

	return n > 0 ? n : 0;
}

static void keep_selection_visible(struct view_curses *c, size_t nrows)
{
	size_t room = (size_t)rows_room();

	if (nrows && c->sel >= nrows)
		c->sel = nrows - 1;
	if (!nrows)
		c->sel = 0;
	if (c->sel < c->first)
		c->first = c->sel;
	if (room && c->sel >= c->first + room)
		c->first = c->sel - room + 1;
	if (c->first + room > nrows)
		c->first = nrows > room ? nrows - room : 0;
}

/* After a rebuild: the selected row is found again by identity. */
static void find_selection(struct view_curses *c)
{
	const struct vm_table *t = &c->v->tab[c->kind];
	const struct vm_row *r = view_find_row(t, c->sel_pid, c->sel_tid, c->sel_id);

	if (r)
		c->sel = (size_t)(r - t->rows);
	keep_selection_visible(c, t->nrows);
}

static void remember_selection(struct view_curses *c)
{
	const struct vm_table *t = &c->v->tab[c->kind];

	if (c->sel < t->nrows) {
		c->sel_pid = t->rows[c->sel].pid;
		c->sel_tid = t->rows[c->sel].tid;
		c->sel_id = t->rows[c->sel].id;
	}
}

static void draw_cell(struct view_curses *c, const struct vm_table *t, const struct vm_row *row, int col, int y,
		      int x, int w)
{
	char buf[1024];

	if (t->col[col].fmt == VM_F_BAR) {
		draw_bar(c, y, x, &row->tma, w);
		return;
	}
	view_format_cell(t, row, col, true, buf, sizeof(buf));
	if (t->col[col].stretch) {
		char fit[1024];

		view_fit_text(&t->col[col], buf, w, fit, sizeof(fit));
		put(c, y, x, fit);
	} else if (t->col[col].left) {
		putf(c, y, x, "%-*.*s", w, w, buf);
	} else {
		putf(c, y, x, "%*.*s", w, w, buf);
	}
}

static void draw_table(struct view_curses *c)
{
	const struct vm_table *t = &c->v->tab[c->kind];
	bool shown[VM_MAX_COLS];
	int y = HEADER_ROWS, x = 0, width[VM_MAX_COLS], spare;
	size_t room = (size_t)rows_room();

	spare = COLS - view_fit_columns(t, COLS, true, shown);
	c->hidden[0] = 0;
	for (int k = 0, n = 0, len = 0; k < t->ncols; k++)
		if (!shown[k] && len < (int)sizeof(c->hidden)) {
			for (int j = k + 1; j < t->ncols; j++)
				n += !shown[j];
			if (!len)	/* the count first: the line may be cut */
				len = snprintf(c->hidden, sizeof(c->hidden), "%d column%s hidden:", n + 1, n ? "s" : "");
			len += snprintf(c->hidden + len, sizeof(c->hidden) - len, " %s", t->col[k].name);
		}
	if (c->hidden[0])
		snprintf(c->hidden + strlen(c->hidden), sizeof(c->hidden) - strlen(c->hidden), "; widen");
	for (int k = 0; k < t->ncols; k++)	/* FUNCTION takes what the terminal has left */
		width[k] = view_stretch_width(t, k, true, spare);
	keep_selection_visible(c, t->nrows);
	for (int k = 0; k < t->ncols; k++)
		if (shown[k] && (t->col[k].fmt == VM_F_BAR || t->col[k].fmt == VM_F_NODE)) {
			view_tma_rows(c->v, c->kind, c->first, room);	/* only the rows on screen */
			break;
		}
	style_on(c, P_HEAD, A_REVERSE);
	mvhline(y, 0, ' ', COLS);
	for (int k = 0; k < t->ncols; k++) {
		int w = width[k];

		if (!shown[k])
			continue;
		if (k == t->sort_col)
			attron(A_BOLD | A_UNDERLINE);
		if (t->col[k].left)
			putf(c, y, x, "%-*.*s", w, w, t->col[k].name);
		else
			putf(c, y, x, "%*.*s", w, w, t->col[k].name);
		if (k == t->sort_col)
			attroff(A_BOLD | A_UNDERLINE);
		x += w + 1;
	}
	style_off(c, P_HEAD, A_REVERSE);
	keep_selection_visible(c, t->nrows);
	if (!c->v->updated)
		putf(c, y + 1, 0, "collecting: first update in %.1f s", c->interval_ms / 1000.0);
	else if (!t->nrows)
		putf(c, y + 1, 0, "%s", t->total ? "no row matches the filter" :
		     c->kind == VM_FUNCS && !c->v->r->uset && !c->v->hdr.sample_event ?
		     "no function rows: use --uprobe LIB:GLOB or --sample" :
		     "no rows in this interval");
	for (size_t i = c->first; i < t->nrows && i < c->first + room; i++) {
		const struct vm_row *row = &t->rows[i];
		bool sel = i == c->sel;

		y = HEADER_ROWS + 1 + (int)(i - c->first);
		x = 0;
		if (sel) {
			attron(A_REVERSE);
			mvhline(y, 0, ' ', COLS);
		}
		for (int k = 0; k < t->ncols; k++) {
			int w = width[k];

			if (!shown[k])
				continue;
			draw_cell(c, t, row, k, y, x, w);
			x += w + 1;
		}
		if (sel)
			attroff(A_REVERSE);
	}
}

/* ---------- drill-down ---------- */

static void draw_drill(struct view_curses *c)
{
	const struct vm_table *t = &c->v->tab[c->kind];
	const struct vm_row *row = view_find_row(t, c->sel_pid, c->sel_tid, c->sel_id);
	struct vm_lines l = {};
	size_t room = (size_t)rows_room() + 1;

	style_on(c, P_HEAD, A_REVERSE);
	mvhline(HEADER_ROWS, 0, ' ', COLS);
	putf(c, HEADER_ROWS, 0, "details (Esc/Left: back, arrows: scroll)");
	style_off(c, P_HEAD, A_REVERSE);
	if (!row) {
		putf(c, HEADER_ROWS + 1, 0, "the row is no longer in the table (thread gone or filtered out)");
		return;
	}
	view_drill(c->v, c->kind, row, &l);
	vm_lines_wrap(&l, COLS);
	if (c->drill_first + room > l.n)
		c->drill_first = l.n > room ? l.n - room : 0;
	for (size_t i = c->drill_first; i < l.n && i < c->drill_first + room; i++) {
		bool head = l.line[i][0] != ' ';

		if (head)
			attron(A_BOLD);
		put(c, HEADER_ROWS + 1 + (int)(i - c->drill_first), 0, l.line[i]);
		if (head)
			attroff(A_BOLD);
	}
	vm_lines_free(&l);
}

static void draw_status(struct view_curses *c)
{
	int y = LINES - 1;
	size_t nw = warn_total();

	if (c->editing) {
		putf(c, y, 0, "filter (comm, function or pid; Enter: keep, Ctrl-U: clear, Esc: cancel): %s_", c->edit);
		return;
	}
	if (nw > c->nwarn_open) {
		style_on(c, P_WARN, A_BOLD);
		putf(c, y, 0, "! %s", warn_get(warn_count() - 1));
		style_off(c, P_WARN, A_BOLD);
		return;
	}
	if (c->hidden[0] && !c->drill) {	/* what the table left out, before the keys (cut at the edge) */
		style_on(c, P_WARN, A_BOLD);
		putf(c, y, 0, "(%s)", c->hidden);
		style_off(c, P_WARN, A_BOLD);
		putf(c, y, (int)strlen(c->hidden) + 4, "q quit  space pause  t/f/P/e tables  </> sort  / filter  "
		     "Enter details");
		return;
	}
	put(c, y, 0, "q quit  space pause  t/f/P/e tables  </> sort  r reverse  / filter  Enter details  arrows move");
}

void view_curses_draw(struct view_curses *c)
{
	size_t nw = warn_total();
	char l1[512], l2[512], l3[512];

	token_rows = report_iterations_live(c->v->r, VIEW_TOKENS, l1, l2, sizeof(l1)) ? 2 : 0;
	if (token_rows && report_roofline_live(c->v->r, VIEW_TOKENS, l3, sizeof(l3)))
		token_rows = 3;
	find_selection(c);
	erase();
	draw_header(c);
	if (token_rows) {
		put(c, LINES - 1 - token_rows, 0, l1);
		put(c, LINES - token_rows, 0, l2);
		if (token_rows > 2)
			put(c, LINES - 2, 0, l3);
	}
	/* a function's details stay open when it is not called in a period (its row is kept, at 0) */
	c->v->pinned = c->drill && c->kind == VM_FUNCS;
	c->v->pin_pid = c->sel_pid;
	c->v->pin_tid = c->sel_tid;
	c->v->pin_id = c->sel_id;
	if (c->drill)
		draw_drill(c);
	else
		draw_table(c);
	draw_status(c);
	if (nw != c->nwarn || c->repaint) {
		clearok(curscr, TRUE);	/* stderr or the command may have written over the screen */
		c->nwarn = nw;
	}
	refresh();
}

/* ---------- keys ---------- */

static void switch_table(struct view_curses *c, enum vm_kind k)
{
	c->kind = k;
	c->drill = false;
	c->sel = c->first = 0;
	remember_selection(c);
}

static void move_sel(struct view_curses *c, long delta)
{
	const struct vm_table *t = &c->v->tab[c->kind];
	long s = (long)c->sel + delta;

	if (c->drill) {
		long d = (long)c->drill_first + delta;

		c->drill_first = d < 0 ? 0 : (size_t)d;
		return;
	}
	if (s < 0)
		s = 0;
	if (t->nrows && s >= (long)t->nrows)
		s = (long)t->nrows - 1;
	c->sel = (size_t)s;
	keep_selection_visible(c, t->nrows);
	remember_selection(c);
}

static void move_sort(struct view_curses *c, int dir)
{
	struct vm_table *t = &c->v->tab[c->kind];
	int col = t->sort_col + dir;

	if (col < 0)
		col = 0;
	if (col >= t->ncols)
		col = t->ncols - 1;
	view_set_sort(c->v, c->kind, col, t->reverse);
	find_selection(c);
}

static void edit_key(struct view_curses *c, int ch)
{
	size_t n = strlen(c->edit);

	if (ch == 27) {	/* Esc: the filter as it was */
		c->editing = false;
		view_set_filter(c->v, c->saved);
	} else if (ch == 21) {	/* Ctrl-U: clear */
		c->edit[0] = 0;
		view_set_filter(c->v, c->edit);
	} else if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
		c->editing = false;
	} else if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
		if (n)
			c->edit[n - 1] = 0;
		view_set_filter(c->v, c->edit);
	} else if (ch >= 32 && ch < 127 && n + 1 < sizeof(c->edit)) {
		c->edit[n] = (char)ch;
		c->edit[n + 1] = 0;
		view_set_filter(c->v, c->edit);
	}
	c->sel = c->first = 0;
	if (c->v->tab[c->kind].nrows)
		remember_selection(c);
}

/* One key; returns VC_QUIT to end the run. */
static int key(struct view_curses *c, int ch)
{
	if (c->editing) {
		edit_key(c, ch);
		return VC_NONE;
	}
	switch (ch) {
	case 'q': case 'Q': return VC_QUIT;
	case 't': switch_table(c, VM_THREADS); break;
	case 'f': switch_table(c, VM_FUNCS); break;
	case 'P': case 'p': switch_table(c, VM_PROCS); break;
	case 'e': switch_table(c, VM_EVENTS); break;
	case '<': case ',': move_sort(c, -1); break;
	case '>': case '.': move_sort(c, +1); break;
	case 'r':
		view_set_sort(c->v, c->kind, c->v->tab[c->kind].sort_col, !c->v->tab[c->kind].reverse);
		find_selection(c);
		break;
	case '/':
		c->editing = true;
		c->drill = false;
		snprintf(c->saved, sizeof(c->saved), "%s", c->v->filter);
		c->edit[0] = 0;	/* a new filter, typed from empty (Esc keeps the old one) */
		view_set_filter(c->v, c->edit);
		break;
	case ' ': c->paused = !c->paused; break;
	case '\n': case '\r': case KEY_ENTER: case KEY_RIGHT:
		if (c->v->tab[c->kind].nrows) {
			remember_selection(c);
			c->drill = true;
			c->drill_first = 0;
		}
		break;
	case 27: case KEY_LEFT: case KEY_BACKSPACE: case 127:
		c->drill = false;
		find_selection(c);
		break;
	case KEY_UP: case 'k': move_sel(c, -1); break;
	case KEY_DOWN: case 'j': move_sel(c, +1); break;
	case KEY_PPAGE: move_sel(c, -rows_room()); break;
	case KEY_NPAGE: move_sel(c, rows_room()); break;
	case KEY_HOME: move_sel(c, -(long)1e9); break;
	case KEY_END: move_sel(c, (long)1e9); break;
	case KEY_RESIZE: break;	/* redrawn below at the new size */
	default: return -1;	/* not ours: no redraw */
	}
	return VC_NONE;
}

int view_curses_input(struct view_curses *c)
{
	bool redraw = false;
	int ch;

	while ((ch = getch()) != ERR) {
		int r = key(c, ch);

		if (r == VC_QUIT)
			return VC_QUIT;
		redraw |= r == VC_NONE;
	}
	if (redraw) {
		find_selection(c);
		view_curses_draw(c);
	}
	return VC_NONE;
}
