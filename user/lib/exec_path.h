/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* exec_path: the file execvp() runs for a command name (its own PATH search). */
#ifndef TMABPF_EXEC_PATH_H
#define TMABPF_EXEC_PATH_H
#include <stddef.h>

/* cmd with a '/' is itself; else the first executable regular file named cmd in $PATH
 * (/usr/local/bin:/usr/bin:/bin when unset).  0 and out filled, or -ENOENT. */
int exec_path_find(const char *cmd, char *out, size_t outlen);

#endif
