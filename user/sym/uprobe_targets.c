// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Resolution of --uprobe specs: library (libresolve), symbols (elfsyms), JIT check (procmaps). */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "lib/path.h"
#include "lib/warn.h"
#include "sym/elfsyms.h"
#include "sym/libresolve.h"
#include "sym/procmaps.h"
#include "sym/uprobe_targets.h"

/* LIB given as an address ("0x7f12...:*"): only legal when it lies in a file mapping. */
static int check_address_lib(const char *lib, int pid, char *err, size_t errlen)
{
	struct procmaps m;
	const struct procmaps_entry *e;
	unsigned long long addr;
	char *end;

	if (strncmp(lib, "0x", 2))
		return 0;
	addr = strtoull(lib, &end, 16);
	if (*end) {
		err_set(err, errlen, "malformed address '%s' in --uprobe", lib);
		return -EINVAL;
	}
	if (pid <= 0) {
		err_set(err, errlen, "--uprobe %s: an address needs a target pid (-p)", lib);
		return -EINVAL;
	}
	if (procmaps_load(pid, &m, err, errlen))
		return -ESRCH;
	e = procmaps_find(&m, addr);
	if (!e)
		err_set(err, errlen, "--uprobe: address %s is not mapped in pid %d", lib, pid);
	else if (!(e->flags & PROCMAPS_F_FILE))
		err_set(err, errlen, "--uprobe: address %s is in %s code with no file (JIT or anonymous "
			 "memory): uprobes need a file; use sampling with /tmp/perf-%d.map instead",
			 lib, e->flags & PROCMAPS_F_JIT ? "JIT" : "anonymous", pid);
	else
		err_set(err, errlen, "--uprobe: address %s is in %s: give that file's name as LIB", lib, e->path);
	procmaps_free(&m);
	return -EINVAL;
}

/*
 * The library, opened once: its symbols are read and its probes attached through /proc/self/fd/N,
 * the inode opened, never through its path again (the kernel resolves a path at attach, so a path
 * swapped in between for a symlink to another user's library would steer the probe into that file,
 * at an offset computed in this one).  A file the target maps is the inode it maps: when its path
 * names another file by now, the mapping itself is opened (/proc/PID/map_files).  The fd or -errno.
 */
static int lib_open(const struct libresolve_result *res, struct stat *st, char *err, size_t errlen)
{
	int fd = open(res->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), e;

	if (fd >= 0 && res->found_in_maps &&
	    (fstat(fd, st) || st->st_ino != res->inode || st->st_dev != (dev_t)res->dev)) {
		close(fd);
		fd = open(res->map_files, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	}
	if (fd < 0 || fstat(fd, st)) {
		e = errno;
		if (fd >= 0)
			close(fd);
		err_set(err, errlen, "--uprobe: opening %s: %s", res->realpath, strerror(e));
		return -e;
	}
	if (!S_ISREG(st->st_mode) ||
	    (res->found_in_maps && (st->st_ino != res->inode || st->st_dev != (dev_t)res->dev))) {
		close(fd);
		err_set(err, errlen, "--uprobe: %s %s", res->realpath, S_ISREG(st->st_mode) ?
			"changed while it was resolved (not the file the target maps): run again" : "is not a regular file");
		return -ESTALE;
	}
	return fd;
}

/* The library of fd (lib_open), added once by its inode; the set owns fd (closed when the inode is
 * already in the set, or on error). */
static int add_lib(struct uprobe_set *s, int fd, const struct stat *st, const char *module, const char *note,
		   const char *glob, char *err, size_t errlen)
{
	char path[64];

	for (int i = 0; i < s->nr_libs; i++)
		if (s->libs[i].ino == st->st_ino && s->libs[i].dev == st->st_dev) {
			close(fd);
			return i;
		}
	if (s->nr_libs >= UPROBE_MAX_LIBS) {
		close(fd);
		err_set(err, errlen, "too many libraries in --uprobe (at most %d)", UPROBE_MAX_LIBS);
		return -E2BIG;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	s->libs[s->nr_libs].fd = fd;
	s->libs[s->nr_libs].dev = st->st_dev;
	s->libs[s->nr_libs].ino = st->st_ino;
	s->libs[s->nr_libs].attach_path = strdup(path);
	s->libs[s->nr_libs].module = strdup(module);
	s->libs[s->nr_libs].note = strdup(note);
	s->libs[s->nr_libs].glob = strdup(glob);
	return s->nr_libs++;
}

static bool already_probed(const struct uprobe_set *s, int lib, unsigned long offset)
{
	for (int i = 0; i < s->nr_funcs; i++)
		if (s->funcs[i].lib == lib && s->funcs[i].offset == offset)
			return true;
	return false;
}

/* The name the user asked for: the primary name when the glob matches it, else the first alias it
 * matches ("cblas_sgemm", not "CBLAS_SGEMM" at the same address). */
static const char *asked_name(const struct elfsym *m, const char *glob)
{
	if (!fnmatch(glob, m->name, 0) || (m->demangled && !fnmatch(glob, m->demangled, 0)))
		return elfsyms_display_name(m);
	for (unsigned int a = 0; a < m->nr_aliases; a++) {
		const char *dem = m->aliases_demangled ? m->aliases_demangled[a] : NULL;

		if (!fnmatch(glob, m->aliases[a], 0) || (dem && !fnmatch(glob, dem, 0)))
			return dem ? dem : m->aliases[a];
	}
	return elfsyms_display_name(m);
}

/* Why the entry point is skipped; every other reason is about the function's first instruction. */
#define WHY_ENTRY "ELF entry point"

/* IFUNCs said one by one (with their implementations' names); the rest of one spec's in one line:
 * 'libc.so.6:*' matches about 50. */
#define IFUNC_SAID 2

struct ifunc_note {
	int n;
	char names[256];
	size_t off;
};

static void ifunc_note_add(struct ifunc_note *in, const struct elfsyms *syms, const struct elfsym *m)
{
	char w[512];

	if (in->n++ < IFUNC_SAID) {
		if (elfsyms_ifunc_warning(syms, m, w, sizeof(w)) > 0)
			warn_add("%s", w);
		return;
	}
	if (in->off < sizeof(in->names))
		in->off += snprintf(in->names + in->off, sizeof(in->names) - in->off, "%s%s",
				    in->n > IFUNC_SAID + 1 ? ", " : "", elfsyms_display_name(m));
}

static void ifunc_note_say(const struct ifunc_note *in, const char *path)
{
	int more = in->n - IFUNC_SAID;

	if (more > 0)
		warn_add("uprobe: %d more of the functions matched in %s are GNU IFUNCs, probed in their resolvers, "
			 "not in the implementations callers run: %s%s", more, path_base(path), in->names,
			 in->off >= sizeof(in->names) ? "..." : "");
}

static int add_matches(struct uprobe_set *s, int lib, const struct elfsyms *syms, const struct elfsym **m, int n,
		       const char *glob, char *err, size_t errlen)
{
	struct uprobe_func *f = realloc(s->funcs, sizeof(*f) * (s->nr_funcs + n)), *uf;
	struct uprobe_insn_file insn;
	struct ifunc_note ifuncs = { 0 };
	uint64_t entry;

	if (!f)
		return -ENOMEM;
	if (uprobe_insn_open(&insn, s->libs[lib].attach_path, err, errlen))
		return -EIO;
	if (!syms->e_entry || elfsyms_vaddr_to_offset(syms, syms->e_entry, &entry))
		entry = ~0ul;
	s->funcs = f;
	for (int i = 0; i < n; i++) {
		if ((m[i]->flags & ELFSYMS_F_NO_OFFSET) || already_probed(s, lib, m[i]->offset))
			continue;
		if (s->nr_funcs >= UPROBE_MAX_FUNCS) {
			err_set(err, errlen, "too many functions matched (at most %d)", UPROBE_MAX_FUNCS);
			uprobe_insn_close(&insn);
			return -E2BIG;
		}
		if (m[i]->flags & ELFSYMS_F_IFUNC)
			ifunc_note_add(&ifuncs, syms, m[i]);
		s->funcs[s->nr_funcs++] = (struct uprobe_func){
			.symbol = strdup(asked_name(m[i], glob)),
			.offset = m[i]->offset,
			.lib = lib,
			.ifunc = m[i]->flags & ELFSYMS_F_IFUNC,
		};
		uf = &s->funcs[s->nr_funcs - 1];
		uprobe_insn_at(&insn, m[i]->offset, &uf->insn);
		/* The kernel jumps to the entry point (_start) with argc where a return address would be:
		 * a return probe there would overwrite argc with its trampoline's address. */
		if (m[i]->offset == entry)
			uf->insn = (struct uprobe_insn){ .cls = UINSN_REFUSED, .why = WHY_ENTRY " (never called)" };
		probe_place_at(insn.fd, m[i]->offset, m[i]->size, s->probe_at, &uf->insn, &uf->place);
	}
	ifunc_note_say(&ifuncs, s->libs[lib].module);
	uprobe_insn_close(&insn);
	return 0;
}

static int no_match_error(const struct elfsyms *syms, const char *glob, const char *path, char *err, size_t errlen)
{
	char near[512] = "";

	elfsyms_near_matches(syms, glob, near, sizeof(near));
	err_set(err, errlen, "--uprobe: no function matches '%s' in %s%s%s%s", glob, path,
		 syms->has_symtab ? "" : " (stripped: only exported .dynsym names can be probed)",
		 near[0] ? "; near matches: " : "", near);
	return -ESRCH;
}

#if defined(__x86_64__)
#define HOST_ELF_MACHINE EM_X86_64
#define HOST_ELF_MACHINE_NAME "x86-64"
#elif defined(__aarch64__)
#define HOST_ELF_MACHINE EM_AARCH64
#define HOST_ELF_MACHINE_NAME "aarch64"
#else
#error "tmabpf builds for x86-64 and aarch64"
#endif

/* The library opened (fd, st: lib_open; the set owns fd, closed on error), resolved (res) and its
 * symbols loaded (syms): built for this machine, and the functions matching glob appended; -ESRCH
 * with near matches in err when none does. */
static int add_opened(struct uprobe_set *s, int fd, const struct stat *st, const struct libresolve_result *res,
		      const struct elfsyms *syms, const char *glob, char *err, size_t errlen)
{
	const struct elfsym **m = NULL;
	int r, n, li;

	if (syms->e_machine != HOST_ELF_MACHINE) {	/* its offsets mean other instructions here */
		close(fd);
		err_set(err, errlen, "--uprobe: %s is built for ELF machine %u (%s), not this %s host's %u", res->realpath,
			syms->e_machine, syms->e_machine == EM_AARCH64 ? "aarch64" : syms->e_machine == EM_X86_64 ? "x86-64" :
			syms->e_machine == EM_386 ? "i386" : "another architecture", HOST_ELF_MACHINE_NAME, HOST_ELF_MACHINE);
		return -ENOEXEC;
	}
	n = elfsyms_match_all(syms, glob, &m);
	if (n <= 0) {
		close(fd);
		r = n < 0 ? n : no_match_error(syms, glob, res->realpath, err, errlen);
		goto out;
	}
	li = add_lib(s, fd, st, res->realpath, res->msg, glob, err, errlen);
	r = li < 0 ? li : add_matches(s, li, syms, m, n, glob, err, errlen);
out:
	free(m);
	return r;
}

int uprobe_set_add_matching(struct uprobe_set *s, const struct libresolve_result *res, const struct elfsyms *syms,
			    const char *glob, char *err, size_t errlen)
{
	struct stat st;
	int fd = lib_open(res, &st, err, errlen);

	return fd < 0 ? fd : add_opened(s, fd, &st, res, syms, glob, err, errlen);
}

/* One library (a name, a path: libresolve) and the function glob. */
static int add_one(struct uprobe_set *s, const char *lib, const char *glob, int pid, char *err, size_t errlen)
{
	char path[64];
	struct libresolve_result res;
	struct elfsyms *syms;
	struct stat st;
	int r, fd;

	r = libresolve_find(pid, lib, &res, err, errlen);
	if (r)
		return r;
	if ((fd = lib_open(&res, &st, err, errlen)) < 0)
		return fd;
	if (s->last_syms && s->last_dev == (unsigned long long)st.st_dev && s->last_ino == (unsigned long long)st.st_ino &&
	    s->last_size == (unsigned long long)st.st_size &&
	    s->last_mtime_ns == (unsigned long long)st.st_mtim.tv_sec * 1000000000ULL + st.st_mtim.tv_nsec)
		return add_opened(s, fd, &st, &res, s->last_syms, glob, err, errlen);
	uprobe_set_forget_symbols(s);
	if (!(syms = calloc(1, sizeof(*syms)))) {
		close(fd);
		return -ENOMEM;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = elfsyms_load(path, syms, err, errlen);
	if (r) {
		char why[1024];
		size_t n = strlen(path);

		/* the error names the file as the user knows it, not by our fd */
		if (err && !strncmp(err, path, n)) {
			snprintf(why, sizeof(why), "%s", err + n);
			err_set(err, errlen, "%s%s", res.realpath, why);
		}
		close(fd);
		free(syms);
		return r;
	}
	s->last_syms = syms;
	s->last_dev = st.st_dev;
	s->last_ino = st.st_ino;
	s->last_size = st.st_size;
	s->last_mtime_ns = (unsigned long long)st.st_mtim.tv_sec * 1000000000ULL + st.st_mtim.tv_nsec;
	return add_opened(s, fd, &st, &res, syms, glob, err, errlen);
}

void uprobe_set_forget_symbols(struct uprobe_set *s)
{
	if (s->last_syms) {
		elfsyms_free(s->last_syms);
		free(s->last_syms);
	}
	s->last_syms = NULL;
}

bool uprobe_lib_is_glob(const char *lib)
{
	return strncmp(lib, "0x", 2) && strpbrk(lib, "*?[");
}

/* The files a LIB glob matches (sorted, unique): with a directory, on disk (glob(3)); without, the
 * basenames of the files pid maps.  How many, or -errno with err. */
static int lib_glob_files(const char *lib, int pid, glob_t *g, char *err, size_t errlen)
{
	struct procmaps m;
	int r;

	memset(g, 0, sizeof(*g));
	if (strchr(lib, '/')) {
		r = glob(lib, 0, NULL, g);
		return r == 0 ? (int)g->gl_pathc : r == GLOB_NOMATCH ? 0 : -ENOMEM;
	}
	if (pid <= 0) {
		err_set(err, errlen, "--uprobe '%s': no process to match this library glob against (without a directory it "
			 "matches the names of the files a target maps: -p PID or a command; with one, files on disk: "
			 "'/usr/lib/x86_64-linux-gnu/%s')", lib, lib);
		return -ENOENT;
	}
	if (procmaps_load(pid, &m, err, errlen))
		return -ESRCH;
	g->gl_pathv = calloc(m.nr + 1, sizeof(char *));
	for (size_t i = 0; g->gl_pathv && i < m.nr; i++) {
		const char *path = m.entries[i].path;
		bool seen = false;

		if (path[0] != '/' || fnmatch(lib, path_base(path), 0))
			continue;
		for (size_t k = 0; k < g->gl_pathc && !seen; k++)
			seen = !strcmp(g->gl_pathv[k], path);
		if (!seen)
			g->gl_pathv[g->gl_pathc++] = strdup(path);
	}
	procmaps_free(&m);
	return g->gl_pathv ? (int)g->gl_pathc : -ENOMEM;
}

static void lib_glob_free(const char *lib, glob_t *g)
{
	if (strchr(lib, '/')) {
		globfree(g);
		return;
	}
	for (size_t k = 0; k < g->gl_pathc; k++)
		free(g->gl_pathv[k]);
	free(g->gl_pathv);
}

/* LIB a glob (uprobe_lib_is_glob): GLOB in every file it matches.  An error when no file matches or
 * no function in any; a file without a match is left out. */
static int add_lib_glob(struct uprobe_set *s, const char *lib, const char *glob, int pid, char *err, size_t errlen)
{
	int n = 0, files = 0, r = 0;
	char names[512] = "";
	size_t o = 0;
	glob_t g;

	if ((n = lib_glob_files(lib, pid, &g, err, errlen)) < 0)
		return n;
	if (n > UPROBE_MAX_LIBS) {
		lib_glob_free(lib, &g);
		err_set(err, errlen, "--uprobe: '%s' matches %d files; at most %d libraries can be probed", lib, n,
			 UPROBE_MAX_LIBS);
		return -E2BIG;
	}
	for (int i = 0; i < n && !r; i++) {
		int before = s->nr_funcs;

		r = add_one(s, g.gl_pathv[i], glob, pid, err, errlen);
		/* left out: no function matches in it, not an ELF file of the target's kind, changed */
		if (r == -ESRCH || r == -ENOEXEC || r == -EXDEV || r == -EISDIR || r == -EAGAIN || r == -ESTALE)
			r = 0;
		files += s->nr_funcs > before;
		if (o < sizeof(names))
			o += snprintf(names + o, sizeof(names) - o, "%s%s", i ? ", " : "", path_base(g.gl_pathv[i]));
	}
	lib_glob_free(lib, &g);
	if (r)
		return r;
	if (!n) {
		if (pid > 0 && !strchr(lib, '/'))
			err_set(err, errlen, "--uprobe: no file mapped by pid %d matches '%s' (the glob matches a file's "
				 "name: 'libggml-cpu-*.so')", pid, lib);
		else
			err_set(err, errlen, "--uprobe: no file matches '%s'", lib);
		return -ENOENT;
	}
	if (!files) {
		err_set(err, errlen, "--uprobe: no function matches '%s' in the %d file%s matching '%s' (%s%s)", glob, n,
			 n == 1 ? "" : "s", lib, names, o >= sizeof(names) ? "..." : "");
		return -ESRCH;
	}
	return 0;
}

int uprobe_set_add_spec(struct uprobe_set *s, const char *spec, int pid, const char *main_exe,
			char *err, size_t errlen)
{
	char lib[4096], glob[1024];
	int r = libresolve_split_spec(spec, lib, sizeof(lib), glob, sizeof(glob), err, errlen);

	if (r)
		return r;
	if ((r = check_address_lib(lib, pid, err, errlen)))
		return r;
	if (uprobe_lib_is_glob(lib))
		return add_lib_glob(s, lib, glob, pid, err, errlen);
	if (!lib[0] && pid <= 0 && main_exe)
		snprintf(lib, sizeof(lib), "%s", main_exe);
	return add_one(s, lib, glob, pid, err, errlen);
}

/* The reason's kind, for counting: "EVEX-encoded (opcode 0x6e)" -> "EVEX-encoded". */
static size_t reason_len(const char *why)
{
	const char *p = strstr(why, " (");

	return p ? (size_t)(p - why) : strlen(why);
}

int uprobe_set_unprobeable(const struct uprobe_set *s, char *line, size_t len)
{
	struct { const char *why; size_t n, cnt; } kinds[8];
	int nk = 0, total = 0, shown = 0;
	size_t o = 0;

	for (int i = 0; i < s->nr_funcs; i++) {
		const struct uprobe_insn *u = &s->funcs[i].insn;
		size_t n = reason_len(u->why);
		int k;

		if (u->cls != UINSN_REFUSED)
			continue;
		total++;
		for (k = 0; k < nk; k++)
			if (kinds[k].n == n && !strncmp(kinds[k].why, u->why, n))
				break;
		if (k == nk && nk < 8)
			kinds[nk++] = (typeof(kinds[0])){ u->why, n, 0 };
		if (k < nk)
			kinds[k].cnt++;
	}
	if (!total)
		return 0;
	o += snprintf(line + o, len - o, "%d of %d functions cannot be probed, skipped (", total, s->nr_funcs);
	for (int k = 0; k < nk && o < len; k++)
		o += snprintf(line + o, len - o, "%s%.*s%s: %zu", k ? ", " : "", (int)kinds[k].n, kinds[k].why,
			      strncmp(kinds[k].why, WHY_ENTRY, kinds[k].n) ? " first instruction" : "", kinds[k].cnt);
	for (int i = 0; i < s->nr_funcs && o < len; i++) {
		if (s->funcs[i].insn.cls != UINSN_REFUSED)
			continue;
		if (shown == 3) {
			o += snprintf(line + o, len - o, ", ... (all in --json)");
			break;
		}
		o += snprintf(line + o, len - o, "%s%s", shown++ ? ", " : "): ", s->funcs[i].symbol);
	}
	return total;
}

int uprobe_set_defer(struct uprobe_set *s, const char *spec, char *err, size_t errlen)
{
	char lib[4096], glob[1024];
	struct uprobe_deferred *d = &s->deferred[s->nr_deferred];
	int r = libresolve_split_spec(spec, lib, sizeof(lib), glob, sizeof(glob), err, errlen);

	if (r)
		return r;
	if (s->nr_deferred >= UPROBE_MAX_LIBS) {
		err_set(err, errlen, "too many libraries in --uprobe (at most %d)", UPROBE_MAX_LIBS);
		return -E2BIG;
	}
	d->lib = strdup(lib);
	d->glob = strdup(glob);
	if (!d->lib || !d->glob)
		return -ENOMEM;
	s->nr_deferred++;
	return 0;
}

int uprobe_set_add_deferred(struct uprobe_set *s, int d, const char *path, int pid, int *lib, char *err,
			    size_t errlen)
{
	char spec[4096 + 1024 + 2];
	int before = s->nr_funcs, libs = s->nr_libs, r;

	snprintf(spec, sizeof(spec), "%s:%s", path, s->deferred[d].glob);
	r = uprobe_set_add_spec(s, spec, pid, NULL, err, errlen);
	if (r)
		return r;
	*lib = s->nr_libs > libs ? s->nr_libs - 1 : (before < s->nr_funcs ? s->funcs[before].lib : -1);
	s->deferred[d].attached += s->nr_funcs - before;	/* one more file of that name, or a library glob's */
	for (int i = before; i < s->nr_funcs; i++)
		s->funcs[i].marker = s->deferred[d].marker;
	return 0;
}

void uprobe_set_free(struct uprobe_set *s)
{
	uprobe_set_forget_symbols(s);
	for (int i = 0; i < s->nr_funcs; i++)
		free(s->funcs[i].symbol);
	for (int i = 0; i < s->nr_libs; i++) {
		close(s->libs[i].fd);
		free(s->libs[i].attach_path);
		free(s->libs[i].module);
		free(s->libs[i].note);
		free(s->libs[i].glob);
	}
	for (int i = 0; i < s->nr_deferred; i++) {
		free(s->deferred[i].lib);
		free(s->deferred[i].glob);
	}
	free(s->funcs);
	memset(s, 0, sizeof(*s));
}
