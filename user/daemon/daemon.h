/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* 'tmabpf daemon': system-wide, always-on accounting served to Prometheus. */
#ifndef TMABPF_DAEMON_H
#define TMABPF_DAEMON_H

int cmd_daemon(int argc, char **argv);

#endif
