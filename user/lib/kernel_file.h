/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* One number from a kernel file (/proc/sys, /sys): sysctls, PMU types, SMT state. */
#ifndef TMABPF_KERNEL_FILE_H
#define TMABPF_KERNEL_FILE_H

/* The integer in a /proc or /sys file (its first number), dflt when unreadable. */
int kernel_file_int(const char *path, int dflt);

#endif
