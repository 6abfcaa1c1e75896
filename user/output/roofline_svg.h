/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * roofline_svg: the roofline chart of --roofline=FILE.svg, a standalone SVG a
 * browser opens: log-log axes (FLOP per byte, FLOP/s), the measured roofs as
 * lines (the peak, and the read bandwidth of each level up to its ridge
 * point), and each (function, shape) a circle at its intensity and achieved
 * FLOP/s, its area proportional to its time, coloured by its verdict, the
 * largest labelled, every one with a tooltip.  Each circle carries its
 * figures as data-* attributes, for the tests and for scripts.
 */
#ifndef TMABPF_ROOFLINE_SVG_H
#define TMABPF_ROOFLINE_SVG_H
#include <stdio.h>
#include "model/roofline.h"

#define ROOFLINE_SVG_LABELS 12	/* the largest points named on the chart */

void roofline_svg_write(const struct roofline_result *r, FILE *f);

#endif
