/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tmabpf analyze FILE.csv [--cpu NAME] [--json] [--smt on|off] [--core-wide yes|no] [--tma=N]:
 * TMA of counts perf stat wrote. */
#ifndef TMABPF_CMD_ANALYZE_H
#define TMABPF_CMD_ANALYZE_H

/* argv[0] is "analyze".  Returns the exit code: 0, or 2 with one line on stderr. */
int cmd_analyze(int argc, char **argv);

#endif
