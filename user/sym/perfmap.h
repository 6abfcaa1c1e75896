/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * perfmap: JIT symbols from a perf map file (/tmp/perf-PID.map), as written
 * by V8 (--perf-basic-prof), oneDNN (DNNL_JIT_PROFILE=1), the JVM's
 * perf-map-agent, LuaJIT, ...: one "START SIZE NAME" line per code region,
 * START and SIZE in hex (with or without 0x).  JIT compilers reuse memory:
 * where regions overlap, the line written last wins.
 *
 * The file belongs to the profiled process' user, and tmabpf runs as root:
 * it is opened without following a link and without blocking (a FIFO), read
 * only when it is a regular file with one link (a root file hard-linked into
 * /tmp is not root's perf map) owned by that user or root and at most
 * PERFMAP_MAX_BYTES long, lines longer than PERFMAP_MAX_LINE are skipped
 * (counted as bad) and at most PERFMAP_MAX_SYMS regions are kept.
 */
#ifndef TMABPF_PERFMAP_H
#define TMABPF_PERFMAP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define PERFMAP_MAX_BYTES (64ll << 20)
#define PERFMAP_MAX_LINE 4096
#define PERFMAP_MAX_SYMS (1u << 20)

struct perfmap_sym {
	uint64_t start, size;
	char *name;
	size_t line;		/* order in the file: later lines win */
};

struct perfmap {
	struct perfmap_sym *syms;	/* sorted by start, then line */
	size_t nr;
	uint64_t *max_end;	/* [i]: largest end among syms[0..i] (bounds the backward search) */
	size_t bad_lines;	/* lines that were not "START SIZE NAME", or too long */
	bool truncated;		/* PERFMAP_MAX_SYMS regions or PERFMAP_MAX_BYTES read: the rest left out */
	char *path;
	off_t file_size;	/* at load, to notice appends */
	long long mtime_ns;
};

/*
 * Open path for perfmap_read when it is a regular file owned by root or by one of the nr uids (the
 * process' real, effective, saved and file-system uids), within PERFMAP_MAX_BYTES: the fd, m's
 * path, size and time set.  Quick (never blocks: a FIFO is not opened for reading), so that the
 * read, which takes ~0.5 s for a 60 MiB map, can be done elsewhere (symload.c's thread).
 * -ENOENT when the file does not exist; other negative errnos with one line in err (-EINVAL not
 * a regular file, -ELOOP a symbolic link, -EPERM another user's file or several hard links,
 * -EFBIG too big).
 */
int perfmap_open(struct perfmap *m, const char *path, const uid_t *uids, size_t nr, char *err, size_t errlen);
/* Read the file perfmap_open gave fd of (closed): 0, or -errno with one line in err (m freed). */
int perfmap_read(struct perfmap *m, int fd, char *err, size_t errlen);
/* Parse at most PERFMAP_MAX_BYTES of f (0, or -ENOMEM). */
int perfmap_parse(struct perfmap *m, FILE *f);
/* The region holding addr (the latest written when several do), or NULL. */
const struct perfmap_sym *perfmap_lookup(const struct perfmap *m, uint64_t addr);
/* The file grew or changed since it was loaded (or disappeared). */
bool perfmap_changed(const struct perfmap *m);
void perfmap_free(struct perfmap *m);

#endif
