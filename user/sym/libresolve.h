/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * libresolve: turn the LIB part of a user's LIB:GLOB uprobe spec into the
 * file to attach to.
 *
 * LIB may be:
 *   ""                      the target's main executable (/proc/PID/exe)
 *   /abs/path               (also the main executable's path)
 *   rel/path                made absolute against the current directory
 *   libfoo.so.1             a file name or a SONAME
 *   libfoo.so               a prefix of a versioned name: libfoo.so.1.13
 *
 * With a target (pid > 0) the target's /proc/PID/maps is searched first,
 * comparing by real path (resolved inside /proc/PID/root) and by
 * (dev, inode), then by mapped file name, DT_SONAME and versioned-name
 * prefix. Otherwise (or if not mapped) /etc/ld.so.cache (parsed directly,
 * no program is run) and the standard directories are searched, inside the
 * target's root when there is one. Candidates whose ELF class/machine differ
 * from the target's (e.g. /lib32) and non-ELF files (linker scripts such as
 * libc.so) are skipped.
 *
 * Functions return 0 on success, a negative errno on failure with one line
 * for the user in (err, errlen).
 */
#ifndef __TMABPF_LIBRESOLVE_H
#define __TMABPF_LIBRESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LIBRESOLVE_PATH_MAX 4096

struct libresolve_result {
	/* path to open / attach uprobes to from this process: the real path,
	 * prefixed with /proc/PID/root when the target has another root or
	 * mount namespace, or /proc/PID/map_files/START-END for a mapped file
	 * that was deleted or replaced on disk */
	char path[LIBRESOLVE_PATH_MAX + 64];
	/* canonical path as the target sees it (symlinks resolved in its root) */
	char realpath[LIBRESOLVE_PATH_MAX];
	/* found_in_maps: /proc/PID/map_files/START-END, the mapped inode itself whatever its path
	 * names now */
	char map_files[64];
	uint64_t dev;		/* makedev(major, minor) as in the maps / stat() */
	uint64_t inode;
	bool found_in_maps;	/* mapped in the target right now */
	bool is_main_exe;	/* resolved to the target's /proc/PID/exe */
	bool deleted;		/* mapped file is deleted/replaced on disk */
	int pid;		/* target, or -1 */
	/* "resolved libopenblas.so.0 -> /usr/lib/.../libopenblasp-r0.3.21.so (mapped in pid 123)" */
	char msg[2 * LIBRESOLVE_PATH_MAX + 256];
};

/* pid <= 0: no target (system-wide). */
int libresolve_find(int pid, const char *lib, struct libresolve_result *out,
		    char *err, size_t errlen);

/*
 * Split "LIB:GLOB" on the last colon that is not part of a C++ "::"
 * ("/tmp/a:b@c/libx.so:foo*" -> "/tmp/a:b@c/libx.so" + "foo*";
 * "libstdc++.so.6:std::vector*" -> "libstdc++.so.6" + "std::vector*";
 * ":main_loop" -> "" + "main_loop"). No such colon or an empty GLOB is an
 * error (-EINVAL); -ENAMETOOLONG if a part does not fit.
 */
int libresolve_split_spec(const char *spec, char *lib, size_t liblen, char *glob, size_t globlen,
			  char *err, size_t errlen);

/*
 * Resolve symlinks of absolute path inside root ("" for /, or
 * "/proc/PID/root"): absolute symlink targets restart at root, ".." stops
 * at root (like chroot). out gets the path relative to root.
 */
int libresolve_realpath_in_root(const char *root, const char *path, char *out, size_t outlen);

/*
 * Look name up in ROOT/etc/ld.so.cache (root "" for /): exact name first,
 * then a versioned-name prefix; only entries that are ELF files with the
 * given class/machine (0 = any). out gets the cached path.
 */
int libresolve_ldcache_lookup(const char *root, const char *name, int elf_class, int e_machine,
			      char *out, size_t outlen);

#endif /* __TMABPF_LIBRESOLVE_H */
