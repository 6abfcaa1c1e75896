/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* /debug/pprof/profile. */
#ifndef TMABPF_DAEMON_PROFILE_H
#define TMABPF_DAEMON_PROFILE_H
#include "daemon/daemon_state.h"

/* Start the profile asked for, or answer it once its seconds are over (now: CLOCK_MONOTONIC ns). */
void daemon_profile_poll(struct daemon *D, unsigned long long now);

#endif
