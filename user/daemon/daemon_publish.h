/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What the daemon publishes at each refresh. */
#ifndef TMABPF_DAEMON_PUBLISH_H
#define TMABPF_DAEMON_PUBLISH_H
#include "daemon/daemon_state.h"

/* tmabpf's own process: memory, CPU, open fds, its BPF maps' kernel memory. */
void daemon_publish_self(struct daemon_self *s);
/* The metrics to the HTTP server, and --jsonl's line. */
void daemon_publish(struct daemon *D);
/* TMA's ratios exported only while every event of the recipe counts (said when that changes). */
void daemon_publish_tma_check(struct daemon *D);

#endif
