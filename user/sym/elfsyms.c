// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* elfsyms: ELF function symbols via libelf. See elfsyms.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/grow.h"
#include "lib/sorted.h"
#include "lib/suggest.h"
#include "lib/warn.h"
#include "sym/elf_read.h"
#include "sym/elfsyms.h"

/* libstdc++ (link -lstdc++) */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

#define MAX_NEAR	5
#define NAME_BUF	1024

struct rawsym {
	uint64_t addr;
	uint64_t size;
	char *name;
	unsigned char bind;
	unsigned char type;
	unsigned int src;	/* ELFSYMS_F_DYNSYM / ELFSYMS_F_SYMTAB */
};

struct rawvec {
	struct rawsym *v;
	size_t n, cap;
};

/* ---- program headers -------------------------------------------------- */

static int load_segments(Elf *elf, struct elfsyms *s, char *err, size_t errlen)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n)) {
		err_set(err, errlen, "%s: cannot read program headers: %s", s->path, elf_errmsg(-1));
		return -EINVAL;
	}
	s->segs = calloc(n ? n : 1, sizeof(*s->segs));
	if (!s->segs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		s->segs[s->nr_segs++] = (struct elfsyms_seg){
			.vaddr = ph.p_vaddr, .memsz = ph.p_memsz,
			.offset = ph.p_offset, .filesz = ph.p_filesz,
			.flags = ph.p_flags,
		};
	}
	return 0;
}

/* The PT_LOAD whose file-backed range holds pos, counted in vaddr (by_vaddr)
 * or file-offset space; overlapping segments are unusual: prefer the
 * executable one. */
static const struct elfsyms_seg *seg_holding(const struct elfsyms *s, uint64_t pos, bool by_vaddr)
{
	const struct elfsyms_seg *best = NULL;

	for (size_t i = 0; i < s->nr_segs; i++) {
		const struct elfsyms_seg *g = &s->segs[i];
		uint64_t start = by_vaddr ? g->vaddr : g->offset;

		if (pos < start || pos >= start + g->filesz)
			continue;
		if (!best || ((g->flags & PF_X) && !(best->flags & PF_X)))
			best = g;
	}
	return best;
}

int elfsyms_vaddr_to_offset(const struct elfsyms *s, uint64_t vaddr, uint64_t *offset)
{
	const struct elfsyms_seg *g = seg_holding(s, vaddr, true);

	if (!g)
		return -ENOENT;
	*offset = vaddr - g->vaddr + g->offset;
	return 0;
}

int elfsyms_offset_to_vaddr(const struct elfsyms *s, uint64_t offset, uint64_t *vaddr)
{
	const struct elfsyms_seg *g = seg_holding(s, offset, false);

	if (!g)
		return -ENOENT;
	*vaddr = offset - g->offset + g->vaddr;
	return 0;
}

/* ---- notes, dynamic --------------------------------------------------- */

static bool scan_notes(Elf_Data *data, struct elfsyms *s)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while (data && off < data->d_size &&
	       (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((char *)data->d_buf + name_off, "GNU", 4) &&
		    nh.n_descsz > 0 && nh.n_descsz <= sizeof(s->build_id)) {
			size_t i;

			memcpy(s->build_id, (char *)data->d_buf + desc_off, nh.n_descsz);
			s->build_id_len = nh.n_descsz;
			for (i = 0; i < nh.n_descsz; i++)
				sprintf(s->build_id_hex + 2 * i, "%02x", s->build_id[i]);
			return true;
		}
	}
	return false;
}

static void load_build_id(const struct elf_read *er, struct elfsyms *s)
{
	Elf *elf = er->elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Phdr ph;
	size_t i, n;

	if (!elf_read_ids_bounded(er))
		return;	/* each note bounded, all of them charged to the memory limit: read below */
	while ((scn = elf_nextscn(elf, scn))) {
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE && scan_notes(elf_getdata(scn, NULL), s))
			return;
	}
	/* no section headers: fall back to PT_NOTE */
	if (elf_getphdrnum(elf, &n))
		return;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_NOTE)
			continue;
		if (scan_notes(elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_NHDR), s))
			return;
	}
}

/* The string of the dynamic entry tag, else of tag2 (-1: none), or NULL; the dynamic section and
 * its string table read bounded (elf_read.h). */
static char *read_dyn_string(const struct elf_read *er, Elf64_Sxword tag, Elf64_Sxword tag2)
{
	Elf *elf = er->elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Dyn dyn;
	Elf_Data *data;
	size_t i, n;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf64_Xword off = 0;
		bool found = false, second = false;
		struct elf_strtab t;
		const char *str;
		char *out = NULL;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		data = elf_read_small_data(er, scn);
		if (!data)
			return NULL;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n && !found; i++) {
			if (!gelf_getdyn(data, i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag == tag) {
				off = dyn.d_un.d_val;
				found = true;
			} else if (dyn.d_tag == tag2 && !second) {
				off = dyn.d_un.d_val;
				second = true;
			}
		}
		if (!found && !second)
			return NULL;
		if (elf_strtab_open(&t, er, sh.sh_link) == 0 && (str = elf_strtab_get(&t, off)))
			out = strdup(str);
		elf_strtab_close(&t);
		return out;
	}
	return NULL;
}

static char *read_soname(const struct elf_read *er)
{
	return read_dyn_string(er, DT_SONAME, -1);
}

/* A dynamic string of path (tag, else tag2) into buf: 0, -ENOENT if none, other -errno. */
static int read_dyn_string_file(const char *path, Elf64_Sxword tag, Elf64_Sxword tag2, char *buf, size_t buflen)
{
	struct elf_read e;
	char *str;
	int ret;

	ret = elf_read_open(&e, path, NULL, 0);
	if (ret)
		return ret;
	str = read_dyn_string(&e, tag, tag2);
	if (elf_read_changed(&e)) {
		free(str);
		str = NULL;
		ret = -EAGAIN;
	}
	elf_read_close(&e);
	if (!str)
		return ret ? ret : -ENOENT;
	ret = snprintf(buf, buflen, "%s", str) >= (int)buflen ? -ENAMETOOLONG : 0;
	free(str);
	return ret;
}

int elfsyms_read_runpath(const char *path, char *buf, size_t buflen)
{
	return read_dyn_string_file(path, DT_RUNPATH, DT_RPATH, buf, buflen);
}

int elfsyms_read_soname(const char *path, char *buf, size_t buflen)
{
	return read_dyn_string_file(path, DT_SONAME, -1, buf, buflen);
}

/* ---- symbol versions (.gnu.version / .gnu.version_d) ------------------ */

struct versions {
	Elf_Data *versym;	/* one GElf_Versym per .dynsym entry */
	char **names;		/* index -> verdef name */
	size_t nr_names;
};

static void versions_free(struct versions *v)
{
	size_t i;

	for (i = 0; i < v->nr_names; i++)
		free(v->names[i]);
	free(v->names);
	memset(v, 0, sizeof(*v));
}

static int load_verdefs(const struct elf_read *er, Elf_Scn *scn, GElf_Shdr *sh, struct versions *v)
{
	Elf_Data *data = elf_read_small_data(er, scn);
	struct elf_strtab t;
	size_t off = 0, i;
	GElf_Verdef vd;
	GElf_Verdaux va;
	int ret = 0;

	if (!data || elf_strtab_open(&t, er, sh->sh_link))
		return 0;
	for (i = 0; i < sh->sh_info && !ret; i++) {
		const char *name;

		if (!gelf_getverdef(data, off, &vd) ||
		    !gelf_getverdaux(data, off + vd.vd_aux, &va))
			break;
		name = elf_strtab_get(&t, va.vda_name);
		if (name && strnlen(name, ELFSYMS_NAME_MAX + 1) > ELFSYMS_NAME_MAX)
			name = NULL;	/* no real version's name: its symbols keep theirs unversioned */
		if (name && !(vd.vd_flags & VER_FLG_BASE) && elf_read_charge(er, strlen(name) + 1 + 16 + sizeof(char *))) {
			ret = -E2BIG;
			break;
		}
		if (name && !(vd.vd_flags & VER_FLG_BASE)) {
			if (vd.vd_ndx >= v->nr_names) {
				size_t n = vd.vd_ndx + 1;
				char **tmp = realloc(v->names, n * sizeof(*tmp));

				if (!tmp) {
					ret = -ENOMEM;
					break;
				}
				memset(tmp + v->nr_names, 0, (n - v->nr_names) * sizeof(*tmp));
				v->names = tmp;
				v->nr_names = n;
			}
			free(v->names[vd.vd_ndx]);
			v->names[vd.vd_ndx] = strdup(name);
			if (!v->names[vd.vd_ndx])
				ret = -ENOMEM;
		}
		if (!vd.vd_next)
			break;
		off += vd.vd_next;
	}
	elf_strtab_close(&t);
	return ret;
}

static int load_versions(const struct elf_read *er, struct versions *v)
{
	Elf *elf = er->elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int ret;

	memset(v, 0, sizeof(*v));
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_GNU_versym) {
			v->versym = elf_read_small_data(er, scn);
		} else if (sh.sh_type == SHT_GNU_verdef) {
			ret = load_verdefs(er, scn, &sh, v);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* hidden (non-default) version name of dynsym index i, or NULL */
static const char *hidden_version(const struct versions *v, size_t i)
{
	GElf_Versym vs;

	if (!v->versym || !gelf_getversym(v->versym, i, &vs))
		return NULL;
	if (!(vs & 0x8000))
		return NULL;
	vs &= 0x7fff;
	if (vs < 2 || vs >= v->nr_names)
		return NULL;
	return v->names[vs];
}

/* ---- reading symbol tables -------------------------------------------- */

static int raw_push(struct rawvec *rv, const struct rawsym *r)
{
	struct rawsym *tmp = grow(rv->v, &rv->cap, rv->n, sizeof(*tmp), 1024);

	if (!tmp)
		return -ENOMEM;
	rv->v = tmp;
	rv->v[rv->n++] = *r;
	return 0;
}

/* normalized name: "f@@V" -> "f"; hidden dynsym version -> "f@V" */
static char *make_name(const char *name, const char *hidden_ver)
{
	const char *at2 = strstr(name, "@@");
	char *out;

	if (at2)
		return strndup(name, at2 - name);
	if (hidden_ver && !strchr(name, '@')) {
		if (asprintf(&out, "%s@%s", name, hidden_ver) < 0)
			return NULL;
		return out;
	}
	return strdup(name);
}

struct symtab_ctx {
	const struct elf_read *er;
	struct elf_strtab names;
	unsigned int src;
	const struct versions *ver;
	struct rawvec *rv;
	size_t long_names;
};

static int take_symbol(const GElf_Sym *sym, size_t i, void *ctx)
{
	struct symtab_ctx *c = ctx;
	struct rawsym r = { .src = c->src };
	int type = GELF_ST_TYPE(sym->st_info), ret;
	const char *name;

	if (type != STT_FUNC && type != STT_GNU_IFUNC)
		return 0;
	if (sym->st_shndx == SHN_UNDEF || sym->st_value == 0)
		return 0;
	name = elf_strtab_get(&c->names, sym->st_name);
	if (!name || !name[0])
		return 0;
	if (strnlen(name, ELFSYMS_NAME_MAX + 1) > ELFSYMS_NAME_MAX) {
		c->long_names++;
		return 0;
	}
	/* what it will hold, charged before: its raw entry (three times: the vector doubles through
	 * realloc, and qsort takes a copy), its merged entry and its name (a user's table may name a
	 * long string many times); a demangled name is charged once made (build_entry) */
	if (elf_read_charge(c->er, 3 * sizeof(struct rawsym) + sizeof(struct elfsym) + strlen(name) + 1 + 16))
		return -E2BIG;
	r.addr = sym->st_value;
	r.size = sym->st_size;
	r.bind = GELF_ST_BIND(sym->st_info);
	r.type = type;
	r.name = make_name(name, c->src == ELFSYMS_F_DYNSYM ? hidden_version(c->ver, i) : NULL);
	if (!r.name)
		return -ENOMEM;
	ret = raw_push(c->rv, &r);
	if (ret)
		free(r.name);
	return ret;
}

/* The table is read streamed, its names through a window (elf_read.h): a user's .symtab or .strtab
 * that claims gigabytes of a sparse file costs no memory, and its holes no time. */
static int read_symtab(const struct elf_read *er, GElf_Shdr *sh, unsigned int src, const struct versions *ver,
		       struct rawvec *rv, struct elfsyms *s)
{
	struct symtab_ctx c = { .er = er, .src = src, .ver = ver, .rv = rv };
	int ret;

	if (elf_strtab_open(&c.names, er, sh->sh_link))
		return 0;	/* no names: nothing to name code with */
	ret = elf_read_symbols(er, sh, take_symbol, &c);
	elf_strtab_close(&c.names);
	s->nr_long_names += c.long_names;
	return ret == -EIO ? 0 : ret;	/* what was read stays; a change under us is caught by the caller */
}

static int read_all_symbols(const struct elf_read *er, struct elfsyms *s, struct rawvec *rv,
			    char *err, size_t errlen)
{
	Elf *elf = er->elf;
	Elf_Scn *scn = NULL;
	struct versions ver;
	GElf_Shdr sh;
	int ret;

	ret = load_versions(er, &ver);
	if (ret)
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB) {
			s->has_symtab = true;
			ret = read_symtab(er, &sh, ELFSYMS_F_SYMTAB, &ver, rv, s);
		} else if (sh.sh_type == SHT_DYNSYM) {
			s->has_dynsym = true;
			ret = read_symtab(er, &sh, ELFSYMS_F_DYNSYM, &ver, rv, s);
		}
		if (ret)
			goto out;
	}
out:
	versions_free(&ver);
	if (ret == -ENOMEM)
		err_set(err, errlen, "%s: out of memory reading symbols", s->path);
	return ret;
}

/* ---- merging ---------------------------------------------------------- */

static int bind_rank(unsigned char bind)
{
	switch (bind) {
	case STB_GLOBAL: return 0;
	case STB_WEAK: return 1;
	case STB_LOCAL: return 2;
	default: return 3;
	}
}

static int underscores(const char *s)
{
	int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* <0 if a is the better primary name */
static int primary_cmp(const struct rawsym *a, const struct rawsym *b)
{
	int d;

	d = (strchr(a->name, '@') != NULL) - (strchr(b->name, '@') != NULL);
	if (d)
		return d;
	d = bind_rank(a->bind) - bind_rank(b->bind);
	if (d)
		return d;
	d = underscores(a->name) - underscores(b->name);
	if (d)
		return d;
	d = (int)strlen(a->name) - (int)strlen(b->name);
	if (d)
		return d;
	return strcmp(a->name, b->name);
}

static int raw_cmp(const void *pa, const void *pb)
{
	const struct rawsym *a = pa, *b = pb;
	int d;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	d = strcmp(a->name, b->name);
	if (d)
		return d;
	return bind_rank(a->bind) - bind_rank(b->bind);
}

static char *demangle(const char *name)
{
	const char *at;
	char *base, *dem, *out;
	int status = 0;

	if (strncmp(name, "_Z", 2))
		return NULL;
	at = strchr(name, '@');
	base = at ? strndup(name, at - name) : (char *)name;
	if (!base)
		return NULL;
	dem = __cxa_demangle(base, NULL, NULL, &status);
	if (base != name)
		free(base);
	if (status || !dem) {
		free(dem);
		return NULL;
	}
	if (!at)
		return dem;
	if (asprintf(&out, "%s%s", dem, at) < 0)
		out = NULL;
	free(dem);
	return out;
}

/* demangle(name), its bytes charged to the file's memory limit (a user's name may demangle to many
 * times its length): NULL when not C++, or with *over set when past the limit */
static char *demangle_charged(const struct elf_read *er, const char *name, bool *over)
{
	char *dem = demangle(name);

	if (dem && elf_read_charge(er, strlen(dem) + 1 + 16)) {
		free(dem);
		*over = true;
		return NULL;
	}
	return dem;
}

/* "f.cold", "f.cold.12", "f.part.0.cold": GCC's split-off cold code */
static bool is_cold(const char *name)
{
	const char *p = name;

	while ((p = strstr(p, ".cold"))) {
		p += 5;
		if (!*p || *p == '.' || *p == '@')
			return true;
	}
	return false;
}

/* build one entry from group g[0..n) (same addr, sorted by name) */
static int build_entry(const struct elf_read *er, struct elfsyms *s, struct rawsym *g, size_t n, struct elfsym *e)
{
	size_t i, best = 0, k = 0;
	uint64_t maxsize = 0;
	bool over = false;

	memset(e, 0, sizeof(*e));
	/* drop duplicate names (same name in .symtab and .dynsym) */
	for (i = 0; i < n; i++) {
		if (k && !strcmp(g[k - 1].name, g[i].name)) {
			g[k - 1].src |= g[i].src;
			if (g[i].type == STT_GNU_IFUNC)
				g[k - 1].type = STT_GNU_IFUNC;
			if (g[i].size > g[k - 1].size)
				g[k - 1].size = g[i].size;
			free(g[i].name);
			g[i].name = NULL;
			continue;
		}
		if (k != i) {
			g[k] = g[i];
			g[i].name = NULL;
		}
		k++;
	}
	n = k;
	for (i = 0; i < n; i++) {
		if (primary_cmp(&g[i], &g[best]) < 0)
			best = i;
		if (g[i].size > maxsize)
			maxsize = g[i].size;
		if (g[i].type == STT_GNU_IFUNC)
			e->flags |= ELFSYMS_F_IFUNC;
		e->flags |= g[i].src;
	}
	e->addr = g[best].addr;
	e->size = g[best].size ? g[best].size : maxsize;
	e->bind = g[best].bind;
	e->name = g[best].name;
	g[best].name = NULL;
	e->demangled = demangle_charged(er, e->name, &over);
	if (is_cold(e->name))
		e->flags |= ELFSYMS_F_COLD;
	if (n > 1) {
		e->aliases = calloc(n - 1, sizeof(*e->aliases));
		e->aliases_demangled = calloc(n - 1, sizeof(*e->aliases_demangled));
		if (!e->aliases || !e->aliases_demangled)
			return -ENOMEM;
		for (i = 0; i < n; i++) {
			if (!g[i].name)
				continue;
			e->aliases[e->nr_aliases] = g[i].name;
			e->aliases_demangled[e->nr_aliases] = demangle_charged(er, g[i].name, &over);
			e->nr_aliases++;
			g[i].name = NULL;
		}
	}
	if (over)
		return -E2BIG;
	if (elfsyms_vaddr_to_offset(s, e->addr, &e->offset)) {
		e->offset = 0;
		e->flags |= ELFSYMS_F_NO_OFFSET;
	}
	return 0;
}

static int merge_symbols(const struct elf_read *er, struct elfsyms *s, struct rawvec *rv)
{
	size_t i, j, groups = 0;
	int ret;

	if (rv->n)	/* qsort(NULL, 0) is undefined: an ELF file without function symbols */
		qsort(rv->v, rv->n, sizeof(*rv->v), raw_cmp);
	for (i = 0; i < rv->n; i++)
		if (!i || rv->v[i].addr != rv->v[i - 1].addr)
			groups++;
	s->syms = calloc(groups ? groups : 1, sizeof(*s->syms));
	if (!s->syms)
		return -ENOMEM;
	for (i = 0; i < rv->n; i = j) {
		for (j = i + 1; j < rv->n && rv->v[j].addr == rv->v[i].addr; j++)
			;
		ret = build_entry(er, s, &rv->v[i], j - i, &s->syms[s->nr_syms]);
		s->nr_syms++;	/* count it even on failure so elfsyms_free frees it */
		if (ret)
			return ret;
		if (s->syms[s->nr_syms - 1].flags & ELFSYMS_F_IFUNC)
			s->nr_ifunc++;
	}
	return 0;
}

/* ---- PLT stubs ------------------------------------------------------- */

/* The section named name, its header in sh; NULL when none. */
static Elf_Scn *section_named(const struct elf_read *er, const char *name, GElf_Shdr *sh)
{
	struct elf_strtab names;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(er->elf, &shstrndx) || elf_strtab_open(&names, er, shstrndx))
		return NULL;
	while ((scn = elf_nextscn(er->elf, scn))) {
		const char *n;

		if (gelf_getshdr(scn, sh) && (n = elf_strtab_get(&names, sh->sh_name)) && !strcmp(n, name))
			break;
	}
	elf_strtab_close(&names);
	return scn;
}

static int plt_cmp(const void *pa, const void *pb)
{
	const struct elfsym *a = pa, *b = pb;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* "name@plt" for each .rela.plt entry (perf's dso__synthesize_plt_symbols): the stubs are 16 bytes,
 * in .plt.sec when there is one (IBT), else in .plt after its header (16 bytes; 32 on arm64). */
static int read_plt(const struct elf_read *er, struct elfsyms *s)
{
	GElf_Shdr rela_sh, plt_sh, sec_sh, dsym_sh;
	Elf_Scn *rela = section_named(er, ".rela.plt", &rela_sh), *dsym;
	bool has_sec = section_named(er, ".plt.sec", &sec_sh) != NULL;
	bool has_plt = section_named(er, ".plt", &plt_sh) != NULL;
	uint64_t base, ent = 16;
	Elf_Data *relas, *syms;
	struct elf_strtab names;
	size_t n;
	int ret = 0;

	if ((s->e_machine != EM_X86_64 && s->e_machine != EM_AARCH64) || !rela || rela_sh.sh_type != SHT_RELA ||
	    !rela_sh.sh_entsize || (!has_sec && !has_plt))
		return 0;
	base = has_sec ? sec_sh.sh_addr : plt_sh.sh_addr + (s->e_machine == EM_AARCH64 ? 32 : ent);
	dsym = elf_getscn(er->elf, rela_sh.sh_link);
	if (!dsym || !gelf_getshdr(dsym, &dsym_sh) || dsym_sh.sh_type != SHT_DYNSYM ||
	    !(relas = elf_read_small_data(er, rela)) || !(syms = elf_read_small_data(er, dsym)) ||
	    elf_strtab_open(&names, er, dsym_sh.sh_link))
		return 0;
	n = rela_sh.sh_size / rela_sh.sh_entsize;
	if (elf_read_charge(er, (n ? n : 1) * sizeof(*s->plt)))
		ret = -E2BIG;
	else if (!(s->plt = calloc(n ? n : 1, sizeof(*s->plt))))
		ret = -ENOMEM;
	for (size_t i = 0; !ret && i < n; i++) {
		const char *name;
		GElf_Rela r;
		GElf_Sym sym;
		char *full;
		bool over = false;

		if (!gelf_getrela(relas, (int)i, &r) || !gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym) ||
		    !(name = elf_strtab_get(&names, sym.st_name)) || !name[0])
			continue;
		if (strnlen(name, ELFSYMS_NAME_MAX + 1) > ELFSYMS_NAME_MAX) {
			s->nr_long_names++;
			continue;
		}
		if (elf_read_charge(er, strlen(name) + sizeof("@plt") + 16)) {	/* a user's may name one long name */
			ret = -E2BIG;
			break;
		}
		if (asprintf(&full, "%s@plt", name) < 0) {
			ret = -ENOMEM;
			break;
		}
		s->plt[s->nr_plt] = (struct elfsym){ .addr = base + i * ent, .size = ent, .name = full,
						     .demangled = demangle_charged(er, full, &over), .bind = STB_GLOBAL,
						     .flags = ELFSYMS_F_DYNSYM };
		if (elfsyms_vaddr_to_offset(s, s->plt[s->nr_plt].addr, &s->plt[s->nr_plt].offset))
			s->plt[s->nr_plt].flags |= ELFSYMS_F_NO_OFFSET;
		s->nr_plt++;
		if (over)
			ret = -E2BIG;
	}
	elf_strtab_close(&names);
	if (s->nr_plt)
		qsort(s->plt, s->nr_plt, sizeof(*s->plt), plt_cmp);
	return ret;
}

static void rawvec_free(struct rawvec *rv)
{
	size_t i;

	for (i = 0; i < rv->n; i++)
		free(rv->v[i].name);
	free(rv->v);
	memset(rv, 0, sizeof(*rv));
}

int elfsyms_load(const char *path, struct elfsyms *out, char *err, size_t errlen)
{
	struct rawvec rv = {};
	struct elf_read e;
	GElf_Ehdr eh;
	Elf *elf;
	int ret;

	memset(out, 0, sizeof(*out));
	out->path = strdup(path);
	if (!out->path)
		return -ENOMEM;
	ret = elf_read_open(&e, path, err, errlen);
	if (ret)
		goto fail;
	elf = e.elf;
	if (!gelf_getehdr(elf, &eh)) {
		err_set(err, errlen, "%s: cannot read ELF header: %s", path, elf_errmsg(-1));
		ret = -EINVAL;
		goto out;
	}
	out->e_type = eh.e_type;
	out->e_machine = eh.e_machine;
	out->e_entry = eh.e_entry;
	if (eh.e_type != ET_DYN && eh.e_type != ET_EXEC) {
		err_set(err, errlen, "%s: ELF type %u is not an executable or shared library",
			path, eh.e_type);
		ret = -ENOEXEC;
		goto out;
	}
	ret = load_segments(elf, out, err, errlen);
	if (ret)
		goto out;
	load_build_id(&e, out);
	out->soname = read_soname(&e);
	ret = read_all_symbols(&e, out, &rv, err, errlen);
	if (ret)
		goto out;
	ret = merge_symbols(&e, out, &rv);
	if (!ret)
		ret = read_plt(&e, out);
	if (ret == -ENOMEM)
		err_set(err, errlen, "%s: out of memory merging symbols", path);
out:
	if (ret != -ENOMEM && e.charged && elf_read_over(&e)) {
		/* a user's sections that add up past the limit: given up before reading past it */
		char why[384];

		elf_read_over_line(&e, why, sizeof(why));
		err_set(err, errlen, "%s: %s", path, why);
		ret = -E2BIG;
	}
	if (ret != -ENOMEM && ret != -E2BIG && elf_read_changed(&e)) {
		/* rewritten or truncated by its owner while read: what libelf gave (or failed to
		 * read) may be half old, half new */
		err_set(err, errlen, "%s: file changed while reading; its symbols are skipped", path);
		ret = -EAGAIN;
	}
	rawvec_free(&rv);
	if (!ret)	/* before the reading's charges are returned: an other user's table stays in the pool */
		out->pool_kept = elf_read_keep(&e, elfsyms_bytes(out));
	elf_read_close(&e);
fail:
	if (ret) {
		if (ret == -ENOMEM && err && errlen && !err[0])
			err_set(err, errlen, "%s: out of memory", path);
		elfsyms_free(out);
	}
	return ret;
}

static size_t str_bytes(const char *str)
{
	return str ? strlen(str) + 1 + 16 : 0;
}

size_t elfsyms_bytes(const struct elfsyms *s)
{
	size_t n = s->nr_syms * sizeof(*s->syms) + s->nr_segs * sizeof(*s->segs) + str_bytes(s->path) +
		   str_bytes(s->soname);

	n += s->nr_plt * sizeof(*s->plt);
	for (size_t i = 0; i < s->nr_plt; i++)
		n += str_bytes(s->plt[i].name) + str_bytes(s->plt[i].demangled);
	for (size_t i = 0; i < s->nr_syms; i++) {
		const struct elfsym *e = &s->syms[i];

		n += str_bytes(e->name) + str_bytes(e->demangled);
		if (e->nr_aliases)
			n += 2 * e->nr_aliases * sizeof(*e->aliases);
		for (unsigned int j = 0; j < e->nr_aliases; j++)
			n += str_bytes(e->aliases[j]) + str_bytes(e->aliases_demangled[j]);
	}
	return n;
}

void elfsyms_free(struct elfsyms *s)
{
	size_t i;
	unsigned int j;

	if (!s)
		return;
	for (i = 0; i < s->nr_syms; i++) {
		struct elfsym *e = &s->syms[i];

		free((char *)e->name);
		free((char *)e->demangled);
		for (j = 0; j < e->nr_aliases; j++) {
			free((char *)e->aliases[j]);
			free((char *)e->aliases_demangled[j]);
		}
		free(e->aliases);
		free(e->aliases_demangled);
	}
	free(s->syms);
	for (i = 0; i < s->nr_plt; i++) {
		free((char *)s->plt[i].name);
		free((char *)s->plt[i].demangled);
	}
	free(s->plt);
	free(s->segs);
	free(s->soname);
	free(s->path);
	elf_read_unkeep(s->pool_kept);
	memset(s, 0, sizeof(*s));
}

/* ---- matching --------------------------------------------------------- */

static size_t strip_suffix(const char *s, size_t len, const char *suffix)
{
	size_t sl = strlen(suffix);

	if (len >= sl && !memcmp(s + len - sl, suffix, sl))
		return len - sl;
	return len;
}

/*
 * "ns::f(int) const" -> "ns::f"; "void ns::g<int>(int)" -> "void ns::g<int>"
 * into buf. Returns false if there was no parameter list.
 */
static bool cut_params(const char *dem, char *buf, size_t buflen)
{
	static const char *const quals[] = { " const", " volatile", " &&", " &", " noexcept" };
	size_t len = strlen(dem), prev, q;
	int depth = 0;

	/* " [clone .cold]" suffixes */
	while (len && dem[len - 1] == ']') {
		size_t k = len;

		while (k && dem[k - 1] != '[')
			k--;
		if (k < 2 || strncmp(dem + k - 2, " [clone ", 8))
			break;
		len = k - 2;
	}
	do {
		prev = len;
		for (q = 0; q < sizeof(quals) / sizeof(quals[0]); q++)
			len = strip_suffix(dem, len, quals[q]);
	} while (len != prev);
	if (!len || dem[len - 1] != ')')
		return false;
	while (len) {
		char c = dem[--len];

		if (c == ')')
			depth++;
		else if (c == '(' && --depth == 0)
			break;
	}
	if (depth || !len || len >= buflen)
		return false;
	memcpy(buf, dem, len);
	buf[len] = '\0';
	return true;
}

/* "void ns::g<int>" -> "ns::g<int>" (leaves "operator X" conversions alone) */
static const char *cut_return_type(const char *s)
{
	const char *sp = NULL, *p;
	int depth = 0;

	for (p = s; *p; p++) {
		if (*p == '<' || *p == '(')
			depth++;
		else if ((*p == '>' || *p == ')') && depth > 0)
			depth--;
		else if (*p == ' ' && depth == 0)
			sp = p;
	}
	if (!sp)
		return s;
	if (sp - s >= 8 && !strncmp(sp - 8, "operator", 8))
		return s;
	if (strstr(s, "operator ") && strstr(s, "operator ") < sp)
		return s;
	return sp + 1;
}

static const char *match_dem(const char *glob, const char *dem)
{
	char buf[NAME_BUF];
	const char *r;

	if (!dem)
		return NULL;
	if (!fnmatch(glob, dem, 0))
		return dem;
	if (!cut_params(dem, buf, sizeof(buf)))
		return NULL;
	if (!fnmatch(glob, buf, 0))
		return dem;
	r = cut_return_type(buf);
	if (r != buf && !fnmatch(glob, r, 0))
		return dem;
	return NULL;
}

static const char *sym_matches(const struct elfsym *e, const char *glob)
{
	const char *m;
	unsigned int i;

	if (!fnmatch(glob, e->name, 0))
		return e->name;
	if ((m = match_dem(glob, e->demangled)))
		return m;
	for (i = 0; i < e->nr_aliases; i++) {
		if (!fnmatch(glob, e->aliases[i], 0))
			return e->aliases[i];
		if ((m = match_dem(glob, e->aliases_demangled[i])))
			return m;
	}
	return NULL;
}

int elfsyms_match(const struct elfsyms *s, const char *glob, elfsyms_match_fn fn, void *ctx)
{
	bool cold;
	size_t i;
	int n = 0, ret;

	if (!glob || !glob[0])
		return -EINVAL;
	cold = strstr(glob, "cold") != NULL;
	/* entries are one per address, so each address is reported once */
	for (i = 0; i < s->nr_syms; i++) {
		const char *m;

		if ((s->syms[i].flags & ELFSYMS_F_COLD) && !cold)
			continue;
		m = sym_matches(&s->syms[i], glob);
		if (!m)
			continue;
		n++;
		if (fn && (ret = fn(&s->syms[i], m, ctx)))
			return ret < 0 ? ret : n;
	}
	return n;
}

struct match_vec {
	const struct elfsym **v;
	size_t n, cap;
};

static int collect_cb(const struct elfsym *sym, const char *matched, void *ctx)
{
	struct match_vec *mv = ctx;

	(void)matched;
	const struct elfsym **tmp = grow(mv->v, &mv->cap, mv->n, sizeof(*tmp), 16);

	if (!tmp)
		return -ENOMEM;
	mv->v = tmp;
	mv->v[mv->n++] = sym;
	return 0;
}

int elfsyms_match_all(const struct elfsyms *s, const char *glob, const struct elfsym ***out)
{
	struct match_vec mv = {};
	int ret;

	*out = NULL;
	ret = elfsyms_match(s, glob, collect_cb, &mv);
	if (ret < 0) {
		free(mv.v);
		return ret;
	}
	*out = mv.v;
	return ret;
}

/* ---- near matches ----------------------------------------------------- */

struct near {
	char name[256];
	int score;	/* lower is better */
};

static void lower_copy(char *dst, const char *src, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len && src[i]; i++)
		dst[i] = tolower((unsigned char)src[i]);
	dst[i] = '\0';
}

static void near_consider(struct near *best, int *nbest, const char *name, const char *needle,
			  int limit)
{
	char low[NAME_BUF];
	int score, i, worst;
	size_t nl = strlen(needle);

	if (!name)
		return;
	lower_copy(low, name, sizeof(low));
	if (strstr(low, needle)) {
		size_t ll = strlen(low);

		score = (int)(ll - nl) * 2 + (strncmp(low, needle, nl) != 0);
		if (score > 999)
			score = 999;
	} else {
		int d = suggest_distance(low, needle, limit);

		if (d > limit)
			return;
		score = 1000 + d;
	}
	if (strlen(name) >= sizeof(best[0].name))
		return;
	for (i = 0; i < *nbest; i++)
		if (!strcmp(best[i].name, name))
			return;
	if (*nbest < MAX_NEAR) {
		worst = (*nbest)++;
	} else {
		for (worst = 0, i = 1; i < *nbest; i++)
			if (best[i].score > best[worst].score)
				worst = i;
		if (score >= best[worst].score)
			return;
	}
	strcpy(best[worst].name, name);
	best[worst].score = score;
}

/* a demangled name, and the same without parameters and return type */
static void near_consider_dem(struct near *best, int *nbest, const char *dem, const char *needle,
			      int limit)
{
	char buf[NAME_BUF];

	if (!dem)
		return;
	/* suggest what to type: "ns::f" matches "ns::f(int)" */
	if (cut_params(dem, buf, sizeof(buf)))
		near_consider(best, nbest, cut_return_type(buf), needle, limit);
	else
		near_consider(best, nbest, dem, needle, limit);
}

static int near_cmp(const void *pa, const void *pb)
{
	const struct near *a = pa, *b = pb;

	if (a->score != b->score)
		return a->score - b->score;
	return strcmp(a->name, b->name);
}

int elfsyms_near_matches(const struct elfsyms *s, const char *glob, char *buf, size_t buflen)
{
	struct near best[MAX_NEAR];
	char needle[NAME_BUF];
	int nbest = 0, limit, i;
	size_t k = 0, j, off = 0;

	if (buflen)
		buf[0] = '\0';
	for (j = 0; glob[j] && k + 1 < sizeof(needle); j++) {
		if (strchr("*?[]\\", glob[j]))
			continue;
		needle[k++] = tolower((unsigned char)glob[j]);
	}
	needle[k] = '\0';
	if (!k)
		return 0;
	limit = k / 3 > 2 ? (int)(k / 3) : 2;
	for (j = 0; j < s->nr_syms; j++) {
		const struct elfsym *e = &s->syms[j];
		unsigned int a;

		if (e->flags & ELFSYMS_F_COLD)
			continue;
		near_consider(best, &nbest, e->name, needle, limit);
		near_consider_dem(best, &nbest, e->demangled, needle, limit);
		for (a = 0; a < e->nr_aliases; a++)
			near_consider(best, &nbest, e->aliases[a], needle, limit);
	}
	qsort(best, nbest, sizeof(best[0]), near_cmp);
	for (i = 0; i < nbest && buflen; i++) {
		int n = snprintf(buf + off, buflen - off, "%s%s", i ? ", " : "", best[i].name);

		if (n < 0 || (size_t)n >= buflen - off) {
			buf[off] = '\0';	/* drop a name that does not fit whole */
			return i;
		}
		off += n;
	}
	return nbest;
}

/* ---- lookup ----------------------------------------------------------- */

const struct elfsym *elfsyms_lookup_plt(const struct elfsyms *s, uint64_t file_vaddr)
{
	size_t p = s->nr_plt ? SORTED_COUNT_LE(s->plt, s->nr_plt, addr, file_vaddr) : 0;

	return p && file_vaddr < s->plt[p - 1].addr + s->plt[p - 1].size ? &s->plt[p - 1] : NULL;
}

const struct elfsym *elfsyms_lookup(const struct elfsyms *s, uint64_t file_vaddr)
{
	size_t lo = SORTED_COUNT_LE(s->syms, s->nr_syms, addr, file_vaddr), i, steps;
	const struct elfsym *plt = elfsyms_lookup_plt(s, file_vaddr);

	/* a PLT stub, before the symbols: the one below the PLT (_init, size 0) would cover it */
	if (plt)
		return plt;

	if (!lo)	/* lo - 1: the last entry with addr <= file_vaddr */
		return NULL;
	i = lo - 1;
	if (!s->syms[i].size)	/* size 0 (asm): covers up to the next symbol */
		return &s->syms[i];
	/* an enclosing symbol may start before a smaller nested one */
	for (steps = 0; steps < 16; steps++, i--) {
		const struct elfsym *e = &s->syms[i];

		if (file_vaddr < e->addr + e->size)
			return e;
		if (!i)
			break;
	}
	return NULL;
}

/* ---- IFUNC ------------------------------------------------------------ */

int elfsyms_ifunc_warning(const struct elfsyms *s, const struct elfsym *sym, char *buf, size_t buflen)
{
	char base[NAME_BUF], pfx[NAME_BUF + 4], impl[3 * 128] = "";
	size_t i, len, off = 0;
	int nimpl = 0, n;

	if (!buflen)
		return 0;
	buf[0] = '\0';
	if (!(sym->flags & ELFSYMS_F_IFUNC))
		return 0;
	len = strcspn(sym->name, "@");
	if (len >= sizeof(base))
		len = sizeof(base) - 1;
	memcpy(base, sym->name, len);
	base[len] = '\0';
	while (base[0] == '_')
		memmove(base, base + 1, strlen(base));
	snprintf(pfx, sizeof(pfx), "__%s_", base);
	/* implementations are usually named __<base>_<variant> (__memcpy_avx_unaligned) */
	for (i = 0; i < s->nr_syms && nimpl < 3 && base[0]; i++) {
		const struct elfsym *e = &s->syms[i];

		if ((e->flags & ELFSYMS_F_IFUNC) || strncmp(e->name, pfx, strlen(pfx)) ||
		    strchr(e->name, '@') || strlen(e->name) > 120)
			continue;
		/* __memcpy_chk_avx2 implements __memcpy_chk, not memcpy */
		if (!strncmp(e->name + strlen(pfx), "chk", 3))
			continue;
		n = snprintf(impl + off, sizeof(impl) - off, "%s%s", nimpl ? ", " : "", e->name);
		if (n < 0 || (size_t)n >= sizeof(impl) - off)
			break;
		off += n;
		nimpl++;
	}
	n = snprintf(buf, buflen,
		     "%s is a GNU IFUNC: a uprobe there fires in its resolver (run once when the "
		     "symbol is bound), not in the implementation callers run; %s%s",
		     elfsyms_display_name(sym),
		     nimpl ? "probe an implementation instead, e.g. " : "",
		     nimpl ? impl : "probe the implementation instead (its name is in the "
				    "debug symbols, e.g. libc6-dbg)");
	if (n < 0)
		return 0;
	return (size_t)n >= buflen ? (int)buflen - 1 : n;
}
