/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The profiling run: options -> the collectors' table -> the poll loop -> reports. */
#ifndef TMABPF_RUN_H
#define TMABPF_RUN_H
#include "run/options.h"

/* Returns the process exit status (the command's with '-- COMMAND'). */
int run_profile(struct options *o);

#endif
