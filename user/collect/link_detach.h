/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Destroying many BPF links at once. */
#ifndef TMABPF_LINK_DETACH_H
#define TMABPF_LINK_DETACH_H
#include <bpf/libbpf.h>

/*
 * bpf_link__destroy() every non-NULL link of links[0..n), concurrently.
 * Detaching a uprobe link waits for an RCU grace period (tens of ms; one per
 * classic uprobe), so doing them one after the other makes Ctrl-C slow;
 * concurrent detaches share their grace periods.  Falls back to one by one
 * when a thread cannot be started.
 */
void link_detach_all(struct bpf_link **links, int n);
/* The same for links held as bare fds (created with bpf_link_create()): close
 * every fd >= 0 of fds[0..n), concurrently, and set them to -1. */
void link_fds_close_all(int *fds, int n);

#endif
