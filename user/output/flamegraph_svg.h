/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * flamegraph_svg: the flame graph of --flamegraph=FILE.svg, a standalone SVG
 * a browser opens, drawn from the folded stacks that --folded writes: one box
 * per frame, its width its share of the graph's weight, callers below their
 * callees.  The on-CPU samples and the off-CPU time (the stacks whose root is
 * "[blocked]" or "[runqueue]", in microseconds) are two graphs, one above the
 * other, in their own colours (kernel frames "_[k]" orange, JIT "_[j]" green).
 * Inline JavaScript gives each box a hover line, click-to-zoom (Reset Zoom),
 * and a search (Ctrl-F: a regular expression; the matched share is shown).
 * Each box carries data-s (its start) and data-v (its weight) in the graph's
 * units, and each graph data-total, for the tests and for scripts.
 */
#ifndef TMABPF_FLAMEGRAPH_SVG_H
#define TMABPF_FLAMEGRAPH_SVG_H
#include <stdio.h>
#include "model/folded.h"

#define FLAMEGRAPH_WIDTH 1200	/* the SVG's width in pixels */
#define FLAMEGRAPH_PAD 10	/* left and right margins: a graph is FLAMEGRAPH_WIDTH - 2 * FLAMEGRAPH_PAD wide */

/* Write f as the flame graph SVG (f merged: folded_merge).  0, or -errno. */
int flamegraph_svg_write(struct folded *f, FILE *out);

#endif
