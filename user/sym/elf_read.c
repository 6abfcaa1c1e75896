// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* ELF files another user may change while they are read.  See elf_read.h. */
#include <errno.h>
#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/warn.h"
#include "sym/elf_read.h"
#include "sym/user_file.h"

#define MAX_HEADERS (1u << 18)	/* section or program headers: 65535 fit e_shnum, a few more exist */

/* The pool of other users' files (elf_read.h): its bound and what is charged to it now, by the
 * files being read and the tables kept; atomic, as files may be read on several threads. */
static uint64_t others_max = ELF_READ_OTHERS_MAX, others_used;

void elf_read_set_others_max(uint64_t bytes)
{
	__atomic_store_n(&others_max, bytes, __ATOMIC_RELAXED);
}

uint64_t elf_read_others_max(void)
{
	return __atomic_load_n(&others_max, __ATOMIC_RELAXED);
}

/* bytes taken from the pool: true, else false and *left what it had left */
static bool pool_take(uint64_t bytes, uint64_t *left)
{
	uint64_t max = elf_read_others_max(), cur = __atomic_load_n(&others_used, __ATOMIC_RELAXED);

	do {
		*left = cur < max ? max - cur : 0;
		if (bytes > *left)
			return false;
	} while (!__atomic_compare_exchange_n(&others_used, &cur, cur + bytes, false, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return true;
}

static void pool_give(uint64_t bytes)
{
	__atomic_sub_fetch(&others_used, bytes, __ATOMIC_RELAXED);
}

uint64_t elf_read_keep(const struct elf_read *e, uint64_t bytes)
{
	if (!e->charged || !e->charged->other)
		return 0;
	__atomic_add_fetch(&others_used, bytes, __ATOMIC_RELAXED);	/* within what the reading charged */
	return bytes;
}

void elf_read_unkeep(uint64_t kept)
{
	pool_give(kept);
}

bool elf_read_others_file(const struct stat *st)
{
	const char *sudo = getenv("SUDO_UID");

	if (st->st_mode & S_IWOTH)
		return true;
	if (st->st_uid == 0 || st->st_uid == geteuid())
		return false;
	return !(sudo && geteuid() == 0 && strtoul(sudo, NULL, 10) == st->st_uid);
}

static uint64_t field(const unsigned char *p, int size, bool big_endian)
{
	uint64_t v = 0;

	for (int i = 0; i < size; i++)
		v |= (uint64_t)p[big_endian ? size - 1 - i : i] << (8 * i);
	return v;
}

/* More section or program headers than MAX_HEADERS (counted as libelf will: an extended count is
 * in section header 0), which libelf would allocate, all of them, at elf_begin: -EFBIG.  What is
 * not ELF, or too short to tell, is left to libelf to refuse. */
static int headers_bounded(int fd)
{
	unsigned char h[64], s0[64];
	uint64_t shoff, shnum, phnum;
	bool be, is64;

	if (pread(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG))
		return 0;
	be = h[EI_DATA] == ELFDATA2MSB;
	is64 = h[EI_CLASS] == ELFCLASS64;
	shoff = is64 ? field(h + 0x28, 8, be) : field(h + 0x20, 4, be);
	phnum = field(h + (is64 ? 0x38 : 0x2c), 2, be);
	shnum = field(h + (is64 ? 0x3c : 0x30), 2, be);
	if (shoff && (!shnum || phnum == PN_XNUM) && pread(fd, s0, sizeof(s0), shoff) == (ssize_t)sizeof(s0)) {
		if (!shnum)
			shnum = is64 ? field(s0 + 0x20, 8, be) : field(s0 + 0x14, 4, be);
		if (phnum == PN_XNUM)
			phnum = field(s0 + (is64 ? 0x2c : 0x1c), 4, be);
	}
	return shnum > MAX_HEADERS || phnum > MAX_HEADERS ? -EFBIG : 0;
}

int elf_read_open(struct elf_read *e, const char *path, char *err, size_t errlen)
{
	int ret;

	memset(e, 0, sizeof(*e));
	e->fd = -1;
	if (!(e->charged = calloc(1, sizeof(*e->charged)))) {
		err_set(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		elf_read_close(e);
		err_set(err, errlen, "libelf: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	e->fd = user_file_open(path, 0, &e->st);
	if (e->fd == -EINVAL) {
		err_set(err, errlen, "%s: not a regular file", path);
		e->fd = -1;
		elf_read_close(e);
		return -EINVAL;
	}
	if (e->fd < 0) {
		ret = e->fd;
		e->fd = -1;
		err_set(err, errlen, "open %s: %s%s", path, strerror(-ret),
			ret == -EACCES || ret == -EPERM ? " (run as root)" : " (check the library path)");
		elf_read_close(e);
		return ret;
	}
	e->charged->other = elf_read_others_file(&e->st);
	e->charged->uid = e->st.st_uid;
	if ((ret = headers_bounded(e->fd))) {
		err_set(err, errlen, "%s: more than %u section or program headers (a damaged or hostile file)",
			path, MAX_HEADERS);
		goto fail;
	}
	e->elf = elf_begin(e->fd, ELF_C_READ, NULL);
	if (!e->elf) {
		err_set(err, errlen, "%s: elf_begin: %s", path, elf_errmsg(-1));
		ret = -EINVAL;
		goto fail;
	}
	if (elf_kind(e->elf) != ELF_K_ELF) {
		err_set(err, errlen, "%s: not an ELF file (a linker script or text file?)", path);
		ret = -ENOEXEC;
		goto fail;
	}
	return 0;
fail:
	elf_read_close(e);
	return ret;
}

bool elf_read_changed(const struct elf_read *e)
{
	struct stat now;

	if (fstat(e->fd, &now))
		return true;
	return now.st_size != e->st.st_size || now.st_mtim.tv_sec != e->st.st_mtim.tv_sec ||
	       now.st_mtim.tv_nsec != e->st.st_mtim.tv_nsec || now.st_ctim.tv_sec != e->st.st_ctim.tv_sec ||
	       now.st_ctim.tv_nsec != e->st.st_ctim.tv_nsec;
}

void elf_read_close(struct elf_read *e)
{
	if (e->elf)
		elf_end(e->elf);
	if (e->fd >= 0)
		close(e->fd);
	if (e->charged)
		pool_give(e->charged->pooled);
	free(e->charged);
	e->charged = NULL;
	e->elf = NULL;
	e->fd = -1;
}

int elf_read_charge(const struct elf_read *e, uint64_t bytes)
{
	struct elf_charges *c = e->charged;

	if (!c)
		return -EINVAL;
	if (elf_read_over(e))
		goto over;
	if (c->other && !pool_take(bytes, &c->pool_left)) {
		c->pool_full = true;
		goto over;
	}
	if (bytes > ELF_READ_MEMORY_MAX - c->bytes) {
		if (c->other)
			pool_give(bytes);
		goto over;
	}
	c->bytes += bytes;
	if (c->other)
		c->pooled += bytes;
	return 0;
over:
	c->bytes = ELF_READ_MEMORY_MAX + 1;
	return -E2BIG;
}

void elf_read_over_line(const struct elf_read *e, char *buf, size_t len)
{
	const struct elf_charges *c = e->charged;
	uint64_t max = elf_read_others_max();

	if (c && c->pool_full) {
		uint64_t mine = c->pooled + c->pool_left, others = max > mine ? max - mine : 0;

		err_set(buf, len, "its sections and symbols need more than the %llu MiB left to it of %llu MiB, the "
			"memory limit that the symbols of other users' files share (its owner: uid %u; %llu MiB "
			"held by others): not read (--max-user-symbols=MIB raises it)",
			(unsigned long long)(mine >> 20), (unsigned long long)(max >> 20), c->uid,
			(unsigned long long)(others >> 20));
	}
	else
		err_set(buf, len, "its sections and symbols need more than %llu MiB, the memory limit of one "
			"file's symbols (a damaged or hostile file): not read", ELF_READ_MEMORY_MAX >> 20);
}

bool elf_read_over(const struct elf_read *e)
{
	return e->charged && e->charged->bytes > ELF_READ_MEMORY_MAX;
}

int elf_read_at(const struct elf_read *e, uint64_t off, void *buf, size_t len)
{
	ssize_t n;

	if (off > (uint64_t)e->st.st_size || len > (uint64_t)e->st.st_size - off)
		return -EIO;
	while (len) {
		n = pread(e->fd, buf, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		buf = (char *)buf + n;
		off += n;
		len -= n;
	}
	return 0;
}

uint64_t elf_read_next_data(const struct elf_read *e, uint64_t off)
{
	off_t d;

	if (off >= (uint64_t)e->st.st_size)
		return e->st.st_size;
	d = lseek(e->fd, (off_t)off, SEEK_DATA);
	if (d < 0)
		return errno == ENXIO ? (uint64_t)e->st.st_size : off;	/* no SEEK_DATA here: read on */
	return (uint64_t)d;
}

/* A section's bytes are within ELF_READ_SECTION_MAX and the file (NOBITS holds none). */
static bool section_small(const struct elf_read *e, const GElf_Shdr *sh)
{
	if (sh->sh_type == SHT_NOBITS)
		return true;
	return sh->sh_size <= ELF_READ_SECTION_MAX && sh->sh_offset <= (uint64_t)e->st.st_size &&
	       sh->sh_size <= (uint64_t)e->st.st_size - sh->sh_offset;
}

/* Section idx's bytes charged to the memory limit once: libelf hands the copy it keeps on a second
 * read.  Past the remembered sections' room a section read again is charged again (more, never less). */
static int charge_section(const struct elf_read *e, size_t idx, uint64_t bytes)
{
	struct elf_charges *c = e->charged;
	int r;

	for (size_t i = 0; i < c->nscn; i++)
		if (c->scn[i] == idx)
			return 0;
	if ((r = elf_read_charge(e, bytes)))
		return r;
	if (c->nscn < sizeof(c->scn) / sizeof(c->scn[0]))
		c->scn[c->nscn++] = idx;
	return 0;
}

Elf_Data *elf_read_small_data(const struct elf_read *e, Elf_Scn *scn)
{
	GElf_Shdr sh;

	if (!e->charged || !gelf_getshdr(scn, &sh) || !section_small(e, &sh))
		return NULL;
	if (sh.sh_type != SHT_NOBITS && charge_section(e, elf_ndxscn(scn), sh.sh_size))
		return NULL;
	return elf_getdata(scn, NULL);
}

bool elf_read_ids_bounded(const struct elf_read *e)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, n;
	uint64_t notes = 0;
	bool names_read = false;
	GElf_Shdr sh;
	GElf_Phdr ph;

	if (elf_getshdrstrndx(e->elf, &shstrndx))
		shstrndx = 0;
	while ((scn = elf_nextscn(e->elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return false;
		if (sh.sh_type == SHT_NOTE && !section_small(e, &sh))
			return false;
		if (sh.sh_type == SHT_NOTE)
			notes += sh.sh_size;
		/* the section names are read (whole) for this name: they must be small too */
		if (sh.sh_type == SHT_PROGBITS && shstrndx) {
			Elf_Scn *names = elf_getscn(e->elf, shstrndx);

			if (!names || (!names_read && !elf_read_small_data(e, names)))
				return false;
			names_read = true;	/* charged once: libelf keeps it */
			name = elf_strptr(e->elf, shstrndx, sh.sh_name);
			if (name && !strcmp(name, ".gnu_debuglink") && !section_small(e, &sh))
				return false;
			if (name && !strcmp(name, ".gnu_debuglink"))
				notes += sh.sh_size;
		}
	}
	if (!elf_getphdrnum(e->elf, &n))
		for (size_t i = 0; i < n; i++)
			if (gelf_getphdr(e->elf, i, &ph) && ph.p_type == PT_NOTE) {
				if (ph.p_filesz > ELF_READ_SECTION_MAX)
					return false;
				notes += ph.p_filesz;
			}
	return !elf_read_charge(e, notes);	/* before libdw reads them (each kept until elf_end) */
}

int elf_strtab_open(struct elf_strtab *t, const struct elf_read *e, size_t shndx)
{
	Elf_Scn *scn = elf_getscn(e->elf, shndx);
	GElf_Shdr sh;

	memset(t, 0, sizeof(*t));
	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_STRTAB)
		return -ENOENT;
	t->e = e;
	t->off = sh.sh_offset;
	t->size = sh.sh_size;
	if (elf_read_charge(e, t->size <= ELF_STRTAB_WHOLE ? t->size + 1 : ELF_STRTAB_WINDOW + 1))
		return -E2BIG;
	if (t->size <= ELF_STRTAB_WHOLE && (t->win = malloc(t->size + 1))) {
		if (elf_read_at(e, t->off, t->win, t->size) == 0) {
			t->win_len = t->size;
			t->win[t->size] = '\0';
			return 0;
		}
		free(t->win);	/* unreadable whole (truncated): each name is tried alone */
	}
	t->win = malloc(ELF_STRTAB_WINDOW + 1);
	return t->win ? 0 : -ENOMEM;
}

const char *elf_strtab_get(struct elf_strtab *t, uint64_t idx)
{
	const char *p;

	if (idx >= t->size)
		return NULL;
	if (idx >= t->win_at && idx < t->win_at + t->win_len) {
		p = memchr(t->win + (idx - t->win_at), 0, t->win_len - (idx - t->win_at));
		if (p)
			return t->win + (idx - t->win_at);
		if (t->win_at == idx)
			return NULL;	/* longer than the window */
	}
	if (t->win_len == t->size)
		return NULL;	/* read whole: no NUL after idx */
	/* the window moves to idx */
	t->win_len = t->size - idx < ELF_STRTAB_WINDOW ? t->size - idx : ELF_STRTAB_WINDOW;
	t->win_at = idx;
	if (elf_read_at(t->e, t->off + idx, t->win, t->win_len)) {
		t->win_len = 0;
		return NULL;
	}
	t->win[t->win_len] = '\0';
	return memchr(t->win, 0, t->win_len) ? t->win : NULL;
}

void elf_strtab_close(struct elf_strtab *t)
{
	free(t->win);
	memset(t, 0, sizeof(*t));
}

#define SYM_CHUNK 4096

int elf_read_symbols(const struct elf_read *e, const GElf_Shdr *sh, elf_read_sym_fn fn, void *ctx)
{
	int cls = gelf_getclass(e->elf), ret = 0;
	size_t ent = cls == ELFCLASS64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym), n, i = 1;
	const char *ident = elf_getident(e->elf, NULL);
	void *raw, *mem;

	if (sh->sh_entsize != ent || !ident)
		return 0;	/* not a symbol table libelf could read either */
	n = sh->sh_size / ent;
	raw = malloc(SYM_CHUNK * ent);
	mem = malloc(SYM_CHUNK * ent);
	if (!raw || !mem) {
		free(raw);
		free(mem);
		return -ENOMEM;
	}
	while (i < n && !ret) {
		uint64_t at = sh->sh_offset + i * ent, data = elf_read_next_data(e, at);
		size_t k = n - i < SYM_CHUNK ? n - i : SYM_CHUNK;
		Elf_Data src = { .d_buf = raw, .d_type = ELF_T_SYM, .d_size = k * ent, .d_version = EV_CURRENT };
		Elf_Data dst = { .d_buf = mem, .d_type = ELF_T_SYM, .d_size = k * ent, .d_version = EV_CURRENT };

		if (data > at && (data - sh->sh_offset) / ent > i) {	/* a hole: null symbols only */
			i = (data - sh->sh_offset) / ent;
			continue;
		}
		if (elf_read_at(e, at, raw, k * ent) || !gelf_xlatetom(e->elf, &dst, &src, ident[EI_DATA])) {
			ret = -EIO;
			break;
		}
		for (size_t j = 0; j < k && !ret; j++) {
			GElf_Sym sym;

			if (cls == ELFCLASS64) {
				sym = ((Elf64_Sym *)mem)[j];
			} else {
				const Elf32_Sym *s32 = (Elf32_Sym *)mem + j;

				sym = (GElf_Sym){ .st_name = s32->st_name, .st_info = s32->st_info,
						  .st_other = s32->st_other, .st_shndx = s32->st_shndx,
						  .st_value = s32->st_value, .st_size = s32->st_size };
			}
			ret = fn(&sym, i + j, ctx);
		}
		i += k;
	}
	free(raw);
	free(mem);
	return ret;
}
