/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The live view: the ncurses back end of the view model (view_model.h). */
#ifndef TMABPF_VIEW_CURSES_H
#define TMABPF_VIEW_CURSES_H
#include <stdbool.h>
#include <stddef.h>
#include "view/view_model.h"

struct view_curses;

enum { VC_NONE, VC_QUIT };

/* Whether the live view should run: stdout and stdin are terminals, not
 * --batch; why holds a one-line reason when a terminal is there but unusable. */
bool view_curses_wanted(bool batch, char *why, size_t whylen);
/* Take over the terminal (alternate screen).  repaint: redraw the whole
 * screen every interval (a launched command shares the terminal).  NULL and
 * err on failure. */
struct view_curses *view_curses_open(struct view *v, int interval_ms, bool repaint, char *err, size_t errlen);
/* The run's choice: the live view when wanted (interval_ms: 0 becomes 1000),
 * else NULL, saying why in one line when a terminal was there. */
struct view_curses *view_curses_start(struct view *v, bool batch, int *interval_ms, bool repaint);
/* Draw the view after view_update(). */
void view_curses_draw(struct view_curses *c);
/* Handle the keys typed since the last call; VC_QUIT on q. */
int view_curses_input(struct view_curses *c);
/* Space pressed: the view keeps the data it shows. */
bool view_curses_paused(const struct view_curses *c);
/* Give the terminal back as it was; NULL is fine. */
void view_curses_close(struct view_curses *c);

#endif
