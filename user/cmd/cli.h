/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tmabpf [OPTIONS] [TARGET]: the profiling run's command line into struct options. */
#ifndef TMABPF_CLI_H
#define TMABPF_CLI_H
#include <stdio.h>
#include "run/options.h"

/* Parse argv. 0 on success, EXIT_USAGE after printing one line on error,
 * or -1 when --help/--version was handled (exit 0). */
int cli_parse(int argc, char **argv, struct options *o);
void cli_usage(FILE *f);

#endif
