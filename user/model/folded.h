/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * folded: weighted stacks -> "frame;frame;...;frame WEIGHT" lines, root
 * first, leaf last, one line per distinct stack (weights of equal stacks
 * added), sorted: the format FlameGraph (flamegraph.pl), inferno and
 * speedscope read.  Any weight works: samples (--sample), nanoseconds
 * (off-CPU time), events.  Frame names lose ';' and line breaks (replaced by
 * ':' and ' '), which would break the format.
 */
#ifndef TMABPF_FOLDED_H
#define TMABPF_FOLDED_H
#include <stddef.h>
#include <stdio.h>

struct folded_line {
	char *stack;
	unsigned long long weight;
};

struct folded {
	struct folded_line *v;
	size_t nr, cap;
};

void folded_init(struct folded *f);
/* Add one stack (frames[0] is the root) with its weight. */
int folded_add(struct folded *f, const char *const *frames, size_t n, unsigned long long weight);
/* Merge equal stacks and sort: the stacks sharing a prefix are then next to one another. */
void folded_merge(struct folded *f);
/* folded_merge, then write "stack weight" lines. */
int folded_write(struct folded *f, FILE *out);
unsigned long long folded_total(const struct folded *f);
void folded_free(struct folded *f);

#endif
