/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tmabpf list [--cpu NAME]: the CPU, its recipe, counters, TMA events and libpfm4 events. */
#ifndef TMABPF_CMD_LIST_H
#define TMABPF_CMD_LIST_H

/* argv[0] is "list".  Returns the exit code. */
int cmd_list(int argc, char **argv);

#endif
