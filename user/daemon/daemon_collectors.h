/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The daemon's table of collectors: its accounting, event sampling, uprobes, the sampler, and the
 * aggregation of exited threads. */
#ifndef TMABPF_DAEMON_COLLECTORS_H
#define TMABPF_DAEMON_COLLECTORS_H
#include "daemon/daemon_state.h"

/* D->table for D->acct. */
void daemon_collectors_table(struct daemon *D);

#endif
