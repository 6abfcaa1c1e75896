/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * offcpu: the --offcpu-stacks feature.  Loads and attaches the off-CPU
 * program (offcpu_loader.c), reads the maps of each process as it is first
 * seen off-CPU (symbolize.c keeps them after it exits), and at the end names
 * the rows' stacks: the table of struct offcpu_stack (report_offcpu.c prints
 * it) and folded lines (folded.c) with a root marker frame "[blocked]" or
 * "[runqueue]" and weights in microseconds.
 */
#ifndef TMABPF_OFFCPU_H
#define TMABPF_OFFCPU_H
#include <stdbool.h>
#include <stddef.h>
#include "collect/offcpu_loader.h"
#include "model/folded.h"
#include "model/results.h"
#include "sym/symbolize.h"

struct offcpu {
	struct offcpu_prog prog;
	struct symbolizer *sym;
	bool loaded;
	unsigned int *pids;		/* processes whose maps were read */
	size_t npids, cap;
	struct offcpu_result res;
};

int offcpu_load(struct offcpu *o, struct threads_prog *tp, int max_rows, char *err, size_t errlen);
int offcpu_attach(struct offcpu *o, char *err, size_t errlen);
/* Read the maps of processes first seen off-CPU while they live (call every poll). */
void offcpu_poll(struct offcpu *o);
void offcpu_detach(struct offcpu *o);
/* Read and name the rows; add folded lines to fold (may be NULL); losses become warnings. */
int offcpu_collect(struct offcpu *o, struct folded *fold);
void offcpu_free(struct offcpu *o);

#endif
