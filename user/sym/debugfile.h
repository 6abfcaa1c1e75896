/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * debugfile: find the separate debug file of a stripped ELF file, the way
 * gdb and perf do:
 *   1. by build-id: DEBUG_DIR/.build-id/ab/cdef....debug (Debian's -dbg and
 *      -dbgsym packages install these);
 *   2. by .gnu_debuglink NAME: DIR/NAME, DIR/.debug/NAME and DEBUG_DIR/DIR/NAME, where DIR is
 *      the file's directory; checked by build id when the file has one (as elfutils does: its
 *      notes alone are read), else by .gnu_debuglink's CRC, which reads the debug file whole:
 *      another user's (elf_read_others_file) past DEBUGFILE_CRC_MAX is not read (a user's 2 GiB
 *      sparse file held root's tmabpf for seconds; real debug files carry a build id).
 * DEBUG_DIR is /usr/lib/debug, or $TMABPF_DEBUG_DIR.  For a file of a
 * process in another mount namespace, the same paths are also tried under
 * its root (/proc/PID/root).  The sections are read with libelf and libdw's
 * dwelf_elf_gnu_build_id / dwelf_elf_gnu_debuglink.
 */
#ifndef TMABPF_DEBUGFILE_H
#define TMABPF_DEBUGFILE_H
#include <stddef.h>

#define DEBUGFILE_CRC_MAX (1ull << 30)

/* The debug file directory: $TMABPF_DEBUG_DIR or /usr/lib/debug. */
const char *debugfile_dir(void);

/*
 * open_path: the ELF file to read (may be /proc/self/fd/N);
 * target_path: its path as the target process sees it (for DIR);
 * root: "" or "/proc/PID/root".
 * The open fd (O_RDONLY: read it, then close it) of a debug file whose build-id or CRC matches,
 * out filled with its path (for messages); -ENOENT when there is none; -EFBIG, out naming it, when
 * the only candidate was another user's file past DEBUGFILE_CRC_MAX to be checked by CRC.  Only a regular file that
 * the stripped file's owner could read too (theirs, or readable by all) is taken, and it is read
 * through this fd: a link planted at a candidate path never yields a root-only file's names.
 */
int debugfile_find(const char *open_path, const char *target_path, const char *root, char *out, size_t outlen);

/* The NT_GNU_BUILD_ID of an ELF file as hex: 0, -ENOENT when it has none, other -errno. */
int debugfile_build_id(const char *path, char *hex, size_t hexlen);

#endif
