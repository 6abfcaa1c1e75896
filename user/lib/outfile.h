/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * outfile: the files tmabpf writes (--json, --folded, --trace, the daemon's
 * --jsonl), created so that a root tmabpf cannot be turned against the
 * machine by another user's plant in a shared directory such as /tmp:
 *
 *   - a path that exists must be a regular file: a symbolic link, FIFO,
 *     directory or device is refused (no link is followed, no open blocks);
 *   - the directory is opened once, without following a symbolic link
 *     anywhere on its path (openat2 RESOLVE_NO_SYMLINKS), and everything
 *     after is relative to it: a directory swapped for a link mid-run does
 *     not move the file;
 *   - a new report is written to an unnamed file in the target's directory
 *     (O_TMPFILE; else a fresh O_EXCL name) and renamed over the path, so a
 *     planted link or hard link is replaced, never written through, and a
 *     reader never sees half a report (OUTFILE_AT_END), or renamed at once so
 *     that it grows in place (OUTFILE_STREAM: the trace);
 *   - OUTFILE_APPEND (the daemon's --jsonl) appends to an existing file only
 *     when it is a regular file of ours with one link, else creates it;
 *   - files get mode 0600 unless --mode says otherwise (umask not applied);
 *   - every write, flush and close is checked: a full disk is an error, the
 *     previous file is left as it was and the unfinished one removed.
 *
 * "-" is standard output (its write errors are reported too).  Opening
 * checks writability, so a run opens its outputs before it starts.
 * Functions return 0 or a negative errno with one line in (err, errlen).
 */
#ifndef TMABPF_OUTFILE_H
#define TMABPF_OUTFILE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#define OUTFILE_DEFAULT_MODE 0600

enum outfile_kind {
	OUTFILE_AT_END,		/* appears at the path when committed */
	OUTFILE_STREAM,		/* appears at the path when opened, then grows */
	OUTFILE_APPEND,		/* appended to */
};

struct outfile {
	FILE *f;		/* write here */
	const char *what;	/* "--json", for messages */
	char *path;
	const char *base;	/* its last component, in path */
	char *tmp;		/* named temporary in the directory (no O_TMPFILE), NULL when none */
	int dirfd;		/* the directory, -1 for stdout */
	int fd;			/* -1 for stdout */
	int write_errno;	/* first failed write or flush */
	bool linked;		/* the file is at path already */
	enum outfile_kind kind;
};

/* Open path for what ("--json"); mode: the file's permission bits. */
int outfile_open(struct outfile *o, const char *what, const char *path, enum outfile_kind kind, mode_t mode,
		 char *err, size_t errlen);
/* Flush and look for a failed write so far (long-lived files: after each interval). */
int outfile_flush(struct outfile *o, char *err, size_t errlen);
/* Flush, sync, close and put the file at its path.  On any failure the
 * previous file at path is left as it was and the new one removed. */
int outfile_commit(struct outfile *o, char *err, size_t errlen);
/* Close without putting anything at path (a run that failed to start); a no-op on a zeroed
 * outfile that was never opened, or one committed. */
void outfile_abort(struct outfile *o);
bool outfile_is_open(const struct outfile *o);

/* Parse an octal --mode ("600", "0640"): 0, or -EINVAL with one line in err. */
int outfile_parse_mode(const char *s, mode_t *mode, char *err, size_t errlen);

#endif
