/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * user_file: open a file that another user may have put at a path (a profiled process' library, its
 * debug file, its perf map) without opening anything else there.
 *
 * The path is first opened with O_PATH, which opens nothing (no device's open routine runs: a
 * /dev/watchdog or /dev/ptmx planted there behind a symbolic link is never opened; a FIFO never
 * blocks); only a regular file is then opened for reading, through /proc/self/fd, so the file read
 * is the very inode checked.
 */
#ifndef TMABPF_USER_FILE_H
#define TMABPF_USER_FILE_H
#include <sys/stat.h>

/* The fd (O_RDONLY|O_CLOEXEC) of the regular file at path, st filled (may be NULL); else -errno:
 * -EINVAL when something other than a regular file is there. extra_flags: O_NOFOLLOW (a final
 * symbolic link is refused, -ELOOP). */
int user_file_open(const char *path, int extra_flags, struct stat *st);

#endif
