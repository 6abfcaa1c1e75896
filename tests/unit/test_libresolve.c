// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Unit tests for user/sym/libresolve.c and user/sym/procmaps.c: spec splitting,
 * symlink resolution inside a root, ld.so.cache parsing (against
 * `ldconfig -p`), and resolving libraries against forked children that
 * dlopen() OpenBLAS (directly, through a renamed copy found by DT_SONAME,
 * deleted on disk, and inside a chroot in another mount namespace).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "uprobe_open.h"
#include "sym/elfsyms.h"
#include "sym/libresolve.h"
#include "sym/procmaps.h"

#define OPENBLAS_SONAME	"libopenblas.so.0"
#define OPENBLAS_LINK	"/usr/lib/x86_64-linux-gnu/libopenblas.so.0"
#define LIBBLAS		"/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3"

static char tmpdir[] = "/tmp/tmabpf-libresolve-XXXXXX";

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in, out, ret = 0;
	ssize_t n;

	in = open(from, O_RDONLY);
	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (out < 0) {
		ret = -errno;
		close(in);
		return ret;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n) {
			ret = -EIO;
			break;
		}
	if (n < 0)
		ret = -errno;
	close(in);
	close(out);
	return ret;
}

/* ---- children that load libraries ------------------------------------- */

struct child {
	pid_t pid;
	int ok;
};

/*
 * Fork a child that (optionally enters a chroot of / in a new mount
 * namespace, then) dlopen()s libs and waits to be killed.
 */
static struct child spawn(const char *const *libs, const char *chroot_dir)
{
	struct child c = { .pid = -1 };
	int p[2];
	char r = 0;

	if (pipe(p))
		return c;
	c.pid = fork();
	if (c.pid == 0) {
		char st = 'k';

		close(p[0]);
		if (chroot_dir) {
			if (unshare(CLONE_NEWNS) ||
			    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
			    mount("/", chroot_dir, NULL, MS_BIND | MS_REC, NULL) ||
			    chroot(chroot_dir) || chdir("/"))
				st = 'p';
		}
		for (; st == 'k' && *libs; libs++)
			if (!dlopen(*libs, RTLD_NOW))
				st = 'e';
		if (write(p[1], &st, 1) != 1)
			_exit(1);
		if (st != 'k')
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	if (c.pid > 0 && read(p[0], &r, 1) == 1)
		c.ok = r == 'k' ? 1 : r == 'p' ? -EPERM : -ENOENT;
	close(p[0]);
	return c;
}

static void reap(struct child *c)
{
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
		c->pid = -1;
	}
}

/* ---- tests ------------------------------------------------------------ */

static void test_split(void)
{
	static const struct { const char *spec, *lib, *glob; } good[] = {
		{ "/tmp/a:b@c/libx.so:foo*", "/tmp/a:b@c/libx.so", "foo*" },
		{ "libc.so.6:malloc", "libc.so.6", "malloc" },
		{ ":main_loop", "", "main_loop" },
		{ "libstdc++.so.6:std::vector*", "libstdc++.so.6", "std::vector*" },
		{ "libfoo.so:ns::A::f", "libfoo.so", "ns::A::f" },
		{ "lib.so:::global_ns_fn", "lib.so", "::global_ns_fn" },
		{ "/a::b/lib.so:f", "/a::b/lib.so", "f" },
	};
	static const char *const bad[] = { "libc.so.6", "libc.so.6:", "", "std::vector",
					   "/tmp/a:b/libx.so:" };
	char lib[64], glob[64], err[256];
	size_t i;
	int ret;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ret = libresolve_split_spec(good[i].spec, lib, sizeof(lib), glob, sizeof(glob),
					    err, sizeof(err));
		check(!ret && !strcmp(lib, good[i].lib) && !strcmp(glob, good[i].glob),
		      "split '%s' -> lib '%s' glob '%s'", good[i].spec, ret ? "?" : lib,
		      ret ? err : glob);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ret = libresolve_split_spec(bad[i], lib, sizeof(lib), glob, sizeof(glob),
					    err, sizeof(err));
		check(ret == -EINVAL && strstr(err, "LIB:FUNC_GLOB"),
		      "split rejects malformed '%s': %s", bad[i], err);
	}
	ret = libresolve_split_spec("/a/very/long/path/that/does/not/fit/in/sixteen.so:f", lib, 16,
				    glob, sizeof(glob), err, sizeof(err));
	check(ret == -ENAMETOOLONG, "split: lib longer than its buffer -> -ENAMETOOLONG");
}

static void test_realpath_in_root(void)
{
	char root[256], p[PATH_MAX], out[PATH_MAX];
	const char *dirs[] = { "usr", "usr/lib", "opt", "opt/x" };
	size_t i;
	int ret, fd;

	snprintf(root, sizeof(root), "%s/root", tmpdir);
	mkdir(root, 0755);
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", root, dirs[i]);
		mkdir(p, 0755);
	}
	snprintf(p, sizeof(p), "%s/opt/x/libx.so.1.2", root);
	fd = open(p, O_CREAT | O_WRONLY, 0644);
	if (fd >= 0)
		close(fd);
	/* absolute symlink: must stay inside root, not resolve against the host's / */
	snprintf(p, sizeof(p), "%s/usr/lib/libx.so.1", root);
	ret = symlink("/opt/x/libx.so.1.2", p);
	snprintf(p, sizeof(p), "%s/lib", root);
	ret |= symlink("usr/lib", p);
	snprintf(p, sizeof(p), "%s/usr/lib/loop", root);
	ret |= symlink("loop", p);
	check(!ret, "fake root with symlinks created in %s", root);

	ret = libresolve_realpath_in_root(root, "/lib/libx.so.1", out, sizeof(out));
	check(!ret && !strcmp(out, "/opt/x/libx.so.1.2"),
	      "realpath_in_root: /lib/libx.so.1 -> %s (absolute link resolved in root)", ret ? "?" : out);
	ret = libresolve_realpath_in_root(root, "/usr/lib/../../../../opt/./x//libx.so.1.2", out,
					  sizeof(out));
	check(!ret && !strcmp(out, "/opt/x/libx.so.1.2"), "realpath_in_root: '..' stops at root -> %s",
	      ret ? "?" : out);
	ret = libresolve_realpath_in_root(root, "/usr/lib/loop", out, sizeof(out));
	check(ret == -ELOOP, "realpath_in_root: symlink loop -> -ELOOP (%d)", ret);
	ret = libresolve_realpath_in_root(root, "/usr/lib/libnope.so", out, sizeof(out));
	check(ret == -ENOENT, "realpath_in_root: missing -> -ENOENT (%d)", ret);
	ret = libresolve_realpath_in_root("", OPENBLAS_LINK, out, sizeof(out));
	check(!ret && realpath(OPENBLAS_LINK, p) && !strcmp(out, p),
	      "realpath_in_root(\"\", %s) == realpath(3) = %s", OPENBLAS_LINK, ret ? "?" : out);
}

/* compare our ld.so.cache parser with every x86-64 entry `ldconfig -p` prints */
static void test_ldcache(void)
{
	char line[PATH_MAX + 256], name[256], flags[256], path[PATH_MAX], out[PATH_MAX];
	char seen[4096][64];
	int nseen = 0, compared = 0, bad = 0, i, ret;
	FILE *f;

	f = popen("ldconfig -p 2>/dev/null", "r");
	if (!f) {
		check(0, "ldcache: run ldconfig -p: %s", strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, " %255s (%255[^)]) => %4095s", name, flags, path) != 3)
			continue;
		if (!strstr(flags, "x86-64") || strstr(flags, "hwcap") || access(path, R_OK))
			continue;
		/* the first x86-64 entry for a name is the one ld.so uses */
		for (i = 0; i < nseen; i++)
			if (!strcmp(seen[i], name))
				break;
		if (i < nseen || strlen(name) >= sizeof(seen[0]))
			continue;
		if (nseen < 4096)
			snprintf(seen[nseen++], sizeof(seen[0]), "%.63s", name);
		ret = libresolve_ldcache_lookup("", name, ELFCLASS64, EM_X86_64, out, sizeof(out));
		compared++;
		if (ret || strcmp(out, path)) {
			/* a non-ELF (linker script) entry is skipped by design */
			if (bad++ < 3)
				printf("# ldcache: %s: ldconfig says %s, we say %s\n", name, path,
				       ret ? strerror(-ret) : out);
		}
	}
	pclose(f);
	check(compared > 50 && bad == 0, "ldcache: %d names agree with ldconfig -p (%d differ)",
	      compared, bad);
	ret = libresolve_ldcache_lookup("", "libc.so.6", ELFCLASS64, EM_X86_64, out, sizeof(out));
	check(!ret && !strstr(out, "32/"), "ldcache: libc.so.6 for x86-64 is %s, not the /lib32 one",
	      out);
	ret = libresolve_ldcache_lookup("", "libc.so.6", ELFCLASS32, EM_386, out, sizeof(out));
	check(ret == -ENOENT || (!ret && strstr(out, "32")),
	      "ldcache: libc.so.6 for i386 is %s", ret ? "absent" : out);
	ret = libresolve_ldcache_lookup("", "libtmabpf-nope.so.9", 0, 0, out, sizeof(out));
	check(ret == -ENOENT, "ldcache: unknown name -> -ENOENT");
	snprintf(path, sizeof(path), "%s/root", tmpdir);
	ret = libresolve_ldcache_lookup(path, "libc.so.6", 0, 0, out, sizeof(out));
	check(ret == -ENOENT, "ldcache: root without /etc/ld.so.cache -> -ENOENT (%d)", ret);
}

static void same_inode_as(const struct libresolve_result *r, const char *file, const char *what)
{
	struct stat a, b;

	check(!stat(r->path, &a) && !stat(file, &b) && a.st_ino == b.st_ino && a.st_dev == b.st_dev &&
	      r->inode == b.st_ino && r->dev == b.st_dev,
	      "%s: path %s and inode %llu are the file %s", what, r->path,
	      (unsigned long long)r->inode, file);
}

static void test_systemwide(const char *blas_real)
{
	struct libresolve_result r;
	char err[1024];
	int ret;

	ret = libresolve_find(-1, OPENBLAS_SONAME, &r, err, sizeof(err));
	check(!ret && !strcmp(r.realpath, blas_real) && !r.found_in_maps && r.pid == -1,
	      "system-wide: %s", ret ? err : r.msg);
	if (!ret)
		same_inode_as(&r, blas_real, "system-wide libopenblas.so.0");
	ret = libresolve_find(-1, "libopenblas.so", &r, err, sizeof(err));
	check(!ret && !strcmp(r.realpath, blas_real), "system-wide: %s", ret ? err : r.msg);
	ret = libresolve_find(-1, "libopenblas", &r, err, sizeof(err));
	check(!ret && !strcmp(r.realpath, blas_real), "system-wide versioned prefix: %s",
	      ret ? err : r.msg);
	ret = libresolve_find(-1, OPENBLAS_LINK, &r, err, sizeof(err));
	check(!ret && !strcmp(r.realpath, blas_real) && !strcmp(r.path, blas_real),
	      "system-wide absolute symlink: %s", ret ? err : r.msg);
	ret = libresolve_find(-1, "libc.so.6", &r, err, sizeof(err));
	check(!ret && !strstr(r.realpath, "lib32"), "system-wide libc.so.6 skips /lib32: %s",
	      ret ? err : r.msg);
	ret = libresolve_find(-1, "libc.so", &r, err, sizeof(err));
	check(!ret && strstr(r.realpath, "libc.so.6"),
	      "system-wide libc.so (a linker script) -> libc.so.6: %s", ret ? err : r.msg);
	ret = libresolve_find(-1, "/usr/lib/x86_64-linux-gnu/libc.so", &r, err, sizeof(err));
	check(ret == -ENOEXEC && strstr(err, "not an ELF"), "linker script path rejected: %s", err);
	ret = libresolve_find(-1, "libtmabpf_does_not_exist.so.7", &r, err, sizeof(err));
	check(ret == -ENOENT && strstr(err, "libtmabpf_does_not_exist.so.7") &&
	      strstr(err, "/etc/ld.so.cache") && strstr(err, "/usr/lib/x86_64-linux-gnu"),
	      "not found names what was searched: %s", err);
	ret = libresolve_find(-1, "/nonexistent/libx.so", &r, err, sizeof(err));
	check(ret == -ENOENT && strstr(err, "/nonexistent/libx.so"), "missing absolute path: %s", err);
	ret = libresolve_find(-1, "", &r, err, sizeof(err));
	check(ret == -EINVAL && strstr(err, "-p PID"), "main executable needs a pid: %s", err);
	ret = libresolve_find(99999999, "libc.so.6", &r, err, sizeof(err));
	check(ret == -ESRCH && strstr(err, "99999999"), "missing pid: %s", err);
}

static void test_self(void)
{
	struct libresolve_result r;
	char err[1024], exe[PATH_MAX];
	struct procmaps m;
	const struct procmaps_entry *e;
	ssize_t n;
	int ret;

	/* libc.so.6 through our own maps: (dev, inode) as stat() says */
	ret = libresolve_find(getpid(), "libc.so.6", &r, err, sizeof(err));
	check(!ret && r.found_in_maps && strstr(r.msg, "mapped in pid"), "own pid: %s",
	      ret ? err : r.msg);
	if (!ret)
		same_inode_as(&r, "/lib/x86_64-linux-gnu/libc.so.6", "own pid libc.so.6");
	ret = procmaps_load(getpid(), &m, err, sizeof(err));
	e = ret ? NULL : procmaps_find(&m, (uint64_t)(uintptr_t)&getpid);
	check(e && r.found_in_maps && e->inode == r.inode && !strcmp(e->path, r.realpath) &&
	      makedev(e->dev_major, e->dev_minor) == r.dev,
	      "own pid: getpid() lies in a mapping of the resolved libc (%s)", e ? e->path : "-");
	procmaps_free(&m);

	/* ":glob" -> the main executable */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	ret = libresolve_find(getpid(), "", &r, err, sizeof(err));
	check(!ret && r.is_main_exe && r.found_in_maps && !strcmp(r.realpath, exe),
	      "own pid main executable: %s", ret ? err : r.msg);
	if (!ret)
		same_inode_as(&r, exe, "own pid main executable");
	ret = libresolve_find(getpid(), exe, &r, err, sizeof(err));
	check(!ret && r.is_main_exe && r.found_in_maps, "own pid, exe by absolute path: %s",
	      ret ? err : r.msg);
	ret = libresolve_find(getpid(), "libtmabpf_does_not_exist.so.7", &r, err, sizeof(err));
	check(ret == -ENOENT && strstr(err, "not mapped in pid"), "own pid not found: %s", err);
}

static void test_child(const char *blas_real)
{
	const char *libs[] = { OPENBLAS_SONAME, NULL, NULL };
	char copy[PATH_MAX], expect[128], err[1024];
	struct libresolve_result r;
	struct child c;
	int ret;

	snprintf(copy, sizeof(copy), "%s/libmyblas.so", tmpdir);
	if (copy_file(LIBBLAS, copy)) {
		check(0, "child: copy %s to %s", LIBBLAS, copy);
		return;
	}
	libs[1] = copy;
	c = spawn(libs, NULL);
	check(c.pid > 0 && c.ok == 1, "child %d dlopen()ed %s and %s", c.pid, OPENBLAS_SONAME, copy);
	if (c.ok != 1) {
		reap(&c);
		return;
	}
	snprintf(expect, sizeof(expect), "(mapped in pid %d)", c.pid);
	ret = libresolve_find(c.pid, OPENBLAS_SONAME, &r, err, sizeof(err));
	check(!ret && r.found_in_maps && !strcmp(r.realpath, blas_real) && strstr(r.msg, expect) &&
	      !strncmp(r.msg, "resolved libopenblas.so.0 -> ", 29),
	      "child: %s", ret ? err : r.msg);
	if (!ret)
		same_inode_as(&r, blas_real, "child libopenblas.so.0");
	ret = libresolve_find(c.pid, "libopenblas.so", &r, err, sizeof(err));
	check(!ret && r.found_in_maps && !strcmp(r.realpath, blas_real), "child: %s",
	      ret ? err : r.msg);
	ret = libresolve_find(c.pid, "libopenblas", &r, err, sizeof(err));
	check(!ret && r.found_in_maps && !strcmp(r.realpath, blas_real), "child versioned prefix: %s",
	      ret ? err : r.msg);
	ret = libresolve_find(c.pid, OPENBLAS_LINK, &r, err, sizeof(err));
	check(!ret && r.found_in_maps && !strcmp(r.realpath, blas_real),
	      "child absolute symlink path: %s", ret ? err : r.msg);
	/* the renamed copy is only findable by its DT_SONAME */
	ret = libresolve_find(c.pid, "libblas.so.3", &r, err, sizeof(err));
	check(!ret && r.found_in_maps && !strcmp(r.realpath, copy) && strstr(r.msg, "DT_SONAME"),
	      "child DT_SONAME match: %s", ret ? err : r.msg);
	ret = libresolve_find(c.pid, "libblas.so", &r, err, sizeof(err));
	check(!ret && r.found_in_maps && !strcmp(r.realpath, copy),
	      "child SONAME versioned prefix: %s", ret ? err : r.msg);
	ret = libresolve_find(c.pid, "liblapack.so.3", &r, err, sizeof(err));
	snprintf(expect, sizeof(expect), "not mapped in pid %d yet", c.pid);
	check(!ret && !r.found_in_maps && strstr(r.msg, expect),
	      "child: a library it has not loaded is resolved on disk: %s", ret ? err : r.msg);

	/* deleted on disk: only /proc/PID/map_files reaches the mapped inode */
	unlink(copy);
	ret = libresolve_find(c.pid, "libmyblas.so", &r, err, sizeof(err));
	snprintf(expect, sizeof(expect), "/proc/%d/map_files/", c.pid);
	check(!ret && r.found_in_maps && r.deleted && !strncmp(r.path, expect, strlen(expect)),
	      "child deleted library: %s", ret ? err : r.msg);
	if (!ret && geteuid() != 0) {
		skip("reading /proc/PID/map_files", "needs CAP_SYS_ADMIN (run as root)");
	} else if (!ret) {
		struct elfsyms syms;
		struct stat st;
		const struct elfsym **m = NULL;

		check(!stat(r.path, &st) && st.st_ino == r.inode,
		      "child deleted library: %s opens the mapped inode %llu", r.path,
		      (unsigned long long)r.inode);
		ret = elfsyms_load(r.path, &syms, err, sizeof(err));
		check(!ret && syms.soname && !strcmp(syms.soname, "libblas.so.3") &&
		      elfsyms_match_all(&syms, "cblas_sgemm", &m) == 1,
		      "child deleted library: symbols readable through map_files (%s)", ret ? err : "ok");
		if (!ret && m) {
			int fd = uprobe_open(r.path, m[0]->offset, c.pid);

			if (fd == -ENOENT || fd == -EACCES || fd == -EPERM)
				skip("uprobe on map_files path", "no uprobe PMU or not root");
			else
				check(fd >= 0, "child deleted library: perf uprobe opens on %s offset %#llx (%s)",
				      r.path, (unsigned long long)m[0]->offset,
				      fd < 0 ? strerror(-fd) : "ok");
			if (fd >= 0)
				close(fd);
		}
		free(m);
		if (!ret)
			elfsyms_free(&syms);
	}
	reap(&c);
}

/* a target chrooted into a bind mount of / in its own mount namespace */
static void test_chroot(const char *blas_real)
{
	const char *libs[] = { OPENBLAS_SONAME, NULL };
	char dir[PATH_MAX], expect[64], err[1024], exe[PATH_MAX];
	struct libresolve_result r;
	struct child c;
	ssize_t n;
	int ret;

	snprintf(dir, sizeof(dir), "%s/chroot", tmpdir);
	mkdir(dir, 0755);
	c = spawn(libs, dir);
	if (c.ok == -EPERM || c.pid <= 0) {
		reap(&c);
		rmdir(dir);
		skip("chroot target", "cannot unshare/mount/chroot (needs root)");
		return;
	}
	check(c.ok == 1, "chroot child %d loaded %s", c.pid, OPENBLAS_SONAME);
	snprintf(expect, sizeof(expect), "/proc/%d/root/", c.pid);
	ret = libresolve_find(c.pid, OPENBLAS_SONAME, &r, err, sizeof(err));
	check(!ret && r.found_in_maps && !strcmp(r.realpath, blas_real) &&
	      !strncmp(r.path, expect, strlen(expect)), "chroot child: %s (open %s)",
	      ret ? err : r.msg, ret ? "-" : r.path);
	if (!ret)
		same_inode_as(&r, blas_real, "chroot child libopenblas.so.0");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	ret = libresolve_find(c.pid, "", &r, err, sizeof(err));
	check(!ret && r.is_main_exe && !strcmp(r.realpath, exe) && !strncmp(r.path, expect, strlen(expect)),
	      "chroot child main executable seen as %s: %s", exe, ret ? err : r.msg);
	reap(&c);
	rmdir(dir);
}

static void test_procmaps(void)
{
	static const char text[] =
		"5600-5700 r-xp 00002000 fe:00 247134    /usr/bin/cat\n"
		"5700-5800 rw-p 00000000 00:00 0          [heap]\n"
		"6000-7000 rwxp 00000000 00:00 0 \n"
		"7000-7100 r-xp 00001000 08:02 99         /tmp/lib with space.so (deleted)\n"
		"7100-7200 r-xp 00000000 00:01 12         /memfd:jit (deleted)\n"
		"7ffd0000-7ffd2000 r-xp 00000000 00:00 0  [vdso]\n"
		"7ffe0000-7fff0000 rw-p 00000000 00:00 0  [stack]\n";
	const struct procmaps_entry *e;
	struct procmaps m;
	char err[256], buf[64];
	int ret;

	ret = procmaps_parse(text, &m, err, sizeof(err));
	check(!ret && m.nr == 7, "procmaps: parsed %zu entries", m.nr);
	if (ret)
		return;
	e = &m.entries[0];
	check(e->start == 0x5600 && e->end == 0x5700 && e->offset == 0x2000 && e->dev_major == 0xfe &&
	      e->dev_minor == 0 && e->inode == 247134 && !strcmp(e->path, "/usr/bin/cat") &&
	      !strcmp(e->perms, "r-xp") && (e->flags & PROCMAPS_F_FILE) && (e->flags & PROCMAPS_F_EXEC) &&
	      !(e->flags & (PROCMAPS_F_ANON | PROCMAPS_F_JIT)), "procmaps: file mapping fields");
	check(m.entries[1].flags & PROCMAPS_F_HEAP && m.entries[1].flags & PROCMAPS_F_ANON &&
	      !strcmp(procmaps_kind_str(&m.entries[1]), "heap"), "procmaps: [heap]");
	check((m.entries[2].flags & PROCMAPS_F_JIT) && (m.entries[2].flags & PROCMAPS_F_ANON) &&
	      !m.entries[2].path[0], "procmaps: anonymous rwx is JIT");
	e = &m.entries[3];
	check((e->flags & PROCMAPS_F_DELETED) && !strcmp(e->path, "/tmp/lib with space.so") &&
	      e->dev_major == 8 && e->dev_minor == 2, "procmaps: deleted file, path with spaces");
	check(m.entries[4].flags & PROCMAPS_F_JIT, "procmaps: executable memfd is JIT");
	check((m.entries[5].flags & PROCMAPS_F_VDSO) && !(m.entries[5].flags & PROCMAPS_F_JIT),
	      "procmaps: [vdso] is not JIT");
	check(m.entries[6].flags & PROCMAPS_F_STACK, "procmaps: [stack]");
	check(procmaps_find(&m, 0x5600) == &m.entries[0] && procmaps_find(&m, 0x56ff) == &m.entries[0] &&
	      procmaps_find(&m, 0x5700) == &m.entries[1] && !procmaps_find(&m, 0x5800) &&
	      procmaps_find(&m, 0x7ffeffff) == &m.entries[6] && !procmaps_find(&m, 0x10),
	      "procmaps: find by address (bounds, gaps)");
	check(procmaps_file_offset(&m.entries[0], 0x5610) == 0x2010, "procmaps: addr -> file offset");
	procmaps_free(&m);
	ret = procmaps_parse("garbage line\n", &m, err, sizeof(err));
	check(ret == -EINVAL && strstr(err, "garbage"), "procmaps: bad line rejected: %s", err);
	check(!procmaps_root_path(42, "/usr/lib/x.so", buf, sizeof(buf)) &&
	      !strcmp(buf, "/proc/42/root/usr/lib/x.so"), "procmaps: root path %s", buf);
	ret = procmaps_open_file(getpid(), "/lib/x86_64-linux-gnu/libc.so.6", 0, err, sizeof(err));
	check(ret >= 0, "procmaps: open libc through /proc/self/root");
	if (ret >= 0)
		close(ret);
	ret = procmaps_open_file(getpid(), "/nonexistent", 0, err, sizeof(err));
	check(ret == -ENOENT && strstr(err, "/nonexistent"), "procmaps: open error: %s", err);
	ret = procmaps_load(99999999, &m, err, sizeof(err));
	check(ret == -ENOENT && strstr(err, "99999999"), "procmaps: missing pid: %s", err);
}

int main(void)
{
	char blas_real[PATH_MAX];

	if (!mkdtemp(tmpdir)) {
		printf("not ok - mkdtemp %s: %s\n0 passed, 1 failed\n", tmpdir, strerror(errno));
		return 1;
	}
	setvbuf(stdout, NULL, _IONBF, 0);	/* children must not inherit buffered output */
	test_procmaps();
	test_split();
	test_realpath_in_root();
	test_ldcache();
	if (!realpath(OPENBLAS_LINK, blas_real)) {
		check(0, "%s exists (install libopenblas0-pthread)", OPENBLAS_LINK);
	} else {
		test_systemwide(blas_real);
		test_child(blas_real);
		test_chroot(blas_real);
	}
	test_self();
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd))
			printf("# could not remove %s\n", tmpdir);
	}
	return check_exit();
}
