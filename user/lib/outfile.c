// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Output files created safely.  See outfile.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "lib/outfile.h"
#include "lib/warn.h"

static const char *type_name(mode_t m)
{
	return S_ISLNK(m) ? "a symbolic link (outputs never follow links)" : S_ISDIR(m) ? "a directory" :
	       S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" :
	       S_ISSOCK(m) ? "a socket" : "not a regular file";
}

static unsigned int random_u32(void)
{
	unsigned int r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = (unsigned int)time(NULL) ^ ((unsigned int)getpid() << 12) ^ (unsigned int)clock();
	return r;
}

/* "DIR" and "BASE" of path ("." when it has no '/'); malloc'd dir. */
static char *dir_of(const char *path, const char **base)
{
	const char *slash = strrchr(path, '/');

	*base = slash ? slash + 1 : path;
	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, slash - path);
}

/* The directory of the output, opened without following any symbolic link on the way (openat2
 * RESOLVE_NO_SYMLINKS): everything after is relative to this fd, so a user who owns a directory on
 * the path and swaps it for a link mid-run cannot move root's report elsewhere. */
static int open_dir(const char *what, const char *path, const char *dir, char *err, size_t errlen)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS };
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS)	/* before Linux 5.6: the last component at least */
		fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		if (e == ELOOP)
			err_set(err, errlen, "%s %s: its directory %s has a symbolic link on the way (outputs never "
				"follow links: give the real path, as realpath prints it)", what, path, dir);
		else
			err_set(err, errlen, "%s %s: cannot create a file in %s: %s", what, path, dir, strerror(e));
		return -e;
	}
	return fd;
}

static int refuse_existing(const struct outfile *o, char *err, size_t errlen)
{
	struct stat st;

	/* "/", "dir/": the directory itself */
	if (fstatat(o->dirfd, *o->base ? o->base : "", &st, AT_SYMLINK_NOFOLLOW | (*o->base ? 0 : AT_EMPTY_PATH)) == 0) {
		if (S_ISREG(st.st_mode))
			return 0;
		err_set(err, errlen, "%s %s: is %s; give a regular file's path (or '-' for standard output)", o->what,
			o->path, type_name(st.st_mode));
		return S_ISLNK(st.st_mode) ? -ELOOP : S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	}
	if (errno == ENOENT)
		return 0;
	err_set(err, errlen, "%s %s: %s", o->what, o->path, strerror(errno));
	return -errno;
}

/* An unnamed file in the directory (O_TMPFILE), else a fresh name there (o->tmp). */
static int create_unlinked(struct outfile *o, mode_t mode, char *err, size_t errlen)
{
	int fd = openat(o->dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);

	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		goto out;
	for (int tries = 0; tries < 100; tries++) {	/* the file system has no O_TMPFILE */
		free(o->tmp);
		if (asprintf(&o->tmp, ".%s.tmabpf-%08x", o->base, random_u32()) < 0) {
			o->tmp = NULL;
			errno = ENOMEM;
			break;
		}
		fd = openat(o->dirfd, o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
out:
	if (fd < 0) {
		int e = errno, dirlen = o->base - o->path > 1 ? (int)(o->base - o->path - 1) : 1;	/* "dir", "/", "." */

		free(o->tmp);
		o->tmp = NULL;
		err_set(err, errlen, "%s %s: cannot create a file in %.*s: %s", o->what, o->path, dirlen,
			o->base > o->path ? o->path : ".", strerror(e));
		return -e;
	}
	return fd;
}

/* Put the written file at o->path (rename never follows a link at the path). */
static int link_into_place(struct outfile *o)
{
	char *name = NULL, proc[64];
	int r = -ENOMEM;

	if (o->tmp) {
		r = renameat(o->dirfd, o->tmp, o->dirfd, o->base) ? -errno : 0;
		if (r)
			unlinkat(o->dirfd, o->tmp, 0);
		free(o->tmp);
		o->tmp = NULL;
		goto out;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", o->fd);
	for (int tries = 0; tries < 100; tries++) {
		free(name);
		if (asprintf(&name, ".%s.tmabpf-%08x", o->base, random_u32()) < 0) {
			name = NULL;
			r = -ENOMEM;
			break;
		}
		r = linkat(o->fd, "", o->dirfd, name, AT_EMPTY_PATH) == 0 ||
		    linkat(AT_FDCWD, proc, o->dirfd, name, AT_SYMLINK_FOLLOW) == 0 ? 0 : -errno;
		if (r != -EEXIST)
			break;
	}
	if (!r && renameat(o->dirfd, name, o->dirfd, o->base)) {
		r = -errno;
		unlinkat(o->dirfd, name, 0);
	}
out:
	if (!r)
		o->linked = true;
	free(name);
	return r;
}

static int open_append(struct outfile *o, mode_t mode, char *err, size_t errlen)
{
	struct stat st;
	int fd = openat(o->dirfd, o->base, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);

	if (fd >= 0) {
		if (fchmod(fd, mode))
			goto fail;
		return fd;
	}
	if (errno != EEXIST)
		goto fail;
	fd = openat(o->dirfd, o->base, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	if (fstat(fd, &st) || fcntl(fd, F_SETFL, O_APPEND))
		goto fail;
	if (!S_ISREG(st.st_mode)) {
		err_set(err, errlen, "%s %s: is %s; give a regular file's path", o->what, o->path, type_name(st.st_mode));
		close(fd);
		return -EINVAL;
	}
	if (st.st_uid != geteuid() || st.st_nlink != 1) {
		err_set(err, errlen, "%s %s: exists and is %s; tmabpf appends only to a file of its own user with one "
			"link (remove it, or choose another path)", o->what, o->path,
			st.st_uid != geteuid() ? "another user's" : "hard-linked");
		close(fd);
		return -EPERM;
	}
	return fd;
fail: {
		int e = errno;

		if (fd >= 0)
			close(fd);
		err_set(err, errlen, "%s %s: cannot open for appending: %s", o->what, o->path,
			e == ELOOP ? "it is a symbolic link (outputs never follow links)" : strerror(e));
		return -e;
	}
}

int outfile_open(struct outfile *o, const char *what, const char *path, enum outfile_kind kind, mode_t mode,
		 char *err, size_t errlen)
{
	const char *base;
	char *dir;
	int r;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->dirfd = -1;
	o->what = what;
	o->kind = kind;
	if (!path || !*path) {
		err_set(err, errlen, "%s: empty file name", what);
		return -EINVAL;
	}
	if (!strcmp(path, "-")) {
		o->f = stdout;
		o->linked = true;
		return 0;
	}
	if (!(o->path = strdup(path)) || !(dir = dir_of(path, &base)))
		return outfile_abort(o), -ENOMEM;
	o->base = o->path + (base - path);
	o->dirfd = open_dir(what, path, dir, err, errlen);
	free(dir);
	if (o->dirfd < 0 || (r = refuse_existing(o, err, errlen))) {
		r = o->dirfd < 0 ? o->dirfd : r;
		outfile_abort(o);
		return r;
	}
	if (kind == OUTFILE_APPEND) {
		o->fd = open_append(o, mode, err, errlen);
		o->linked = true;
	} else {
		o->fd = create_unlinked(o, mode, err, errlen);
		if (o->fd >= 0 && fchmod(o->fd, mode)) {
			r = -errno;
			err_set(err, errlen, "%s %s: chmod: %s", what, path, strerror(-r));
			outfile_abort(o);
			return r;
		}
	}
	if (o->fd < 0) {
		r = o->fd;
		outfile_abort(o);
		return r;
	}
	if (kind == OUTFILE_STREAM && (r = link_into_place(o))) {
		err_set(err, errlen, "%s %s: cannot create it: %s", what, path, strerror(-r));
		outfile_abort(o);
		return r;
	}
	o->f = fdopen(o->fd, kind == OUTFILE_APPEND ? "a" : "w");
	if (!o->f) {
		r = -errno;
		err_set(err, errlen, "%s %s: %s", what, path, strerror(-r));
		outfile_abort(o);
		return r;
	}
	return 0;
}

bool outfile_is_open(const struct outfile *o)
{
	return o->f != NULL;
}

static void note_errno(struct outfile *o, int e)
{
	if (!o->write_errno)
		o->write_errno = e ? e : EIO;
}

static int say_failed(const struct outfile *o, char *err, size_t errlen)
{
	const char *left = o->f == stdout ? "" : o->kind == OUTFILE_AT_END ?
			   " (nothing written; a previous file there is left as it was)" :
			   o->kind == OUTFILE_STREAM ? " (the file is incomplete)" : " (the last record may be partial)";

	err_set(err, errlen, "%s %s: writing failed: %s%s", o->what, o->f == stdout ? "to standard output" : o->path,
		strerror(o->write_errno), left);
	return -o->write_errno;
}

int outfile_flush(struct outfile *o, char *err, size_t errlen)
{
	if (!o->f)
		return 0;
	if (fflush(o->f))
		note_errno(o, errno);
	if (ferror(o->f))
		note_errno(o, errno);
	return o->write_errno ? say_failed(o, err, errlen) : 0;
}

int outfile_commit(struct outfile *o, char *err, size_t errlen)
{
	int r = 0;

	if (!o->f)
		return 0;
	outfile_flush(o, NULL, 0);
	if (o->f == stdout) {
		r = o->write_errno ? say_failed(o, err, errlen) : 0;
		o->f = NULL;
		return r;
	}
	if (!o->write_errno && fsync(o->fd) && errno != EINVAL && errno != EROFS)
		note_errno(o, errno);
	if (o->write_errno)
		r = say_failed(o, err, errlen);
	else if (!o->linked && (r = link_into_place(o)))
		err_set(err, errlen, "%s %s: cannot put the file in place: %s", o->what, o->path, strerror(-r));
	if (fclose(o->f) && !r) {	/* after a successful flush and sync: hardly ever */
		note_errno(o, errno);
		r = say_failed(o, err, errlen);
	}
	o->f = NULL;
	o->fd = -1;	/* closed with f */
	outfile_abort(o);
	return r;
}

void outfile_abort(struct outfile *o)
{
	if (o->f && o->f != stdout)
		fclose(o->f);
	else if (!o->f && o->path && o->fd >= 0)	/* (a zeroed, never opened outfile has fd 0) */
		close(o->fd);
	if (o->tmp && o->dirfd >= 0)
		unlinkat(o->dirfd, o->tmp, 0);
	if (o->path && o->dirfd >= 0)
		close(o->dirfd);
	free(o->tmp);
	free(o->path);
	o->f = NULL;
	o->fd = -1;
	o->dirfd = -1;
	o->tmp = NULL;
	o->path = NULL;
	o->base = NULL;
}

int outfile_parse_mode(const char *s, mode_t *mode, char *err, size_t errlen)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 8);
	if (errno || end == s || *end || *s == '-' || *s == '+' || v > 0777) {
		err_set(err, errlen, "bad --mode '%s': expected octal permission bits such as 600 or 0640", s);
		return -EINVAL;
	}
	*mode = (mode_t)v;
	return 0;
}
