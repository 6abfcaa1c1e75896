/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * elfsyms: function symbols of an ELF file (libelf), for uprobes and for
 * symbolizing samples.
 *
 * - .symtab and .dynsym are both read; only defined functions are kept
 *   (STT_FUNC and STT_GNU_IFUNC, st_shndx != SHN_UNDEF, st_value != 0,
 *   size may be 0).
 * - Names at one address are merged into one entry: a primary name
 *   (preference: not a hidden version, GLOBAL > WEAK > LOCAL, fewer leading
 *   '_', shorter) plus aliases.
 * - Symbol versions: a default version is dropped ("memcpy@@GLIBC_2.14" ->
 *   "memcpy"); a hidden/non-default one is kept in the name
 *   ("memcpy@GLIBC_2.2.5"), so the glob "memcpy" finds only what a program
 *   linking today calls.
 * - offset is the file offset (vaddr -> offset through the PT_LOAD program
 *   headers); it is what uprobe_multi / perf_event uprobes take.
 * - PLT stubs are named "name@plt" from .rela.plt (x86-64, arm64: an entry
 *   per relocation in .plt.sec, else in .plt after its header), as perf and
 *   objdump name them; only elfsyms_lookup sees them.
 *
 * Functions return 0 (or a count) on success and a negative errno on
 * failure; (err, errlen) gets one line for the user.
 */
#ifndef __TMABPF_ELFSYMS_H
#define __TMABPF_ELFSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* elfsym.flags */
#define ELFSYMS_F_IFUNC		(1u << 0) /* STT_GNU_IFUNC: the code is the resolver */
#define ELFSYMS_F_DYNSYM	(1u << 1) /* a name came from .dynsym */
#define ELFSYMS_F_SYMTAB	(1u << 2) /* a name came from .symtab */
#define ELFSYMS_F_NO_OFFSET	(1u << 3) /* addr is in no PT_LOAD file range: offset invalid */
#define ELFSYMS_F_COLD		(1u << 4) /* "f.cold": a split-off part of f, not an entry point */

struct elfsym {
	uint64_t addr;			/* st_value: link-time virtual address */
	uint64_t size;			/* st_size, may be 0 */
	uint64_t offset;		/* file offset (what uprobes take) */
	const char *name;		/* primary raw (mangled) name */
	const char *demangled;		/* demangled primary name, NULL if not C++ */
	const char **aliases;		/* other raw names at addr, nr_aliases of them */
	const char **aliases_demangled;	/* parallel to aliases, entries may be NULL */
	unsigned int nr_aliases;
	unsigned char bind;		/* STB_* of the primary name */
	unsigned int flags;		/* ELFSYMS_F_* */
};

struct elfsyms_seg {			/* one PT_LOAD */
	uint64_t vaddr, memsz;
	uint64_t offset, filesz;
	uint32_t flags;			/* PF_R/PF_W/PF_X */
};

/* The longest name kept, bytes: a real C++ name is under 4 KiB (libLLVM-15's longest: 604 mangled,
 * 8358 demangled); a symbol with a longer name is dropped, counted in nr_long_names. */
#define ELFSYMS_NAME_MAX (64u << 10)

struct elfsyms {
	char *path;
	struct elfsym *syms;		/* sorted by addr, one entry per address */
	size_t nr_syms;
	size_t nr_ifunc;
	struct elfsyms_seg *segs;
	size_t nr_segs;
	uint16_t e_type;		/* ET_DYN, ET_EXEC */
	uint16_t e_machine;
	uint64_t e_entry;		/* the ELF entry point's address (_start), 0: none */
	bool has_symtab;		/* the file had a .symtab (not stripped) */
	bool has_dynsym;
	char *soname;			/* DT_SONAME or NULL */
	unsigned char build_id[64];	/* NT_GNU_BUILD_ID */
	size_t build_id_len;		/* 0 if none */
	char build_id_hex[129];
	struct elfsym *plt;		/* PLT stubs "name@plt", as perf names them: lookup only (never matched
					 * by elfsyms_match: a uprobe there is not the function), by address */
	size_t nr_plt;
	size_t nr_long_names;		/* symbols dropped: a name longer than ELFSYMS_NAME_MAX */
	uint64_t pool_kept;		/* charged to other users' pool while held (elf_read_keep) */
};

int elfsyms_load(const char *path, struct elfsyms *out, char *err, size_t errlen);
void elfsyms_free(struct elfsyms *s);
/* The heap a loaded table holds: its arrays and strings, each string with malloc's 16-byte header. */
size_t elfsyms_bytes(const struct elfsyms *s);

/* demangled name if any, else the raw name */
static inline const char *elfsyms_display_name(const struct elfsym *sym)
{
	return sym->demangled ? sym->demangled : sym->name;
}

/*
 * Called once per matching address. matched: the name that matched the
 * glob. Return 0 to continue, anything else to stop (a negative value is
 * returned by elfsyms_match).
 */
typedef int (*elfsyms_match_fn)(const struct elfsym *sym, const char *matched, void *ctx);

/*
 * fnmatch(glob) against each entry's raw name, demangled name (also with the
 * parameter list, and then the return type, cut off: "ns::f" matches
 * "ns::f(int)") and aliases. Each address is reported once. ELFSYMS_F_COLD
 * fragments are skipped unless glob contains "cold". fn may be NULL (just
 * count). Returns the number of matches, or a negative errno / the negative
 * value fn returned.
 */
int elfsyms_match(const struct elfsyms *s, const char *glob, elfsyms_match_fn fn, void *ctx);

/* Same; *out is a malloc()ed array of pointers into s (free() it; NULL if 0). */
int elfsyms_match_all(const struct elfsyms *s, const char *glob, const struct elfsym ***out);

/*
 * For a "glob matches nothing" message: up to 5 names close to glob
 * (case-insensitive substring of glob stripped of * ? [ ] \, else small edit
 * distance), best first, written to buf as "a, b, c". Returns how many.
 */
int elfsyms_near_matches(const struct elfsyms *s, const char *glob, char *buf, size_t buflen);

/*
 * Symbol containing file_vaddr (link-time virtual address), or NULL. A
 * size-0 symbol covers addresses up to the next symbol.
 */
const struct elfsym *elfsyms_lookup(const struct elfsyms *s, uint64_t file_vaddr);
/* The PLT stub at file_vaddr ("name@plt"), or NULL (elfsyms_lookup tries it first). */
const struct elfsym *elfsyms_lookup_plt(const struct elfsyms *s, uint64_t file_vaddr);

/* file offset <-> link-time vaddr through the PT_LOAD headers (-ENOENT if none covers it) */
int elfsyms_offset_to_vaddr(const struct elfsyms *s, uint64_t offset, uint64_t *vaddr);
int elfsyms_vaddr_to_offset(const struct elfsyms *s, uint64_t vaddr, uint64_t *offset);

/*
 * Warning for an IFUNC symbol: a uprobe there fires in the resolver (run
 * once when the symbol is bound), not in the implementation; names up to 3
 * non-IFUNC symbols of the file that look like implementations. Returns the
 * length written (0 if sym is not an IFUNC).
 */
int elfsyms_ifunc_warning(const struct elfsyms *s, const struct elfsym *sym, char *buf, size_t buflen);

/* DT_SONAME of an ELF file: 0 and buf filled, -ENOENT if none, other -errno. */
int elfsyms_read_soname(const char *path, char *buf, size_t buflen);
/* DT_RUNPATH of an ELF file, else its DT_RPATH ("$ORIGIN/../lib:/opt/x"): the same returns. */
int elfsyms_read_runpath(const char *path, char *buf, size_t buflen);

#endif /* __TMABPF_ELFSYMS_H */
