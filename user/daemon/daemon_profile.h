/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* /debug/pprof/profile. */
#ifndef TMABPF_DAEMON_PROFILE_H
#define TMABPF_DAEMON_PROFILE_H
#include "daemon/daemon_state.h"

/* Start the profiles asked for (up to HTTP_PROFILES_AT_ONCE at once, each its own window), drop
 * those whose clients went away, answer each once its seconds are over (now: CLOCK_MONOTONIC ns). */
void daemon_profile_poll(struct daemon *D, unsigned long long now);

#endif
