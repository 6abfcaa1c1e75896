/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * elf_read: open an ELF file for libelf when another user may change it
 * while it is read (a library of a profiled process, owned by its user).
 *
 * - open() never blocks (O_NONBLOCK: a FIFO planted at the path) and only a
 *   regular file is read;
 * - libelf reads with pread() into its own buffers (ELF_C_READ), never
 *   through mmap(): a file truncated under an mmap() would kill tmabpf with
 *   SIGBUS; a short pread() is a libelf error instead;
 * - elf_read_changed() says whether the file was written, truncated or
 *   replaced since it was opened (size, mtime, ctime), so a caller discards
 *   what it read from a file that changed under it.
 */
#ifndef TMABPF_ELF_READ_H
#define TMABPF_ELF_READ_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <libelf.h>

struct elf_read {
	int fd;
	Elf *elf;
	struct stat st;		/* at open */
};

/* 0, or a negative errno with one line in (err, errlen): cannot open, not a
 * regular file (-EINVAL), not ELF (-ENOEXEC). */
int elf_read_open(struct elf_read *e, const char *path, char *err, size_t errlen);
/* The file changed since elf_read_open (or can no longer be checked). */
bool elf_read_changed(const struct elf_read *e);
void elf_read_close(struct elf_read *e);

#endif
