/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#ifndef TMABPF_CMD_ANALYZE_H
#define TMABPF_CMD_ANALYZE_H
/* tmabpf analyze FILE.csv [--cpu NAME] [--json] [--smt on|off] [--core-wide yes|no] [--tma=N]
 * argv[0] is "analyze". Returns the exit code: 0, or 2 with one line on stderr. */
int cmd_analyze(int argc, char **argv);
/* tmabpf list [--cpu NAME] */
int cmd_list(int argc, char **argv);
#endif
