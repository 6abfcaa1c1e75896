/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * elf_read: open an ELF file for libelf when another user may change it
 * while it is read (a library of a profiled process, owned by its user).
 *
 * - only a regular file is opened (user_file.h: nothing else at the path is
 *   opened, a FIFO or a device behind a symbolic link);
 * - libelf reads with pread() into its own buffers (ELF_C_READ), never
 *   through mmap(): a file truncated under an mmap() would kill tmabpf with
 *   SIGBUS; a short pread() is a libelf error instead;
 * - elf_read_changed() says whether the file was written, truncated or
 *   replaced since it was opened (size, mtime, ctime), so a caller discards
 *   what it read from a file that changed under it;
 * - what is read from the file into memory (sections, and what its reader
 *   keeps of them: symbols, names) is charged to the file's memory limit,
 *   ELF_READ_MEMORY_MAX, before it is read (elf_read_charge): a user's file
 *   whose legal sections add up to more is given up, never read whole;
 * - a file owned by another user than root, tmabpf's own and the one who ran
 *   sudo tmabpf (or writable by all) is charged to one pool instead, shared by all such files, those
 *   being read and the tables kept of those read (elf_read_keep): a root
 *   tmabpf beside a user who maps many hostile libraries at once stays near
 *   its own size plus the pool (ELF_READ_OTHERS_MAX, --user-symbols).
 */
#ifndef TMABPF_ELF_READ_H
#define TMABPF_ELF_READ_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <gelf.h>
#include <libelf.h>

/* What one file's reading has charged to its memory limit. */
struct elf_charges {
	uint64_t bytes;		/* past the limit: ELF_READ_MEMORY_MAX + 1 */
	uint64_t pooled;	/* of them, charged to the other users' pool (returned at close) */
	bool other;		/* the file is another user's: charged to the pool */
	bool pool_full;		/* a charge did not fit the pool, */
	uint64_t pool_left;	/* which had this much left then */
	unsigned int uid;	/* the file's owner */
	size_t nscn;
	size_t scn[16];		/* sections read through elf_read_small_data (libelf keeps each: charged once) */
};

struct elf_read {
	int fd;
	Elf *elf;
	struct stat st;		/* at open */
	struct elf_charges *charged;	/* NULL when not open */
};

/* The memory one file's reading may take (all its sections and what is kept of them together):
 * far above what the symbols of the biggest real library take (libtorch_cpu's: ~100 MiB). */
#define ELF_READ_MEMORY_MAX (256ull << 20)

/* The memory the files of other users (owned by neither root, tmabpf's user nor SUDO_UID's, or
 * writable by all) share, being read and kept, unless elf_read_set_others_max changes it
 * (--max-user-symbols): a root tmabpf --sample -p takes ~30 MiB of its own, the daemon ~37, so with
 * this pool their peak RSS stays under 64 MiB whatever a user maps (40 and 57 MiB beside nine
 * hostile libraries mapped at once: tests/test_hostile_libraries.py).  Real libraries charge (kept,
 * peak RSS added): Debian's libtorch_cpu 1.13 16 MiB (11, 19), libjvm 18 (11, 16), libLLVM-19 28
 * (11, 22), node 63 (22, 41).  A library past what is left is not read, said in one line with the
 * option that raises it. */
#define ELF_READ_OTHERS_MAX (20ull << 20)
void elf_read_set_others_max(uint64_t bytes);
/* A file another user may write: owned by neither root, tmabpf's user nor the user who ran sudo
 * tmabpf (SUDO_UID: its own libraries), or writable by all. */
bool elf_read_others_file(const struct stat *st);
uint64_t elf_read_others_max(void);

/* The most bytes of one section handed to libelf (which reads a section whole on first use):
 * notes, .dynamic, symbol versions, .gnu_debuglink.  The symbol and string tables, which can be
 * big, are read streamed instead (elf_read_at), never whole. */
#define ELF_READ_SECTION_MAX (16u << 20)

/* 0, or a negative errno with one line in (err, errlen): cannot open, not a
 * regular file (-EINVAL), not ELF (-ENOEXEC), more section or program headers
 * than any real file has (-EFBIG: libelf would allocate them all). */
int elf_read_open(struct elf_read *e, const char *path, char *err, size_t errlen);
/* Charge bytes about to be read or kept to the file's memory limit: 0, or -E2BIG when they do not fit
 * (then every later charge fails too: the file is over its limit, see elf_read_over). */
int elf_read_charge(const struct elf_read *e, uint64_t bytes);
bool elf_read_over(const struct elf_read *e);
/* Why the file is over (elf_read_over): one line, without the file's name, naming the limit and,
 * for another user's file, the option that raises it. */
void elf_read_over_line(const struct elf_read *e, char *buf, size_t len);
/* What is kept of an other user's file after it is closed, bytes, stays charged to the pool until
 * elf_read_unkeep(the return) (0 for a file not charged to the pool). */
uint64_t elf_read_keep(const struct elf_read *e, uint64_t bytes);
void elf_read_unkeep(uint64_t kept);
/* The file changed since elf_read_open (or can no longer be checked). */
bool elf_read_changed(const struct elf_read *e);
void elf_read_close(struct elf_read *e);

/* len bytes at file offset off into buf: 0, or -EIO (past the end, a short read: truncated). */
int elf_read_at(const struct elf_read *e, uint64_t off, void *buf, size_t len);
/* The first offset >= off that is not in a hole of a sparse file (SEEK_DATA); the file's size when
 * only a hole follows.  A table in a hole reads as zeros, so its reader skips there at once. */
uint64_t elf_read_next_data(const struct elf_read *e, uint64_t off);
/* elf_getdata of a section within ELF_READ_SECTION_MAX, the file and its memory limit (charged), else
 * NULL. */
Elf_Data *elf_read_small_data(const struct elf_read *e, Elf_Scn *scn);
/* Every note (sections and PT_NOTE) and .gnu_debuglink within ELF_READ_SECTION_MAX, and all of them
 * together charged to the memory limit: what libdw's dwelf_elf_gnu_build_id and
 * dwelf_elf_gnu_debuglink read whole (libelf keeps each section read until the file is closed). */
bool elf_read_ids_bounded(const struct elf_read *e);


/* A string table: read whole when it has at most ELF_STRTAB_WHOLE bytes (names are looked up in
 * any order: .dynsym's follow its hash), else through a window of ELF_STRTAB_WINDOW bytes (a user's
 * .strtab may claim 4 GiB of a sparse file; a big real one is read in order, with .symtab): a name
 * longer than the window is not read. */
#define ELF_STRTAB_WHOLE (32u << 20)
#define ELF_STRTAB_WINDOW (256u << 10)
struct elf_strtab {
	const struct elf_read *e;
	uint64_t off, size;	/* the section's */
	char *win;		/* the table + 1, or ELF_STRTAB_WINDOW + 1 bytes */
	uint64_t win_at;	/* index of win[0] */
	size_t win_len;
};
/* The string table at section index shndx: 0, or -errno (-ENOENT: not a string table, -E2BIG: its
 * buffer is past the memory limit). */
int elf_strtab_open(struct elf_strtab *t, const struct elf_read *e, size_t shndx);
/* The name at idx, valid until the next call; NULL when out of the table, unreadable or too long. */
const char *elf_strtab_get(struct elf_strtab *t, uint64_t idx);
void elf_strtab_close(struct elf_strtab *t);

/* fn for each symbol (index i >= 1) of a SHT_SYMTAB or SHT_DYNSYM section sh, read in chunks of a
 * few thousand symbols, holes of a sparse file skipped (they hold only null symbols).  Stops at
 * fn's non-zero return and returns it; else 0, or -EIO when a chunk cannot be read. */
typedef int (*elf_read_sym_fn)(const GElf_Sym *sym, size_t i, void *ctx);
int elf_read_symbols(const struct elf_read *e, const GElf_Shdr *sh, elf_read_sym_fn fn, void *ctx);

#endif
