/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* proc_environ: a variable of a process' initial environment (/proc/PID/environ). */
#ifndef TMABPF_PROC_ENVIRON_H
#define TMABPF_PROC_ENVIRON_H
#include <stddef.h>

/* NAME's value in process pid's environment into out (cut to len - 1 bytes, NUL-terminated): 0, or
 * -1 when it is not set or the file cannot be read (the first 64 KiB are read). */
int proc_environ_get(int pid, const char *name, char *out, size_t len);

#endif
