/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tmabpf roofs: measure this host's roofs with likwid-bench, or show the kept ones. */
#ifndef TMABPF_CMD_ROOFS_H
#define TMABPF_CMD_ROOFS_H

int cmd_roofs(int argc, char **argv);

#endif
