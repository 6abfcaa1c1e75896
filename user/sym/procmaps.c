// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* procmaps: parse /proc/PID/maps. See procmaps.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "lib/grow.h"
#include "lib/warn.h"
#include "sym/procmaps.h"
#include "sym/user_file.h"

#define DELETED_SUFFIX " (deleted)"

static bool str_starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static unsigned int classify(const char *path, uint64_t inode, const char *perms)
{
	unsigned int f = 0;

	if (perms[2] == 'x')
		f |= PROCMAPS_F_EXEC;
	if (path[0] == '/') {
		f |= PROCMAPS_F_FILE;
		/* memfd-backed executable memory: JIT code double-mapped */
		if ((f & PROCMAPS_F_EXEC) && str_starts(path, "/memfd:"))
			f |= PROCMAPS_F_JIT;
		return f;
	}
	f |= PROCMAPS_F_ANON;
	if (path[0] == '[') {
		f |= PROCMAPS_F_SPECIAL;
		if (!strcmp(path, "[heap]"))
			f |= PROCMAPS_F_HEAP;
		else if (str_starts(path, "[stack"))
			f |= PROCMAPS_F_STACK;
		else if (!strcmp(path, "[vdso]") || !strcmp(path, "[vsyscall]"))
			f |= PROCMAPS_F_VDSO;
		else if (str_starts(path, "[vvar"))
			f |= PROCMAPS_F_VVAR;
	}
	(void)inode;
	if ((f & PROCMAPS_F_EXEC) && !(f & (PROCMAPS_F_VDSO | PROCMAPS_F_VVAR)))
		f |= PROCMAPS_F_JIT;
	return f;
}

int procmaps_parse_line(const char *line, struct procmaps_entry *e)
{
	unsigned long long start, end, off, ino;
	unsigned int maj, min;
	char perms[8];
	const char *p;
	size_t len;
	int n = 0;

	memset(e, 0, sizeof(*e));
	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu%n",
		   &start, &end, perms, &off, &maj, &min, &ino, &n) != 7 || n <= 0)
		return -EINVAL;
	if (strlen(perms) != 4 || end < start)
		return -EINVAL;

	p = line + n;
	while (*p == ' ' || *p == '\t')
		p++;
	len = strcspn(p, "\n");

	e->path = strndup(p, len);
	if (!e->path)
		return -ENOMEM;
	len = strlen(e->path);
	if (len > strlen(DELETED_SUFFIX) &&
	    !strcmp(e->path + len - strlen(DELETED_SUFFIX), DELETED_SUFFIX)) {
		e->path[len - strlen(DELETED_SUFFIX)] = '\0';
		e->flags |= PROCMAPS_F_DELETED;
	}
	e->start = start;
	e->end = end;
	e->offset = off;
	memcpy(e->perms, perms, 5);
	e->dev_major = maj;
	e->dev_minor = min;
	e->inode = ino;
	e->flags |= classify(e->path, e->inode, e->perms);
	return 0;
}

static int append_entry(struct procmaps *m, size_t *cap, const struct procmaps_entry *e)
{
	struct procmaps_entry *tmp = grow(m->entries, cap, m->nr, sizeof(*tmp), 64);

	if (!tmp)
		return -ENOMEM;
	m->entries = tmp;
	m->entries[m->nr++] = *e;
	return 0;
}

static int parse_stream(FILE *f, const char *what, struct procmaps *m, char *err, size_t errlen)
{
	struct procmaps_entry e;
	size_t cap = 0, linesz = 0, lineno = 0;
	char *line = NULL;
	int ret = 0;

	while (getline(&line, &linesz, f) > 0) {
		lineno++;
		if (line[0] == '\n')
			continue;
		ret = procmaps_parse_line(line, &e);
		if (ret == -EINVAL) {
			err_set(err, errlen, "%s: cannot parse line %zu: '%.*s'", what, lineno,
				(int)strcspn(line, "\n"), line);
			break;
		}
		if (!ret)
			ret = append_entry(m, &cap, &e);
		if (ret) {
			free(e.path);
			if (ret == -ENOMEM)
				err_set(err, errlen, "%s: out of memory", what);
			break;
		}
	}
	if (!ret && ferror(f)) {
		ret = -errno ?: -EIO;
		err_set(err, errlen, "read %s: %s", what, strerror(-ret));
	}
	free(line);
	if (ret)
		procmaps_free(m);
	return ret;
}

int procmaps_parse(const char *text, struct procmaps *out, char *err, size_t errlen)
{
	FILE *f;
	int ret;

	memset(out, 0, sizeof(*out));
	f = fmemopen((void *)text, strlen(text), "r");
	if (!f) {
		ret = -errno;
		err_set(err, errlen, "fmemopen: %s", strerror(errno));
		return ret;
	}
	ret = parse_stream(f, "maps text", out, err, errlen);
	fclose(f);
	return ret;
}

int procmaps_load(int pid, struct procmaps *out, char *err, size_t errlen)
{
	char path[64];
	FILE *f;
	int ret;

	memset(out, 0, sizeof(*out));
	if (pid > 0)
		snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/maps");
	f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		if (ret == -ENOENT)
			err_set(err, errlen, "open %s: %s (is pid %d running?)", path,
				strerror(-ret), pid);
		else if (ret == -EACCES || ret == -EPERM)
			err_set(err, errlen, "open %s: %s (run as root or with CAP_SYS_PTRACE)",
				path, strerror(-ret));
		else
			err_set(err, errlen, "open %s: %s", path, strerror(-ret));
		return ret;
	}
	ret = parse_stream(f, path, out, err, errlen);
	fclose(f);
	if (!ret)
		out->pid = pid > 0 ? pid : getpid();
	return ret;
}

void procmaps_free(struct procmaps *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nr; i++)
		free(m->entries[i].path);
	free(m->entries);
	m->entries = NULL;
	m->nr = 0;
}

int procmaps_merge_stale(struct procmaps *fresh, struct procmaps *old)
{
	struct procmaps_entry *v;
	size_t n = 0, i = 0, j = 0, k = 0, kept = 0;

	for (i = 0; i < old->nr; i++) {
		const struct procmaps_entry *o = &old->entries[i];

		while (j < fresh->nr && fresh->entries[j].end <= o->start)
			j++;
		kept += !(j < fresh->nr && fresh->entries[j].start < o->end);
	}
	if (!kept) {
		procmaps_free(old);
		return 0;
	}
	v = malloc((fresh->nr + kept) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	/* both sorted by start: merge, taking an old entry only where no fresh one overlaps it */
	for (i = 0, j = 0, k = 0; i < old->nr || k < fresh->nr;) {
		struct procmaps_entry *o = i < old->nr ? &old->entries[i] : NULL;

		if (o && (k >= fresh->nr || o->start < fresh->entries[k].start)) {
			while (j < fresh->nr && fresh->entries[j].end <= o->start)
				j++;
			if (!(j < fresh->nr && fresh->entries[j].start < o->end)) {
				v[n++] = *o;
				o->path = NULL;	/* moved */
			}
			i++;
		} else {
			v[n++] = fresh->entries[k++];
		}
	}
	free(fresh->entries);
	fresh->entries = v;
	fresh->nr = n;
	procmaps_free(old);
	return 0;
}

const char *proc_stat_fields(int pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	return strrchr(buf, ')');	/* comm may hold anything: the last ')' ends it */
}

unsigned long long procmaps_start_time(int pid)
{
	char buf[1024];
	unsigned long long t = 0;
	const char *p = proc_stat_fields(pid, buf, sizeof(buf));

	/* after "(comm)": state is field 3, starttime field 22 */
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		t = strtoull(p + 1, NULL, 10);
	return t;
}

const struct procmaps_entry *procmaps_find(const struct procmaps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct procmaps_entry *e = &m->entries[mid];

		if (addr < e->start)
			hi = mid;
		else if (addr >= e->end)
			lo = mid + 1;
		else
			return e;
	}
	return NULL;
}

const char *procmaps_kind_str(const struct procmaps_entry *e)
{
	if (e->flags & PROCMAPS_F_VDSO)
		return "vdso";
	if (e->flags & PROCMAPS_F_VVAR)
		return "vvar";
	if (e->flags & PROCMAPS_F_JIT)
		return "jit";
	if (e->flags & PROCMAPS_F_HEAP)
		return "heap";
	if (e->flags & PROCMAPS_F_STACK)
		return "stack";
	if (e->flags & PROCMAPS_F_DELETED)
		return "deleted";
	if (e->flags & PROCMAPS_F_FILE)
		return "file";
	return "anon";
}

int procmaps_root_path(int pid, const char *path, char *buf, size_t buflen)
{
	int n;

	if (pid > 0)
		n = snprintf(buf, buflen, "/proc/%d/root%s%s", pid, path[0] == '/' ? "" : "/", path);
	else
		n = snprintf(buf, buflen, "%s", path);
	if (n < 0 || (size_t)n >= buflen)
		return -ENAMETOOLONG;
	return 0;
}

int procmaps_open_file(int pid, const char *path, int flags, char *err, size_t errlen)
{
	char full[4096 + 64];
	int fd, ret;

	ret = procmaps_root_path(pid, path, full, sizeof(full));
	if (ret) {
		err_set(err, errlen, "%s: path too long", path);
		return ret;
	}
	fd = user_file_open(full, flags, NULL);	/* a regular file only: nothing else there is opened */
	if (fd < 0) {
		ret = fd;
		if (ret == -EACCES || ret == -EPERM)
			err_set(err, errlen, "open %s: %s (run as root to read other processes' files)",
				full, strerror(-ret));
		else if (ret == -EINVAL || ret == -ELOOP)
			err_set(err, errlen, "open %s: not a regular file", full);
		else
			err_set(err, errlen, "open %s: %s (was the file deleted or replaced?)",
				full, strerror(-ret));
		return ret;
	}
	return fd;
}

int procmaps_open_mapped(int pid, const struct procmaps_entry *e)
{
	char mf[96];
	struct stat st;
	int fd;

	/* the mapping itself: the inode mapped, whatever is at its path now (root: CAP_SYS_ADMIN) */
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, e->start, e->end);
	fd = user_file_open(mf, 0, &st);
	if (fd < 0 && fd != -EINVAL) {
		char full[4096 + 64];

		/* no map_files (not root, or the mapping gone): the path, if the mapped inode is still there */
		if (procmaps_root_path(pid, e->path, full, sizeof(full)))
			return -ENAMETOOLONG;
		fd = user_file_open(full, 0, &st);
	}
	if (fd < 0)
		return fd;
	if (st.st_ino != e->inode || st.st_dev != makedev(e->dev_major, e->dev_minor)) {
		close(fd);	/* another file there now (renamed over, a link planted): not the one mapped */
		return -ESTALE;
	}
	return fd;
}
