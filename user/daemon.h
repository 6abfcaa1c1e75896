/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* 'tmabpf daemon': system-wide, always-on accounting served to Prometheus. */
#ifndef TMABPF_DAEMON_H
#define TMABPF_DAEMON_H

/* How the budget drives a sampler: set when a sampler is built in (NULL today). */
struct daemon_sampler {
	int (*set_rate)(void *ctx, double hz);		/* (re)open the sampling events at hz; 0 on success */
	unsigned long long (*run_ns)(void *ctx);	/* the sampling programs' BPF run time so far */
	void *ctx;
};

int cmd_daemon(int argc, char **argv);

#endif
