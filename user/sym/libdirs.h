/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * libdirs: the directories a target loads libraries from, for a bare --uprobe
 * library name that nothing maps yet: the directories of its executable and
 * of the files it maps, their DT_RUNPATH (else DT_RPATH, $ORIGIN expanded),
 * and its LD_LIBRARY_PATH.  A file of that name there is probed before any
 * process maps it (uprobes attach to the file's inode), so a library the
 * target dlopens later has its first call counted.  The list grows as the
 * target maps files from more directories (libdirs_add_object).
 */
#ifndef TMABPF_LIBDIRS_H
#define TMABPF_LIBDIRS_H
#include <stddef.h>

struct libdirs {
	char **dirs;		/* absolute, in the order learned, each once */
	size_t n, cap;
};

/* A command about to run: its executable (found in PATH as execvp does) and our LD_LIBRARY_PATH, which
 * it inherits. */
void libdirs_of_command(struct libdirs *d, const char *cmd);
/* A running process: /proc/PID/exe, the files it maps, and LD_LIBRARY_PATH from /proc/PID/environ. */
void libdirs_of_process(struct libdirs *d, int pid);
/* An ELF file the target mapped: its directory and its run path.  Returns how many directories were new. */
int libdirs_add_object(struct libdirs *d, const char *path);
/* Each regular file in dirs[from..n) that bare library name names (maps_watch_name_matches), as DIR/FILE. */
typedef void (*libdirs_fn)(void *ctx, const char *path);
int libdirs_find(const struct libdirs *d, size_t from, const char *name, libdirs_fn fn, void *ctx);
void libdirs_free(struct libdirs *d);

#endif
