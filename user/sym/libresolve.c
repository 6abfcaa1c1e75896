// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* libresolve: resolve a user's library spec to a file for uprobes. See libresolve.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/grow.h"
#include "lib/path.h"
#include "lib/suggest.h"
#include "lib/warn.h"
#include "sym/elfsyms.h"
#include "sym/libresolve.h"
#include "sym/procmaps.h"

#define PMAX		LIBRESOLVE_PATH_MAX
#define ROOTED_MAX	(PMAX + 64)
#define MAX_LINKS	40
#define LDCACHE		"/etc/ld.so.cache"

/* one distinct file mapped by the target */
struct mfile {
	const struct procmaps_entry *e;	/* first mapping of the file */
	char *soname;
	bool soname_read;
	bool exec;			/* some mapping of it is executable */
};

struct ctx {
	int pid;			/* > 0: target, else -1 */
	char root[64];			/* "" or "/proc/PID/root" */
	char root_link[PMAX];		/* readlink(/proc/PID/root) if not "/" (chroot) */
	int elf_class, e_machine;	/* of the target's executable (0: unknown) */
	const char *lib;		/* what the user typed */
	struct procmaps maps;
	struct mfile *files;
	size_t nr_files;
	const char *dirs[8];		/* standard directories, in ld.so order */
	size_t nr_dirs;
	char triplet_dirs[2][64];
};

/* how a candidate was found, for the message */
enum how {
	HOW_PATH, HOW_MAPS_REALPATH, HOW_MAPS_NAME, HOW_MAPS_SONAME, HOW_MAPS_PREFIX,
	HOW_LDCACHE, HOW_DIR, HOW_DIR_PREFIX, HOW_LDCACHE_PREFIX, HOW_EXE,
};

static int copy_str(char *dst, size_t len, const char *src)
{
	int n = snprintf(dst, len, "%s", src);

	return (n < 0 || (size_t)n >= len) ? -ENAMETOOLONG : 0;
}

static int rooted(const char *root, const char *path, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s%s", root, path);

	return (n < 0 || (size_t)n >= len) ? -ENAMETOOLONG : 0;
}

/* ---- spec splitting --------------------------------------------------- */

int libresolve_split_spec(const char *spec, char *lib, size_t liblen, char *glob, size_t globlen,
			  char *err, size_t errlen)
{
	const char *sep = NULL, *p = spec;
	size_t run;

	if (!spec || !spec[0]) {
		err_set(err, errlen, "empty uprobe spec: expected LIB:FUNC_GLOB (e.g. libc.so.6:malloc)");
		return -EINVAL;
	}
	/* a run of colons of odd length starts with a separator; "::" pairs are C++ scope */
	while ((p = strchr(p, ':'))) {
		for (run = 0; p[run] == ':'; run++)
			;
		if (run % 2)
			sep = p;
		p += run;
	}
	if (!sep) {
		err_set(err, errlen, "'%s': no ':' separating library and function glob "
			"(expected LIB:FUNC_GLOB, e.g. libc.so.6:malloc or :main_loop)", spec);
		return -EINVAL;
	}
	if (!sep[1]) {
		err_set(err, errlen, "'%s': empty function glob after ':' "
			"(expected LIB:FUNC_GLOB, e.g. %.*s:malloc*)", spec, (int)(sep - spec), spec);
		return -EINVAL;
	}
	if ((size_t)(sep - spec) >= liblen || strlen(sep + 1) >= globlen) {
		err_set(err, errlen, "'%s': library or glob too long", spec);
		return -ENAMETOOLONG;
	}
	memcpy(lib, spec, sep - spec);
	lib[sep - spec] = '\0';
	strcpy(glob, sep + 1);
	return 0;
}

/* ---- paths ------------------------------------------------------------ */

static void drop_last(char *res)
{
	char *s = strrchr(res, '/');

	if (s)
		*s = '\0';
}

int libresolve_realpath_in_root(const char *root, const char *path, char *out, size_t outlen)
{
	char rest[2 * PMAX], res[PMAX] = "", full[ROOTED_MAX], target[PMAX], comp[NAME_MAX + 1];
	int links = 0;
	struct stat st;

	if (path[0] != '/')
		return -EINVAL;
	if (copy_str(rest, sizeof(rest), path))
		return -ENAMETOOLONG;
	while (rest[0]) {
		size_t clen, rlen;
		char *r = rest;
		ssize_t n;

		while (*r == '/')
			r++;
		clen = strcspn(r, "/");
		if (clen > NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(comp, r, clen);
		comp[clen] = '\0';
		memmove(rest, r + clen, strlen(r + clen) + 1);
		if (!clen || !strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			drop_last(res);
			continue;
		}
		rlen = strlen(res);
		if (rlen + 1 + clen >= sizeof(res))
			return -ENAMETOOLONG;
		res[rlen] = '/';
		memcpy(res + rlen + 1, comp, clen + 1);
		if (rooted(root, res, full, sizeof(full)))
			return -ENAMETOOLONG;
		if (lstat(full, &st))
			return -errno;
		if (!S_ISLNK(st.st_mode))
			continue;
		if (++links > MAX_LINKS)
			return -ELOOP;
		n = readlink(full, target, sizeof(target) - 1);
		if (n < 0)
			return -errno;
		target[n] = '\0';
		if (target[0] == '/')
			res[0] = '\0';
		else
			drop_last(res);
		if ((size_t)n + 1 + strlen(rest) >= sizeof(rest))
			return -ENAMETOOLONG;
		memmove(rest + n + 1, rest, strlen(rest) + 1);
		memcpy(rest, target, n);
		rest[n] = '/';
	}
	return copy_str(out, outlen, res[0] ? res : "/");
}

/* ELF class/machine of a file: 0, or -ENOEXEC if not ELF, or -errno */
static int elf_ident(const char *path, int *cls, int *machine)
{
	unsigned char h[EI_NIDENT + 4];
	int fd, ret = 0;
	ssize_t n;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, h, sizeof(h), 0);
	if (n < 0)
		ret = -errno;
	else if ((size_t)n < sizeof(h) || memcmp(h, ELFMAG, SELFMAG))
		ret = -ENOEXEC;
	close(fd);
	if (ret)
		return ret;
	*cls = h[EI_CLASS];
	/* e_machine follows e_type at offset 18, in the file's byte order */
	*machine = h[EI_DATA] == ELFDATA2MSB ? (h[18] << 8 | h[19]) : (h[19] << 8 | h[18]);
	return 0;
}

/* usable candidate: a regular ELF file for the target's class/machine */
static int check_elf(const struct ctx *c, const char *full)
{
	struct stat st;
	int cls = 0, mach = 0, ret;

	if (stat(full, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EISDIR;
	ret = elf_ident(full, &cls, &mach);
	if (ret)
		return ret;
	if (c->elf_class && (cls != c->elf_class || mach != c->e_machine))
		return -EXDEV;	/* wrong architecture (e.g. /lib32) */
	return 0;
}

/*
 * name is lib followed by a version: "libfoo.so" + ".1.13";
 * "libfoo" + ".so.1". Components after the optional ".so" start with a digit.
 */
static bool versioned_prefix(const char *name, const char *lib)
{
	size_t l = strlen(lib);
	const char *r;

	if (strncmp(name, lib, l) || !name[l])
		return false;
	r = name + l;
	if (!strncmp(r, ".so", 3) && (r[3] == '.' || !r[3]))
		r += 3;
	while (*r) {
		if (r[0] != '.' || r[1] < '0' || r[1] > '9')
			return false;
		r++;
		while (*r && *r != '.')
			r++;
	}
	return true;
}

/* ---- ld.so.cache (glibc >= 2.32 format "glibc-ld.so.cache1.1") --------- */

#define CACHE_MAGIC_NEW		"glibc-ld.so.cache"
#define CACHE_VERSION		"1.1"
#define CACHE_MAGIC_OLD		"ld.so-1.7.0"

struct cache_new_hdr {
	char magic[sizeof(CACHE_MAGIC_NEW) - 1];
	char version[sizeof(CACHE_VERSION) - 1];
	uint32_t nlibs;
	uint32_t len_strings;
	uint8_t flags;
	uint8_t pad[3];
	uint32_t extension_offset;
	uint32_t unused[3];
};

struct cache_new_entry {
	int32_t flags;
	uint32_t key, value;
	uint32_t osversion;
	uint64_t hwcap;
};

struct ldcache {
	char *buf;
	size_t len;
	const struct cache_new_hdr *hdr;	/* inside buf */
	const struct cache_new_entry *ents;
	size_t nr;
};

static int read_file(const char *path, char **bufp, size_t *lenp)
{
	struct stat st;
	char *buf;
	size_t off = 0;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size > (64 << 20)) {
		ret = -EFBIG;
		goto out;
	}
	buf = malloc(st.st_size);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	while (off < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + off, st.st_size - off);

		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			free(buf);
			goto out;
		}
		off += n;
	}
	*bufp = buf;
	*lenp = off;
out:
	close(fd);
	return ret;
}

static int ldcache_open(const char *root, struct ldcache *lc)
{
	char path[ROOTED_MAX];
	size_t off = 0;
	int ret;

	memset(lc, 0, sizeof(*lc));
	if (rooted(root, LDCACHE, path, sizeof(path)))
		return -ENAMETOOLONG;
	ret = read_file(path, &lc->buf, &lc->len);
	if (ret)
		return ret;
	/* old format followed by the new one (glibc < 2.32 "compat" caches) */
	if (lc->len >= 16 && !memcmp(lc->buf, CACHE_MAGIC_OLD, sizeof(CACHE_MAGIC_OLD) - 1)) {
		uint32_t nold;

		memcpy(&nold, lc->buf + 12, sizeof(nold));
		off = 16 + (size_t)nold * 12;
		off = (off + 7) & ~(size_t)7;	/* __alignof__(struct cache_file_new) */
	}
	ret = -EPROTO;
	if (off + sizeof(struct cache_new_hdr) > lc->len)
		goto fail;
	lc->hdr = (const struct cache_new_hdr *)(lc->buf + off);
	if (memcmp(lc->hdr->magic, CACHE_MAGIC_NEW, sizeof(lc->hdr->magic)) ||
	    memcmp(lc->hdr->version, CACHE_VERSION, sizeof(lc->hdr->version)))
		goto fail;
	lc->nr = lc->hdr->nlibs;
	if (lc->nr > (lc->len - off - sizeof(*lc->hdr)) / sizeof(struct cache_new_entry))
		goto fail;
	lc->ents = (const struct cache_new_entry *)(lc->hdr + 1);
	return 0;
fail:
	free(lc->buf);
	memset(lc, 0, sizeof(*lc));
	return ret;
}

/* string at offset off from the new header, or NULL if out of bounds */
static const char *ldcache_str(const struct ldcache *lc, uint32_t off)
{
	size_t base = (const char *)lc->hdr - lc->buf;

	if (base + off >= lc->len || !memchr(lc->buf + base + off, '\0', lc->len - base - off))
		return NULL;
	return lc->buf + base + off;
}

/*
 * Iterate the cache: mode 0 exact name, 1 versioned prefix. Calls fn for each
 * usable entry (ELF of the right class); stops when fn returns nonzero.
 */
typedef int (*ldcache_fn)(const char *key, const char *value, void *arg);

static int ldcache_walk(const struct ldcache *lc, const char *root, const char *name, int prefix,
			int cls, int mach, ldcache_fn fn, void *arg)
{
	char full[ROOTED_MAX];
	struct ctx tmp = { .elf_class = cls, .e_machine = mach };
	int pass, ret;
	size_t i;

	/* baseline entries first, then glibc-hwcaps subdirectory variants */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < lc->nr; i++) {
			const struct cache_new_entry *e = &lc->ents[i];
			const char *key = ldcache_str(lc, e->key), *val = ldcache_str(lc, e->value);

			if (!key || !val || val[0] != '/' || (pass == 0) != (e->hwcap == 0))
				continue;
			if (prefix ? !versioned_prefix(key, name) : strcmp(key, name))
				continue;
			if (rooted(root, val, full, sizeof(full)) || check_elf(&tmp, full))
				continue;
			ret = fn(key, val, arg);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static int first_cb(const char *key, const char *value, void *arg)
{
	(void)key;
	return copy_str(arg, PMAX, value) ?: 1;
}

int libresolve_ldcache_lookup(const char *root, const char *name, int elf_class, int e_machine,
			      char *out, size_t outlen)
{
	char found[PMAX];
	struct ldcache lc;
	int ret, mode;

	ret = ldcache_open(root, &lc);
	if (ret)
		return ret;
	for (mode = 0; mode < 2; mode++) {
		ret = ldcache_walk(&lc, root, name, mode, elf_class, e_machine, first_cb, found);
		if (ret)
			break;
	}
	free(lc.buf);
	if (ret < 0)
		return ret;
	if (!ret)
		return -ENOENT;
	return copy_str(out, outlen, found);
}

/* ---- target context --------------------------------------------------- */

static bool same_root_and_ns(int pid)
{
	char p[64], a[64], b[64];
	struct stat s1, s2;
	ssize_t n1, n2;

	snprintf(p, sizeof(p), "/proc/%d/root", pid);
	if (stat(p, &s1) || stat("/", &s2) || s1.st_dev != s2.st_dev || s1.st_ino != s2.st_ino)
		return false;
	snprintf(p, sizeof(p), "/proc/%d/ns/mnt", pid);
	n1 = readlink(p, a, sizeof(a) - 1);
	n2 = readlink("/proc/self/ns/mnt", b, sizeof(b) - 1);
	if (n1 < 0 || n2 < 0)
		return false;
	return n1 == n2 && !memcmp(a, b, n1);
}

static void ctx_dirs(struct ctx *c)
{
	const char *triplet = c->e_machine == EM_AARCH64 ? "aarch64-linux-gnu" :
			      c->e_machine == EM_386 ? "i386-linux-gnu" : "x86_64-linux-gnu";

	snprintf(c->triplet_dirs[0], sizeof(c->triplet_dirs[0]), "/lib/%s", triplet);
	snprintf(c->triplet_dirs[1], sizeof(c->triplet_dirs[1]), "/usr/lib/%s", triplet);
	c->dirs[c->nr_dirs++] = c->triplet_dirs[0];
	c->dirs[c->nr_dirs++] = c->triplet_dirs[1];
	if (c->elf_class != ELFCLASS32) {
		c->dirs[c->nr_dirs++] = "/lib64";
		c->dirs[c->nr_dirs++] = "/usr/lib64";
	}
	c->dirs[c->nr_dirs++] = "/lib";
	c->dirs[c->nr_dirs++] = "/usr/lib";
	c->dirs[c->nr_dirs++] = "/usr/local/lib";
}

static int ctx_init(struct ctx *c, int pid, const char *lib)
{
	char exe[64];

	memset(c, 0, sizeof(*c));
	c->pid = pid > 0 ? pid : -1;
	c->lib = lib;
	if (c->pid > 0 && c->pid != getpid() && !same_root_and_ns(c->pid)) {
		ssize_t n;

		snprintf(c->root, sizeof(c->root), "/proc/%d/root", c->pid);
		n = readlink(c->root, c->root_link, sizeof(c->root_link) - 1);
		c->root_link[n > 1 ? n : 0] = '\0';
	}
	if (c->pid > 0)
		snprintf(exe, sizeof(exe), "/proc/%d/exe", c->pid);
	else
		snprintf(exe, sizeof(exe), "/proc/self/exe");
	if (elf_ident(exe, &c->elf_class, &c->e_machine))
		c->elf_class = c->e_machine = 0;	/* unknown: accept any */
	ctx_dirs(c);
	return 0;
}

static void ctx_free(struct ctx *c)
{
	size_t i;

	for (i = 0; i < c->nr_files; i++)
		free(c->files[i].soname);
	free(c->files);
	procmaps_free(&c->maps);
}

static int ctx_load_maps(struct ctx *c, char *err, size_t errlen)
{
	size_t i, j;
	int ret;

	ret = procmaps_load(c->pid, &c->maps, err, errlen);
	if (ret)
		return ret == -ENOENT ? -ESRCH : ret;
	c->files = calloc(c->maps.nr ? c->maps.nr : 1, sizeof(*c->files));
	if (!c->files)
		return -ENOMEM;
	for (i = 0; i < c->maps.nr; i++) {
		const struct procmaps_entry *e = &c->maps.entries[i];

		if (!(e->flags & PROCMAPS_F_FILE) || !e->inode)
			continue;
		for (j = 0; j < c->nr_files; j++) {
			const struct procmaps_entry *f = c->files[j].e;

			if (f->inode == e->inode && f->dev_major == e->dev_major &&
			    f->dev_minor == e->dev_minor && !strcmp(f->path, e->path))
				break;
		}
		if (j == c->nr_files)
			c->files[c->nr_files++].e = e;
		if (e->flags & PROCMAPS_F_EXEC)
			c->files[j].exec = true;
	}
	return 0;
}

/* ---- results ---------------------------------------------------------- */

static const char *how_str(enum how how)
{
	switch (how) {
	case HOW_MAPS_SONAME: return ", matched by DT_SONAME";
	case HOW_MAPS_PREFIX: return ", matched as a versioned name";
	case HOW_LDCACHE: return "from " LDCACHE;
	case HOW_LDCACHE_PREFIX: return "versioned name from " LDCACHE;
	case HOW_DIR: return "found in ";
	case HOW_DIR_PREFIX: return "versioned name found in ";
	default: return "";
	}
}

/*
 * A maps path as the target sees it: a chrooted target's maps show paths
 * under its root directory (/srv/root/usr/lib/x.so), strip that.
 */
static const char *target_view(const struct ctx *c, const char *path)
{
	size_t l = strlen(c->root_link);

	if (l && !strncmp(path, c->root_link, l) && path[l] == '/')
		return path + l;
	return path;
}

static bool stat_is(const char *path, const struct procmaps_entry *e, bool check_id)
{
	struct stat st;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return false;
	return !check_id || (st.st_ino == e->inode && major(st.st_dev) == e->dev_major &&
			     minor(st.st_dev) == e->dev_minor);
}

/*
 * The path this process should open for a mapped file (known: its real path
 * in the target's root when a candidate matched it).
 */
static void mapped_open_path(const struct ctx *c, const struct procmaps_entry *e,
			     const char *known, char *out, size_t outlen)
{
	const char *tv = known ? known : target_view(c, e->path);
	char full[ROOTED_MAX];

	if (!(e->flags & PROCMAPS_F_DELETED)) {
		/* through the target's root, same (dev, inode) */
		if (!rooted(c->root, tv, full, sizeof(full)) && stat_is(full, e, true))
			goto found;
		/* as printed (maps show our view of a chrooted target's files) */
		if (c->root[0] && !rooted("", e->path, full, sizeof(full)) && stat_is(full, e, true))
			goto found;
		/* overlayfs: stat() of the overlay path shows the overlay's dev, maps the real one */
		if (!rooted(c->root, tv, full, sizeof(full)) && stat_is(full, e, false))
			goto found;
	}
	/* deleted or replaced on disk: the mapped inode is only reachable here */
	snprintf(out, outlen, "/proc/%d/map_files/%llx-%llx", c->pid,
		 (unsigned long long)e->start, (unsigned long long)e->end);
	return;
found:
	copy_str(out, outlen, full);
}

static int result_mapped(const struct ctx *c, const struct mfile *f, const char *real,
			 enum how how, struct libresolve_result *out)
{
	const struct procmaps_entry *e = f->e;
	char exe[64], how_buf[PMAX + 64] = "";
	struct stat st;

	mapped_open_path(c, e, (e->flags & PROCMAPS_F_DELETED) ? NULL : real, out->path,
			 sizeof(out->path));
	copy_str(out->realpath, sizeof(out->realpath), real ? real : target_view(c, e->path));
	out->dev = makedev(e->dev_major, e->dev_minor);
	out->inode = e->inode;
	out->found_in_maps = true;
	snprintf(out->map_files, sizeof(out->map_files), "/proc/%d/map_files/%llx-%llx", c->pid,
		 (unsigned long long)e->start, (unsigned long long)e->end);
	out->deleted = e->flags & PROCMAPS_F_DELETED;
	out->pid = c->pid;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", c->pid);
	if (!stat(exe, &st) && st.st_ino == e->inode &&
	    major(st.st_dev) == e->dev_major && minor(st.st_dev) == e->dev_minor)
		out->is_main_exe = true;
	if (how == HOW_MAPS_SONAME && f->soname)
		snprintf(how_buf, sizeof(how_buf), ", matched by DT_SONAME %s", f->soname);
	else
		copy_str(how_buf, sizeof(how_buf), how_str(how));
	err_set(out->msg, sizeof(out->msg), "resolved %s -> %s (mapped in pid %d%s%s%s)",
		 c->lib[0] ? c->lib : "main executable", out->realpath, c->pid, how_buf,
		 out->deleted ? "; deleted on disk, using " : "", out->deleted ? out->path : "");
	return 0;
}

static int result_file(const struct ctx *c, const char *root, const char *real, enum how how,
		       const char *where, struct libresolve_result *out, char *err, size_t errlen)
{
	char note[PMAX + 128] = "";
	struct stat st;
	int ret;

	if (rooted(root, real, out->path, sizeof(out->path)) ||
	    copy_str(out->realpath, sizeof(out->realpath), real)) {
		err_set(err, errlen, "%s: path too long", real);
		return -ENAMETOOLONG;
	}
	if (stat(out->path, &st)) {
		ret = -errno;
		err_set(err, errlen, "stat %s: %s", out->path, strerror(-ret));
		return ret;
	}
	out->dev = st.st_dev;
	out->inode = st.st_ino;
	out->pid = c->pid;
	if (how != HOW_PATH)
		snprintf(note, sizeof(note), "%s%s", how_str(how), where ? where : "");
	if (c->pid > 0)
		snprintf(note + strlen(note), sizeof(note) - strlen(note), "%snot mapped in pid %d yet",
			 note[0] ? "; " : "", c->pid);
	err_set(out->msg, sizeof(out->msg), "resolved %s -> %s%s%s%s", c->lib, real,
		 note[0] ? " (" : "", note, note[0] ? ")" : "");
	return 0;
}

/* ---- matching against the target's maps ------------------------------- */

static bool same_file(const struct procmaps_entry *e, const char *real, const struct stat *st)
{
	if (real && !strcmp(e->path, real))
		return true;
	return st && st->st_ino == e->inode && major(st->st_dev) == e->dev_major &&
	       minor(st->st_dev) == e->dev_minor;
}

static const char *mfile_soname(const struct ctx *c, struct mfile *f)
{
	char full[ROOTED_MAX], buf[256];

	if (f->soname_read)
		return f->soname;
	f->soname_read = true;
	if (!f->exec)	/* libraries always have an executable mapping */
		return NULL;
	mapped_open_path(c, f->e, NULL, full, sizeof(full));
	if (!elfsyms_read_soname(full, buf, sizeof(buf)))
		f->soname = strdup(buf);
	return f->soname;
}


struct hits {
	struct mfile *f[8];
	const char *real[8];
	size_t n;
};

static void hits_add(struct hits *h, struct mfile *f, const char *real)
{
	size_t i;

	for (i = 0; i < h->n; i++)
		if (h->f[i] == f)
			return;
	if (h->n < 8) {
		h->f[h->n] = f;
		h->real[h->n] = real;
		h->n++;
	}
}

static int ambiguous(const struct ctx *c, const struct hits *h, char *err, size_t errlen)
{
	int n = 0, l;
	size_t i;

	if (!err || !errlen)
		return -ENOTUNIQ;
	l = snprintf(err, errlen, "%s is ambiguous in pid %d: it matches", c->lib, c->pid);
	for (i = 0; i < h->n && l >= 0 && (size_t)l < errlen; i++, n++)
		l += snprintf(err + l, errlen - l, "%s %s", i ? "," : "", h->f[i]->e->path);
	if (l >= 0 && (size_t)l < errlen)
		snprintf(err + l, errlen - l, " (give the full path)");
	return -ENOTUNIQ;
}

/* exact-name candidates in the filesystem (ld.so.cache, dirs of mapped files, std dirs) */
struct cands {
	char real[16][PMAX];
	struct stat st[16];
	size_t n;
};

static void cands_add(const struct ctx *c, struct cands *cs, const char *path)
{
	char real[PMAX], full[ROOTED_MAX];
	size_t i;

	if (cs->n >= 16 || libresolve_realpath_in_root(c->root, path, real, sizeof(real)))
		return;
	for (i = 0; i < cs->n; i++)
		if (!strcmp(cs->real[i], real))
			return;
	if (rooted(c->root, real, full, sizeof(full)) || stat(full, &cs->st[cs->n]))
		return;
	strcpy(cs->real[cs->n++], real);
}

static int cands_cache_cb(const char *key, const char *value, void *arg)
{
	void **a = arg;

	(void)key;
	cands_add(a[0], a[1], value);
	return 0;
}

static void collect_exact(const struct ctx *c, struct cands *cs)
{
	char path[PMAX], dir[PMAX];
	struct ldcache lc;
	size_t i;

	if (!ldcache_open(c->root, &lc)) {
		void *arg[2] = { (void *)c, cs };

		ldcache_walk(&lc, c->root, c->lib, 0, 0, 0, cands_cache_cb, arg);
		free(lc.buf);
	}
	for (i = 0; i < c->nr_files; i++) {
		copy_str(dir, sizeof(dir), c->files[i].e->path);
		drop_last(dir);
		if (snprintf(path, sizeof(path), "%s/%s", dir, c->lib) < (int)sizeof(path))
			cands_add(c, cs, path);
	}
	for (i = 0; i < c->nr_dirs; i++)
		if (snprintf(path, sizeof(path), "%s/%s", c->dirs[i], c->lib) < (int)sizeof(path))
			cands_add(c, cs, path);
}

/* 1 and out filled if found in the maps, 0 if not, <0 on error */
static int find_name_in_maps(struct ctx *c, struct libresolve_result *out, char *err, size_t errlen)
{
	static const enum how levels[] = { HOW_MAPS_REALPATH, HOW_MAPS_NAME, HOW_MAPS_SONAME,
					   HOW_MAPS_PREFIX };
	struct cands *cs;
	struct hits h;
	size_t l, i, k;
	int ret = 0;

	cs = calloc(1, sizeof(*cs));
	if (!cs)
		return -ENOMEM;
	collect_exact(c, cs);
	for (l = 0; l < sizeof(levels) / sizeof(levels[0]) && !ret; l++) {
		memset(&h, 0, sizeof(h));
		for (i = 0; i < c->nr_files; i++) {
			struct mfile *f = &c->files[i];
			const char *so;

			switch (levels[l]) {
			case HOW_MAPS_REALPATH:
				for (k = 0; k < cs->n; k++)
					if (same_file(f->e, cs->real[k], &cs->st[k]))
						hits_add(&h, f, cs->real[k]);
				break;
			case HOW_MAPS_NAME:
				if (!strcmp(path_base(f->e->path), c->lib) && f->exec)
					hits_add(&h, f, NULL);
				break;
			case HOW_MAPS_SONAME:
				if (f->exec && (so = mfile_soname(c, f)) && !strcmp(so, c->lib))
					hits_add(&h, f, NULL);
				break;
			default:
				if (!f->exec)
					break;
				if (versioned_prefix(path_base(f->e->path), c->lib) ||
				    ((so = mfile_soname(c, f)) && versioned_prefix(so, c->lib)))
					hits_add(&h, f, NULL);
				break;
			}
		}
		if (h.n > 1)
			ret = ambiguous(c, &h, err, errlen);
		else if (h.n == 1)
			ret = result_mapped(c, h.f[0], h.real[0], levels[l], out) ?: 1;
	}
	free(cs);
	return ret;
}

/* ---- filesystem fallback ---------------------------------------------- */

struct fs_hits {
	char real[8][PMAX];
	size_t n;
};

static int fs_prefix_cb(const char *key, const char *value, void *arg)
{
	void **a = arg;
	const struct ctx *c = a[0];
	struct fs_hits *fh = a[1];
	char real[PMAX];
	size_t i;

	(void)key;
	if (libresolve_realpath_in_root(c->root, value, real, sizeof(real)))
		return 0;
	for (i = 0; i < fh->n; i++)
		if (!strcmp(fh->real[i], real))
			return 0;
	if (fh->n < 8)
		strcpy(fh->real[fh->n++], real);
	return 0;
}

static void dir_prefix_scan(const struct ctx *c, const char *dir, struct fs_hits *fh)
{
	char full[ROOTED_MAX], path[PMAX];
	struct dirent *de;
	DIR *d;

	if (rooted(c->root, dir, full, sizeof(full)) || !(d = opendir(full)))
		return;
	while ((de = readdir(d))) {
		void *arg[2] = { (void *)c, fh };

		if (!versioned_prefix(de->d_name, c->lib))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path) ||
		    rooted(c->root, path, full, sizeof(full)) || check_elf(c, full))
			continue;
		fs_prefix_cb(de->d_name, path, arg);
	}
	closedir(d);
}

static void searched_dirs(const struct ctx *c, char *buf, size_t len)
{
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < c->nr_dirs && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s", i ? ", " : "", c->dirs[i]);
}

/* Names to compare a mistyped library name with: owned copies. */
struct name_list {
	char **v;
	size_t n, cap;
};

static void name_push(struct name_list *l, const char *name)
{
	char **v = grow(l->v, &l->cap, l->n, sizeof(*v), 1024);

	if (!v)
		return;
	l->v = v;
	if ((l->v[l->n] = strdup(name)))
		l->n++;
}

/* The library file name nearest to c->lib among the searched directories and the target's maps
 * ("libopenbla.so" -> "libopenblas.so"); "" when none is near. */
static void near_library(const struct ctx *c, char *buf, size_t len)
{
	struct name_list l = { 0 };
	struct procmaps m;
	const char *near;

	buf[0] = '\0';
	for (size_t i = 0; i < c->nr_dirs; i++) {
		char path[PATH_MAX];
		struct dirent *de;
		DIR *d;

		snprintf(path, sizeof(path), "%s%s", c->root, c->dirs[i]);
		if (!(d = opendir(path)))
			continue;
		while ((de = readdir(d)))
			if (!strncmp(de->d_name, "lib", 3) && strstr(de->d_name, ".so"))
				name_push(&l, de->d_name);
		closedir(d);
	}
	if (c->pid > 0 && procmaps_load(c->pid, &m, NULL, 0) == 0) {
		for (size_t i = 0; i < m.nr; i++)
			if ((m.entries[i].flags & PROCMAPS_F_FILE) && strrchr(m.entries[i].path, '/'))
				name_push(&l, strrchr(m.entries[i].path, '/') + 1);
		procmaps_free(&m);
	}
	if ((near = suggest_nearest(c->lib, (const char *const *)l.v, l.n)))
		snprintf(buf, len, "; did you mean %s?", near);
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i]);
	free(l.v);
}

static int fs_ambiguous(const struct ctx *c, const struct fs_hits *fh, char *err, size_t errlen)
{
	int l;
	size_t i;

	if (!err || !errlen)
		return -ENOTUNIQ;
	l = snprintf(err, errlen, "%s is ambiguous: it matches", c->lib);
	for (i = 0; i < fh->n && l >= 0 && (size_t)l < errlen; i++)
		l += snprintf(err + l, errlen - l, "%s %s", i ? "," : "", fh->real[i]);
	if (l >= 0 && (size_t)l < errlen)
		snprintf(err + l, errlen - l, " (give the full name or path)");
	return -ENOTUNIQ;
}

static int find_name_in_fs(struct ctx *c, struct libresolve_result *out, char *err, size_t errlen)
{
	char path[PMAX], real[PMAX], full[ROOTED_MAX], dirs[512], near[300];
	struct fs_hits *fh;
	struct ldcache lc;
	bool have_cache;
	size_t i;
	int ret;

	have_cache = !ldcache_open(c->root, &lc);
	/* exact: ld.so.cache, then the standard directories */
	if (have_cache) {
		ret = ldcache_walk(&lc, c->root, c->lib, 0, c->elf_class, c->e_machine, first_cb, path);
		if (ret > 0 && !libresolve_realpath_in_root(c->root, path, real, sizeof(real))) {
			free(lc.buf);
			return result_file(c, c->root, real, HOW_LDCACHE, NULL, out, err, errlen);
		}
	}
	for (i = 0; i < c->nr_dirs; i++) {
		if (snprintf(path, sizeof(path), "%s/%s", c->dirs[i], c->lib) >= (int)sizeof(path) ||
		    rooted(c->root, path, full, sizeof(full)) || check_elf(c, full) ||
		    libresolve_realpath_in_root(c->root, path, real, sizeof(real)))
			continue;
		if (have_cache)
			free(lc.buf);
		return result_file(c, c->root, real, HOW_DIR, c->dirs[i], out, err, errlen);
	}
	/* versioned-name prefix: libfoo.so -> libfoo.so.1 */
	fh = calloc(1, sizeof(*fh));
	if (!fh) {
		if (have_cache)
			free(lc.buf);
		return -ENOMEM;
	}
	ret = -ENOENT;
	if (have_cache) {
		void *arg[2] = { c, fh };

		ldcache_walk(&lc, c->root, c->lib, 1, c->elf_class, c->e_machine, fs_prefix_cb, arg);
		free(lc.buf);
		if (fh->n == 1)
			ret = result_file(c, c->root, fh->real[0], HOW_LDCACHE_PREFIX, NULL, out,
					  err, errlen);
	}
	for (i = 0; i < c->nr_dirs && ret == -ENOENT && fh->n <= 1; i++) {
		dir_prefix_scan(c, c->dirs[i], fh);
		if (fh->n == 1)
			ret = result_file(c, c->root, fh->real[0], HOW_DIR_PREFIX, c->dirs[i], out,
					  err, errlen);
	}
	if (fh->n > 1)
		ret = fs_ambiguous(c, fh, err, errlen);
	free(fh);
	if (ret != -ENOENT)
		return ret;

	searched_dirs(c, dirs, sizeof(dirs));
	near_library(c, near, sizeof(near));
	if (c->pid > 0)
		err_set(err, errlen, "library %s not found: not mapped in pid %d, not in %s%s, "
			"not in %s%s (check the name, or give an absolute path)%s",
			c->lib, c->pid, c->root, LDCACHE, dirs, c->root[0] ? " (in its root)" : "", near);
	else
		err_set(err, errlen, "library %s not found: not in %s, not in %s "
			"(check the name, or give an absolute path)%s", c->lib, LDCACHE, dirs, near);
	return -ENOENT;
}

/* ---- entry points ----------------------------------------------------- */

static int find_main_exe(struct ctx *c, struct libresolve_result *out, char *err, size_t errlen)
{
	char exe[64], link[PMAX];
	struct stat st;
	ssize_t n;
	size_t i, l;
	int ret;

	if (c->pid <= 0) {
		err_set(err, errlen, "':GLOB' (no library: the main executable) needs a target "
			"process (-p PID); give LIB:GLOB for system-wide probes");
		return -EINVAL;
	}
	snprintf(exe, sizeof(exe), "/proc/%d/exe", c->pid);
	n = readlink(exe, link, sizeof(link) - 1);
	if (n < 0 || stat(exe, &st)) {
		ret = -errno;
		err_set(err, errlen, "read %s: %s%s", exe, strerror(-ret),
			ret == -ENOENT ? " (is the process running? kernel threads have none)" :
			" (run as root)");
		return ret == -ENOENT ? -ESRCH : ret;
	}
	link[n] = '\0';
	l = strlen(link);
	if (l > 10 && !strcmp(link + l - 10, " (deleted)"))
		link[l - 10] = '\0';
	for (i = 0; i < c->nr_files; i++) {
		if (!same_file(c->files[i].e, NULL, &st))
			continue;
		ret = result_mapped(c, &c->files[i], NULL, HOW_EXE, out);
		if (!ret && out->deleted) {
			copy_str(out->path, sizeof(out->path), exe);
			copy_str(out->realpath, sizeof(out->realpath), link);
		}
		out->is_main_exe = true;
		return ret;
	}
	/* not in the maps (cannot happen for a running user process): use the link */
	copy_str(out->path, sizeof(out->path), exe);
	copy_str(out->realpath, sizeof(out->realpath), link);
	out->dev = st.st_dev;
	out->inode = st.st_ino;
	out->pid = c->pid;
	out->is_main_exe = true;
	err_set(out->msg, sizeof(out->msg), "resolved main executable -> %s (pid %d)", link, c->pid);
	return 0;
}

static int find_path(struct ctx *c, const char *abs, const char *root,
		     struct libresolve_result *out, char *err, size_t errlen)
{
	char real[PMAX], full[ROOTED_MAX];
	struct stat st;
	bool have_st;
	size_t i;
	int ret;

	ret = libresolve_realpath_in_root(root, abs, real, sizeof(real));
	have_st = !ret && !rooted(root, real, full, sizeof(full)) && !stat(full, &st);
	if (c->pid > 0) {
		for (i = 0; i < c->nr_files; i++) {
			const struct procmaps_entry *e = c->files[i].e;

			if (!strcmp(e->path, abs) || same_file(e, have_st ? real : NULL,
							       have_st ? &st : NULL))
				return result_mapped(c, &c->files[i], (e->flags & PROCMAPS_F_DELETED) ||
						     !have_st || root != c->root ? NULL : real,
						     HOW_MAPS_REALPATH, out);
		}
	}
	if (ret && root[0]) {
		/* not in the target's root: maybe the user gave a path of ours */
		ret = find_path(c, abs, "", out, err, errlen);
		if (ret == -ENOENT)
			err_set(err, errlen, "library %s: %s in pid %d's root (%s) or ours",
				abs, strerror(-ret), c->pid, root);
		return ret;
	}
	if (ret) {
		err_set(err, errlen, "library %s: %s", abs, strerror(-ret));
		return ret;
	}
	ret = check_elf(c, full);
	/* without a target any ELF will do (32-bit code can be uprobed too) */
	if (ret == -EXDEV && c->pid <= 0)
		ret = 0;
	if (ret) {
		err_set(err, errlen, "library %s%s%s%s: %s", abs, strcmp(abs, real) ? " (" : "",
			strcmp(abs, real) ? real : "", strcmp(abs, real) ? ")" : "",
			ret == -ENOEXEC ? "not an ELF file (a linker script? name the real library, e.g. its .so.N)" :
			ret == -EXDEV ? "ELF class/machine differs from the target's" :
			ret == -EISDIR ? "not a regular file" : strerror(-ret));
		return ret;
	}
	return result_file(c, root, real, HOW_PATH, NULL, out, err, errlen);
}

int libresolve_find(int pid, const char *lib, struct libresolve_result *out,
		    char *err, size_t errlen)
{
	char abs[PMAX], cwd[PMAX];
	struct ctx c;
	int ret;

	memset(out, 0, sizeof(*out));
	out->pid = pid > 0 ? pid : -1;
	if (err && errlen)
		err[0] = '\0';
	if (!lib)
		lib = "";
	ctx_init(&c, pid, lib);
	if (c.pid > 0) {
		ret = ctx_load_maps(&c, err, errlen);
		if (ret) {
			if (ret == -ESRCH)
				err_set(err, errlen, "pid %d: no such process (cannot read /proc/%d/maps)",
					pid, pid);
			goto out;
		}
	}
	if (!lib[0]) {
		ret = find_main_exe(&c, out, err, errlen);
	} else if (lib[0] == '/') {
		ret = find_path(&c, lib, c.root, out, err, errlen);
	} else if (strchr(lib, '/')) {
		/* relative path: from our current directory, in our root */
		if (!getcwd(cwd, sizeof(cwd))) {
			ret = -errno;
			err_set(err, errlen, "getcwd: %s", strerror(-ret));
			goto out;
		}
		if (snprintf(abs, sizeof(abs), "%s/%s", cwd, lib) >= (int)sizeof(abs)) {
			err_set(err, errlen, "%s: path too long", lib);
			ret = -ENAMETOOLONG;
			goto out;
		}
		ret = find_path(&c, abs, "", out, err, errlen);
	} else {
		ret = 0;
		if (c.pid > 0)
			ret = find_name_in_maps(&c, out, err, errlen);
		if (ret == 0)
			ret = find_name_in_fs(&c, out, err, errlen);
		else if (ret > 0)
			ret = 0;
	}
out:
	if (ret == -ENOMEM && err && errlen)
		err_set(err, errlen, "resolving %s: out of memory", lib);
	ctx_free(&c);
	return ret;
}
