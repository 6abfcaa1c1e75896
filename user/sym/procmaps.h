/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * procmaps: parse /proc/PID/maps.
 *
 * Every function returns 0 (or a count) on success and a negative errno on
 * failure; functions taking (err, errlen) fill it with one line for the user.
 */
#ifndef __TMABPF_PROCMAPS_H
#define __TMABPF_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* procmaps_entry.flags */
#define PROCMAPS_F_ANON		(1u << 0)  /* no backing file (inode 0, not a /path) */
#define PROCMAPS_F_SPECIAL	(1u << 1)  /* "[...]" pseudo path: [heap] [stack] [vdso] [anon:x] ... */
#define PROCMAPS_F_HEAP		(1u << 2)  /* [heap] */
#define PROCMAPS_F_STACK	(1u << 3)  /* [stack] or [stack:TID] */
#define PROCMAPS_F_VDSO		(1u << 4)  /* [vdso] or [vsyscall] (kernel-provided code) */
#define PROCMAPS_F_VVAR		(1u << 5)  /* [vvar], [vvar_vclock] */
#define PROCMAPS_F_DELETED	(1u << 6)  /* file mapping whose path ends in " (deleted)" */
#define PROCMAPS_F_JIT		(1u << 7)  /* anonymous + executable, not vdso: JIT code */
#define PROCMAPS_F_EXEC		(1u << 8)  /* perms has 'x' */
#define PROCMAPS_F_FILE		(1u << 9)  /* backed by a file with an absolute path */

struct procmaps_entry {
	uint64_t start;		/* first address */
	uint64_t end;		/* one past the last address */
	uint64_t offset;	/* file offset of start */
	char perms[5];		/* "r-xp" */
	unsigned int dev_major;
	unsigned int dev_minor;
	uint64_t inode;
	char *path;		/* as printed, " (deleted)" stripped; "" if none */
	unsigned int flags;	/* PROCMAPS_F_* */
};

struct procmaps {
	int pid;			/* 0 when parsed from a string */
	size_t nr;
	struct procmaps_entry *entries;	/* sorted by start, as the kernel prints */
};

/* Read /proc/PID/maps. pid <= 0 means the calling process (/proc/self). */
int procmaps_load(int pid, struct procmaps *out, char *err, size_t errlen);

/* Parse maps text (several lines). Used by procmaps_load and tests. */
int procmaps_parse(const char *text, struct procmaps *out, char *err, size_t errlen);

/* Parse one line. e->path is malloc()ed on success (free() it). */
int procmaps_parse_line(const char *line, struct procmaps_entry *e);

void procmaps_free(struct procmaps *m);

/*
 * Keep in fresh the entries of old (an earlier read of the same process) that
 * overlap none of fresh's: code unmapped since (dlclose, a JIT freeing a
 * buffer) still names the addresses sampled while it was mapped.  Moves those
 * entries (and their paths) out of old, which is freed.  0 or -ENOMEM (fresh
 * and old then unchanged).
 */
int procmaps_merge_stale(struct procmaps *fresh, struct procmaps *old);

/* /proc/PID/stat read into buf: the text from the ')' that ends its comm on, or NULL (gone). */
const char *proc_stat_fields(int pid, char *buf, size_t len);
/* The start time of process pid (field 22 of /proc/PID/stat, clock ticks since
 * boot): with the pid, it tells one process from a later one that reuses its
 * pid.  0 when it cannot be read (the process is gone). */
unsigned long long procmaps_start_time(int pid);

/* The mapping containing addr (binary search), or NULL. */
const struct procmaps_entry *procmaps_find(const struct procmaps *m, uint64_t addr);

/* addr -> offset in the mapped file (only meaningful for file mappings). */
static inline uint64_t procmaps_file_offset(const struct procmaps_entry *e, uint64_t addr)
{
	return addr - e->start + e->offset;
}

/* Short text for an entry's kind: "file", "anon", "heap", "jit", "vdso", ... */
const char *procmaps_kind_str(const struct procmaps_entry *e);

/*
 * "/proc/PID/root<path>" (or path itself when pid <= 0): the way to reach a
 * file named in a target's maps when the target lives in another mount
 * namespace (container). Returns -ENAMETOOLONG if buf is too small.
 */
int procmaps_root_path(int pid, const char *path, char *buf, size_t buflen);

/*
 * Open the regular file at a path of pid's through /proc/PID/root (user_file_open: nothing else
 * there is opened; flags: O_NOFOLLOW or 0). Returns the fd (O_RDONLY) or a negative errno with err
 * filled.
 */
int procmaps_open_file(int pid, const char *path, int flags, char *err, size_t errlen);

/*
 * Open the file mapped at e in pid: through /proc/PID/map_files (the inode mapped, whatever its
 * path holds now), else through its path when the file there is still the one mapped (the maps'
 * device and inode).  A regular file only.  The fd (O_RDONLY), or -errno: -ESTALE when another
 * file is at the path now.
 */
int procmaps_open_mapped(int pid, const struct procmaps_entry *e);

#endif /* __TMABPF_PROCMAPS_H */
