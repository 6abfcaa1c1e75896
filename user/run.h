/* SPDX-License-Identifier: MIT */
/* The profiling run: set up counters and BPF, follow the target, report. */
#ifndef TMABPF_RUN_H
#define TMABPF_RUN_H
#include "cli.h"

/* Returns the process exit status (the command's with '-- COMMAND'). */
int run_profile(struct options *o);

#endif
