/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The plain-text back end of the view model (view_model.h): the periodic
 * top-style summary (-I, --batch, stdout not a terminal) and the final report.
 * Its format is documented in README ("Batch format"). */
#ifndef TMABPF_REPORT_TEXT_H
#define TMABPF_REPORT_TEXT_H
#include <stdio.h>
#include "output/report_sections.h"
#include "view/view_model.h"

/* One interval, after view_update(): header, threads, functions, the columns they hid. */
void report_text_interval(struct view *v, FILE *f);
/* The whole run: threads, processes (when one has several threads), TMA bottleneck paths,
 * functions, each feature's section, then one line naming the columns the width hid; in width
 * columns (0: text_width's); verbose: the overhead line always. */
void report_text_final(const struct report *r, FILE *f, int top, int width, bool verbose);
/* The pieces, for tests; the columns a table hides are added to hid (said once, text_hidden_print). */
void report_text_header(const struct view *v, FILE *f);
void report_text_table(struct view *v, enum vm_kind k, FILE *f, size_t max_rows, struct text_hidden *hid);

#endif
