/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The daemon's cost against --max-overhead. */
#ifndef TMABPF_DAEMON_OVERHEAD_H
#define TMABPF_DAEMON_OVERHEAD_H
#include "daemon/daemon_state.h"

/* After a refresh at now (CLOCK_MONOTONIC ns): the costs over the last interval (at least half a
 * second), the budget's step, what it sheds, said in one line each. */
void daemon_overhead_update(struct daemon *D, unsigned long long now);

#endif
