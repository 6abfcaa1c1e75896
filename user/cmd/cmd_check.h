/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tmabpf check [--cpu NAME] [--loops N]: what this host can do, one line per
 * item, and on a PMU host a calibrated loop against perf stat. */
#ifndef TMABPF_CMD_CHECK_H
#define TMABPF_CMD_CHECK_H

/* argv[0] is "check".  Exit status: 0, 1 when a line FAILs, 2 for bad usage. */
int cmd_check(int argc, char **argv);

#endif
