// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Unit tests for user/sym/elfsyms.c against real system libraries. Symbols and
 * program headers are cross-checked against readelf(1) output parsed here,
 * so offsets are computed independently of libelf.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <linux/perf_event.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "uprobe_open.h"
#include "sym/elf_read.h"
#include "sym/elfsyms.h"
#include "sym/procmaps.h"

#define OPENBLAS_LINK	"/usr/lib/x86_64-linux-gnu/libopenblas.so.0"
#define OPENBLAS_REAL	"/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblasp-r0.3.21.so"
#define LIBC		"/lib/x86_64-linux-gnu/libc.so.6"
#define LIBSTDCXX	"/usr/lib/x86_64-linux-gnu/libstdc++.so.6"


/* ---- readelf parsing (independent of libelf) -------------------------- */

struct rsym {
	unsigned long long addr, size;
	char name[512];
	char type[16];
};

struct rload {
	unsigned long long off, vaddr, filesz;
};

/* defined FUNC/IFUNC symbols, names normalized like elfsyms ("@@VER" dropped) */
static int readelf_funcs(const char *path, struct rsym **out, size_t *nout)
{
	char cmd[PATH_MAX + 64], line[2048], size[32], type[16], bind[16], vis[16], ndx[16];
	struct rsym *v = NULL;
	size_t n = 0, cap = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -Ws '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct rsym r;
		char *at;

		if (sscanf(line, " %*u: %llx %31s %15s %15s %15s %15s %511s", &r.addr, size, type,
			   bind, vis, ndx, r.name) != 7)
			continue;
		if ((strcmp(type, "FUNC") && strcmp(type, "IFUNC")) || !strcmp(ndx, "UND") ||
		    !r.addr)
			continue;
		r.size = strtoull(size, NULL, 0);
		snprintf(r.type, sizeof(r.type), "%s", type);
		at = strstr(r.name, "@@");
		if (at)
			*at = '\0';
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			v = realloc(v, cap * sizeof(*v));
			if (!v) {
				pclose(f);
				return -ENOMEM;
			}
		}
		v[n++] = r;
	}
	pclose(f);
	*out = v;
	*nout = n;
	return n ? 0 : -ENOENT;
}

static int readelf_loads(const char *path, struct rload *out, int max)
{
	char cmd[PATH_MAX + 64], line[512];
	int n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -lW '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f) && n < max) {
		unsigned long long off, va, pa, fsz, msz;

		if (sscanf(line, " LOAD %llx %llx %llx %llx %llx", &off, &va, &pa, &fsz, &msz) == 5)
			out[n++] = (struct rload){ off, va, fsz };
	}
	pclose(f);
	return n;
}

static int readelf_build_id(const char *path, char *hex, size_t len)
{
	char cmd[PATH_MAX + 64], line[512];
	FILE *f;
	int ret = -ENOENT;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "Build ID: ");

		if (p && sscanf(p + 10, "%127s", hex) == 1 && strlen(hex) < len) {
			ret = 0;
			break;
		}
	}
	pclose(f);
	return ret;
}

/* offset from readelf's program headers, or -1 */
static long long phdr_offset(const struct rload *l, int n, unsigned long long vaddr)
{
	int i;

	for (i = 0; i < n; i++)
		if (vaddr >= l[i].vaddr && vaddr < l[i].vaddr + l[i].filesz)
			return vaddr - l[i].vaddr + l[i].off;
	return -1;
}

/* ---- helpers over struct elfsyms -------------------------------------- */

static const struct elfsym *find_addr(const struct elfsyms *s, unsigned long long addr)
{
	size_t lo = 0, hi = s->nr_syms;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->syms[mid].addr == addr)
			return &s->syms[mid];
		if (s->syms[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int has_name(const struct elfsym *e, const char *name)
{
	unsigned int i;

	if (!strcmp(e->name, name))
		return 1;
	for (i = 0; i < e->nr_aliases; i++)
		if (!strcmp(e->aliases[i], name))
			return 1;
	return 0;
}

static int sorted_unique(const struct elfsyms *s)
{
	size_t i;

	for (i = 1; i < s->nr_syms; i++)
		if (s->syms[i].addr <= s->syms[i - 1].addr)
			return 0;
	return 1;
}

static int cmp_u64(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

/*
 * Every readelf FUNC/IFUNC is in s at its address under its name, the number
 * of distinct addresses agrees, and offsets agree with readelf's phdrs.
 */
static void cross_check(const char *what, const char *path, const struct elfsyms *s)
{
	size_t nr = 0, i, missing = 0, ifunc_bad = 0, off_bad = 0, distinct = 0;
	struct rload loads[16];
	struct rsym *r = NULL;
	int nl, ret;
	unsigned long long *addrs;

	ret = readelf_funcs(path, &r, &nr);
	check(!ret && nr > 0, "%s: readelf -Ws lists %zu defined functions", what, nr);
	nl = readelf_loads(path, loads, 16);
	check(nl > 0 && (size_t)nl == s->nr_segs, "%s: readelf -lW PT_LOAD count %d == elfsyms %zu",
	      what, nl, s->nr_segs);
	if (ret || nl <= 0) {
		free(r);
		return;
	}
	addrs = calloc(nr, sizeof(*addrs));
	for (i = 0; i < nr; i++) {
		const struct elfsym *e = find_addr(s, r[i].addr);

		addrs[i] = r[i].addr;
		if (!e || !has_name(e, r[i].name)) {
			if (missing++ < 3)
				printf("# %s: %s at %#llx missing\n", what, r[i].name, r[i].addr);
			continue;
		}
		if (!strcmp(r[i].type, "IFUNC") && !(e->flags & ELFSYMS_F_IFUNC))
			ifunc_bad++;
	}
	check(!missing, "%s: all %zu readelf functions found at their address by name (%zu missing)",
	      what, nr, missing);
	check(!ifunc_bad, "%s: every readelf IFUNC is flagged ELFSYMS_F_IFUNC", what);
	/* distinct addresses */
	qsort(addrs, nr, sizeof(*addrs), cmp_u64);
	for (i = 0; i < nr; i++)
		if (!i || addrs[i] != addrs[i - 1])
			distinct++;
	free(addrs);
	check(distinct == s->nr_syms, "%s: %zu distinct readelf addresses == %zu elfsyms entries "
	      "(aliases merged)", what, distinct, s->nr_syms);
	check(sorted_unique(s), "%s: entries sorted by address, one per address", what);
	for (i = 0; i < s->nr_syms; i++) {
		long long want = phdr_offset(loads, nl, s->syms[i].addr);

		if (want < 0 ? !(s->syms[i].flags & ELFSYMS_F_NO_OFFSET)
			     : (unsigned long long)want != s->syms[i].offset) {
			if (off_bad++ < 3)
				printf("# %s: %s offset %#llx, readelf phdrs say %#llx\n", what,
				       s->syms[i].name, (unsigned long long)s->syms[i].offset, want);
		}
	}
	check(!off_bad, "%s: every symbol's file offset equals the one computed from readelf -lW "
	      "(%zu wrong)", what, off_bad);
	free(r);
}

static int count_cb(const struct elfsym *sym, const char *matched, void *ctx)
{
	(void)sym;
	(void)matched;
	++*(int *)ctx;
	return 0;
}

/* ---- tests ------------------------------------------------------------ */

static void test_openblas(void)
{
	char path[PATH_MAX], err[512] = "", hex[130], near[512];
	const struct elfsym **m = NULL, *e;
	struct elfsyms s;
	int n, i, j, dup = 0, bad = 0, calls = 0;
	struct stat st;

	if (!realpath(OPENBLAS_LINK, path))
		snprintf(path, sizeof(path), "%s", OPENBLAS_REAL);
	if (stat(path, &st)) {
		check(0, "openblas: %s exists (install libopenblas0-pthread)", path);
		return;
	}
	n = elfsyms_load(path, &s, err, sizeof(err));
	check(n == 0, "openblas: elfsyms_load(%s) = %d %s", path, n, err);
	if (n)
		return;
	check(!s.has_symtab && s.has_dynsym, "openblas: stripped (.dynsym only, has_symtab=%d)",
	      s.has_symtab);
	check(s.soname && !strcmp(s.soname, "libopenblas.so.0"), "openblas: DT_SONAME %s",
	      s.soname ? s.soname : "(none)");
	check(!readelf_build_id(path, hex, sizeof(hex)) && s.build_id_len == 20 &&
	      !strcmp(hex, s.build_id_hex), "openblas: build-id %s matches readelf -n",
	      s.build_id_hex);

	n = elfsyms_match_all(&s, "cblas_sgemm", &m);
	check(n == 1 && !strcmp(m[0]->name, "cblas_sgemm"), "openblas: cblas_sgemm matches once (%d)",
	      n);
	if (n == 1) {
		struct rload loads[16];
		int nl = readelf_loads(path, loads, 16);
		long long want = phdr_offset(loads, nl, m[0]->addr);
		uint64_t va = 0;

		e = m[0];
		check(want >= 0 && (unsigned long long)want == e->offset && !(e->flags & ELFSYMS_F_NO_OFFSET),
		      "openblas: cblas_sgemm addr %#llx offset %#llx == readelf phdr offset %#llx",
		      (unsigned long long)e->addr, (unsigned long long)e->offset, want);
		check(!elfsyms_offset_to_vaddr(&s, e->offset, &va) && va == e->addr,
		      "openblas: offset_to_vaddr(offset) round-trips to addr");
		check(e->size > 0 && elfsyms_lookup(&s, e->addr) == e &&
		      elfsyms_lookup(&s, e->addr + e->size - 1) == e,
		      "openblas: lookup(addr) and lookup(addr+size-1) return cblas_sgemm");
		check(elfsyms_lookup(&s, e->addr + e->size) != e,
		      "openblas: lookup(addr+size) is not cblas_sgemm");
		check(!(e->flags & ELFSYMS_F_IFUNC) && !e->demangled,
		      "openblas: cblas_sgemm is a plain C function (no IFUNC, no demangling)");
	}
	free(m);

	n = elfsyms_match_all(&s, "sgemm*", &m);
	printf("# openblas: sgemm* matches %d symbols, e.g. %s\n", n, n > 0 ? m[0]->name : "-");
	check(n > 10, "openblas: sgemm* matches several (%d)", n);
	for (i = 0; i < n; i++) {
		int ok = !fnmatch("sgemm*", m[i]->name, 0);
		unsigned int a;

		for (a = 0; !ok && a < m[i]->nr_aliases; a++)
			ok = !fnmatch("sgemm*", m[i]->aliases[a], 0);
		bad += !ok;
		for (j = 0; j < i; j++)
			dup += m[j]->addr == m[i]->addr;
	}
	check(!dup, "openblas: sgemm* has no duplicate addresses");
	check(!bad, "openblas: every sgemm* match has a name matching the glob");
	free(m);
	i = elfsyms_match(&s, "sgemm*", count_cb, &calls);
	check(i == calls && calls == n, "openblas: callback form reports the same %d matches (%d calls)",
	      i, calls);
	check(elfsyms_match(&s, "no_such_function_xyz*", NULL, NULL) == 0,
	      "openblas: a glob matching nothing returns 0");

	n = elfsyms_near_matches(&s, "cblas_sgem", near, sizeof(near));
	check(n >= 1 && n <= 5 && !strncmp(near, "cblas_sgemm,", 12),
	      "openblas: near matches of cblas_sgem start with cblas_sgemm: %s", near);
	n = elfsyms_near_matches(&s, "CBLAS_DGEMV*", near, sizeof(near));
	check(n >= 1 && strstr(near, "cblas_dgemv"), "openblas: near matches are case-insensitive: %s",
	      near);
	n = elfsyms_near_matches(&s, "sgemm_", near, 20);
	check(strlen(near) < 20, "openblas: near matches respect buflen (%s)", near);

	cross_check("openblas", path, &s);
	elfsyms_free(&s);
}

static void test_libc(void)
{
	char err[512] = "", warn[1024], dbg[PATH_MAX];
	const struct elfsym **m = NULL;
	struct elfsyms s, d;
	int n;

	n = elfsyms_load(LIBC, &s, err, sizeof(err));
	check(n == 0, "libc: elfsyms_load = %d %s", n, err);
	if (n)
		return;
	check(s.nr_ifunc > 10, "libc: %zu IFUNC entries", s.nr_ifunc);
	n = elfsyms_match_all(&s, "memcpy", &m);
	check(n == 1 && (m[0]->flags & ELFSYMS_F_IFUNC),
	      "libc: memcpy matches once (the default memcpy@@GLIBC_2.14) and is flagged IFUNC");
	if (n == 1) {
		check(elfsyms_ifunc_warning(&s, m[0], warn, sizeof(warn)) > 0 &&
		      strstr(warn, "IFUNC") && strstr(warn, "resolver"),
		      "libc: IFUNC warning: %s", warn);
	}
	free(m);
	n = elfsyms_match_all(&s, "memcpy@GLIBC_2.2.5", &m);
	check(n == 1 && !(m[0]->flags & ELFSYMS_F_IFUNC),
	      "libc: hidden version memcpy@GLIBC_2.2.5 is a separate, non-IFUNC entry");
	free(m);
	n = elfsyms_match_all(&s, "malloc", &m);
	check(n == 1 && !(m[0]->flags & ELFSYMS_F_IFUNC) &&
	      elfsyms_ifunc_warning(&s, m[0], warn, sizeof(warn)) == 0,
	      "libc: malloc is not an IFUNC, no warning");
	free(m);
	cross_check("libc", LIBC, &s);

	/* detached debug info (libc6-dbg): full .symtab, but PT_LOADs have no file bytes */
	snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug", s.build_id_hex,
		 s.build_id_hex + 2);
	if (access(dbg, R_OK)) {
		skip("libc debug file", "not installed (libc6-dbg)");
	} else if (!elfsyms_load(dbg, &d, err, sizeof(err))) {
		check(d.has_symtab && !strcmp(d.build_id_hex, s.build_id_hex) && d.nr_syms > s.nr_syms,
		      "libc debug file: .symtab, same build-id, %zu > %zu entries", d.nr_syms, s.nr_syms);
		n = elfsyms_match_all(&d, "memcpy", &m);
		check(n == 1 && (m[0]->flags & ELFSYMS_F_IFUNC) && m[0]->nr_aliases > 0 &&
		      (m[0]->flags & ELFSYMS_F_NO_OFFSET),
		      "libc debug file: memcpy IFUNC with aliases; offset flagged invalid (NOBITS segments)");
		if (n == 1) {
			elfsyms_ifunc_warning(&d, m[0], warn, sizeof(warn));
			check(strstr(warn, "__memcpy_") != NULL,
			      "libc debug file: IFUNC warning names implementations: %s", warn);
		}
		free(m);
		elfsyms_free(&d);
	} else {
		check(0, "libc debug file: load %s: %s", dbg, err);
	}
	elfsyms_free(&s);
}

static int find_demangled(const struct elfsym *sym, const char *matched, void *ctx)
{
	(void)matched;
	if (sym->demangled && sym->name[0] == '_' && sym->name[1] == 'Z')
		++*(int *)ctx;
	return 0;
}

static void test_libstdcxx(void)
{
	char err[512] = "", near[512];
	const struct elfsym **m = NULL;
	struct elfsyms s;
	int n, dem = 0;

	n = elfsyms_load(LIBSTDCXX, &s, err, sizeof(err));
	check(n == 0, "libstdc++: elfsyms_load = %d %s", n, err);
	if (n)
		return;
	n = elfsyms_match(&s, "std::*", find_demangled, &dem);
	check(n > 100 && dem == n, "libstdc++: 'std::*' matches %d demangled symbols (%d mangled _Z)",
	      n, dem);
	check(elfsyms_match(&s, "_ZSt9terminatev", NULL, NULL) == 1,
	      "libstdc++: the raw mangled name still matches");
	n = elfsyms_match_all(&s, "std::terminate", &m);
	check(n == 1 && !strcmp(m[0]->name, "_ZSt9terminatev") &&
	      !strcmp(m[0]->demangled, "std::terminate()"),
	      "libstdc++: 'std::terminate' (no parameter list) finds _ZSt9terminatev = %s",
	      n == 1 ? m[0]->demangled : "-");
	free(m);
	n = elfsyms_match(&s, "std::terminate()", NULL, NULL);
	check(n == 1, "libstdc++: 'std::terminate()' (full demangled) matches once");
	n = elfsyms_match(&s, "operator new*", NULL, NULL);
	check(n >= 4, "libstdc++: 'operator new*' matches %d", n);
	n = elfsyms_near_matches(&s, "std::terminat", near, sizeof(near));
	check(n >= 1 && !strncmp(near, "std::terminate", 14) && !strstr(near, "std::terminate()") &&
	      elfsyms_match(&s, "std::terminate", NULL, NULL) == 1,
	      "libstdc++: near matches suggest a typeable glob: %s", near);
	cross_check("libstdc++", LIBSTDCXX, &s);
	elfsyms_free(&s);
}

/*
 * Count hits of a perf_event uprobe at (path, offset) while exec()ing path in
 * a child. Returns the count, or -errno if the probe cannot be opened.
 */
static long long uprobe_count_exec(const char *path, uint64_t offset)
{
	int p[2], fd, status;
	uint64_t count = 0;
	pid_t pid;
	char go = 'g';

	if (uprobe_pmu_type() < 0)
		return -ENOENT;
	if (pipe(p))
		return -errno;
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		if (read(p[0], &go, 1) != 1)
			_exit(127);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	fd = uprobe_open(path, offset, pid);
	status = fd < 0 ? fd : 0;
	if (write(p[1], &go, 1) != 1)
		status = status ?: -EIO;
	close(p[1]);
	waitpid(pid, NULL, 0);
	if (fd >= 0) {
		if (read(fd, &count, sizeof(count)) != sizeof(count))
			status = -EIO;
		close(fd);
	}
	return status ? status : (long long)count;
}

/* a non-PIE executable: .text vaddr (0x401000) != file offset (0x1000) */
static void test_nonpie(void)
{
	char dir[] = "/tmp/tmabpf-elfsyms-XXXXXX", src[PATH_MAX], exe[PATH_MAX], cmd[3 * PATH_MAX];
	char err[512] = "";
	const struct elfsym **m = NULL;
	struct elfsyms s;
	struct rload loads[16];
	FILE *f;
	int n, nl;

	if (!mkdtemp(dir)) {
		check(0, "non-PIE: mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(src, sizeof(src), "%s/t.c", dir);
	snprintf(exe, sizeof(exe), "%s/t", dir);
	f = fopen(src, "w");
	if (!f) {
		check(0, "non-PIE: create %s: %s", src, strerror(errno));
		return;
	}
	fputs("__attribute__((noinline)) int tmabpf_probe_me(int x) { return x * 3 + 1; }\n"
	      "static __attribute__((noinline, used)) int tmabpf_local_fn(int x) { return x - 1; }\n"
	      "int main(int c, char **v) { (void)v; return tmabpf_probe_me(c) + tmabpf_local_fn(c); }\n",
	      f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc -O1 -no-pie -fno-pie -o '%s' '%s' >/dev/null 2>&1", exe, src);
	if (system(cmd)) {
		skip("non-PIE", "no C compiler (cc) to build a test executable");
		goto out;
	}
	n = elfsyms_load(exe, &s, err, sizeof(err));
	check(n == 0 && s.e_type == 2 /* ET_EXEC */ && s.has_symtab,
	      "non-PIE: load ET_EXEC with .symtab (%d %s)", n, err);
	if (n)
		goto out;
	nl = readelf_loads(exe, loads, 16);
	n = elfsyms_match_all(&s, "tmabpf_probe_me", &m);
	if (n == 1) {
		long long want = phdr_offset(loads, nl, m[0]->addr);

		long long hits;

		check(m[0]->offset != m[0]->addr && want >= 0 &&
		      (unsigned long long)want == m[0]->offset,
		      "non-PIE: tmabpf_probe_me vaddr %#llx -> offset %#llx (readelf phdrs: %#llx)",
		      (unsigned long long)m[0]->addr, (unsigned long long)m[0]->offset, want);
		hits = uprobe_count_exec(exe, m[0]->offset);
		if (hits < 0)
			skip("non-PIE uprobe", hits == -ENOENT ? "no uprobe PMU" :
			     "perf_event_open not permitted (run as root)");
		else
			check(hits == 1, "non-PIE: perf uprobe at offset %#llx fired %lld time(s) for 1 call",
			      (unsigned long long)m[0]->offset, hits);
	} else {
		check(0, "non-PIE: tmabpf_probe_me matches once (%d)", n);
	}
	free(m);
	n = elfsyms_match_all(&s, "tmabpf_local_*", &m);
	check(n == 1 && m[0]->bind == 0 /* STB_LOCAL */ && (m[0]->flags & ELFSYMS_F_SYMTAB),
	      "non-PIE: static function found through .symtab only");
	free(m);
	cross_check("non-PIE", exe, &s);
	elfsyms_free(&s);
out:
	unlink(exe);
	unlink(src);
	rmdir(dir);
}

/* C++ with GCC's hot/cold splitting: "f.cold" is not an entry point */
static void test_cxx_cold(void)
{
	char dir[] = "/tmp/tmabpf-elfsyms-XXXXXX", src[PATH_MAX], exe[PATH_MAX], cmd[3 * PATH_MAX];
	char err[512] = "";
	const struct elfsym **m = NULL, *cold = NULL;
	struct elfsyms s;
	size_t i;
	FILE *f;
	int n;

	if (!mkdtemp(dir)) {
		check(0, "c++ cold: mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(src, sizeof(src), "%s/t.cc", dir);
	snprintf(exe, sizeof(exe), "%s/t", dir);
	f = fopen(src, "w");
	if (!f) {
		check(0, "c++ cold: create %s: %s", src, strerror(errno));
		rmdir(dir);
		return;
	}
	fputs("#include <stdexcept>\n"
	      "namespace tmabpf { __attribute__((noinline)) int probe_me(int x) {\n"
	      "  if (x == 12345) throw std::runtime_error(\"x\"); return x * 3 + 1; } }\n"
	      "int main(int c, char **) { return tmabpf::probe_me(c); }\n", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "c++ -O2 -o '%s' '%s' >/dev/null 2>&1", exe, src);
	if (system(cmd) || elfsyms_load(exe, &s, err, sizeof(err))) {
		skip("c++ cold", "no C++ compiler (c++)");
		goto out;
	}
	for (i = 0; i < s.nr_syms; i++)
		if (s.syms[i].flags & ELFSYMS_F_COLD)
			cold = &s.syms[i];
	if (!cold) {
		skip("c++ cold", "the compiler made no .cold part");
		elfsyms_free(&s);
		goto out;
	}
	check(!strcmp(cold->name, "_ZN6tmabpf8probe_meEi.cold") && cold->demangled &&
	      strstr(cold->demangled, "[clone .cold]"), "c++ cold: %s = %s flagged COLD", cold->name,
	      cold->demangled ? cold->demangled : "-");
	n = elfsyms_match_all(&s, "tmabpf::probe_me", &m);
	check(n == 1 && !(m[0]->flags & ELFSYMS_F_COLD) && !strcmp(m[0]->name, "_ZN6tmabpf8probe_meEi"),
	      "c++ cold: 'tmabpf::probe_me' matches the entry point only (%d)", n);
	free(m);
	check(elfsyms_match(&s, "*probe_me*cold*", NULL, NULL) == 1,
	      "c++ cold: a glob naming cold finds the cold part");
	check(elfsyms_lookup(&s, cold->addr + 1) == cold, "c++ cold: lookup in the cold part finds it");
	elfsyms_free(&s);
out:
	unlink(exe);
	unlink(src);
	rmdir(dir);
}

static void test_errors(void)
{
	char err[512] = "", buf[64];
	struct elfsyms s;
	int n;

	n = elfsyms_load("/nonexistent/libnope.so", &s, err, sizeof(err));
	check(n == -ENOENT && strstr(err, "/nonexistent/libnope.so") && strstr(err, "No such file"),
	      "error: missing file -> -ENOENT '%s'", err);
	n = elfsyms_load("/etc/passwd", &s, err, sizeof(err));
	check(n == -ENOEXEC && strstr(err, "not an ELF"), "error: non-ELF -> -ENOEXEC '%s'", err);
	check(!elfsyms_read_soname(LIBC, buf, sizeof(buf)) && !strcmp(buf, "libc.so.6"),
	      "read_soname(libc) = %s", buf);
}

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *,
			 int, float, float *, int);

/*
 * End to end in this process: (1) a runtime address of cblas_sgemm maps back
 * to the symbol through procmaps + elfsyms (the sampling path); (2) a
 * perf_event uprobe at elfsyms' offset fires once per call.
 */
static void test_runtime(void)
{
	float a[4] = { 1, 2, 3, 4 }, b[4] = { 1, 0, 0, 1 }, c[4] = { 0 };
	char path[PATH_MAX], err[512] = "";
	const struct elfsym **m = NULL, *e;
	const struct procmaps_entry *me;
	struct procmaps maps;
	struct elfsyms s;
	uint64_t va = 0, count = 0;
	sgemm_fn fn;
	void *h;
	int fd, type, i;

	setenv("OPENBLAS_NUM_THREADS", "1", 1);
	h = dlopen("libopenblas.so.0", RTLD_NOW);
	fn = h ? (sgemm_fn)dlsym(h, "cblas_sgemm") : NULL;
	if (!fn || !realpath(OPENBLAS_LINK, path)) {
		check(0, "runtime: dlopen/dlsym cblas_sgemm: %s", dlerror());
		return;
	}
	if (elfsyms_load(path, &s, err, sizeof(err)) || procmaps_load(getpid(), &maps, err, sizeof(err))) {
		check(0, "runtime: load: %s", err);
		return;
	}
	me = procmaps_find(&maps, (uint64_t)(uintptr_t)fn + 5);
	e = NULL;
	if (me && !elfsyms_offset_to_vaddr(&s, procmaps_file_offset(me, (uintptr_t)fn + 5), &va))
		e = elfsyms_lookup(&s, va);
	check(me && !strcmp(me->path, path) && e && !strcmp(e->name, "cblas_sgemm"),
	      "runtime: address %p+5 -> %s offset -> vaddr %#llx -> %s", (void *)fn,
	      me ? me->path : "?", (unsigned long long)va, e ? e->name : "?");
	procmaps_free(&maps);

	type = uprobe_pmu_type();
	if (type < 0) {
		skip("runtime uprobe", "no uprobe PMU in /sys/bus/event_source/devices");
		goto out;
	}
	if (elfsyms_match_all(&s, "cblas_sgemm", &m) != 1) {
		check(0, "runtime: cblas_sgemm found");
		goto out;
	}
	fd = uprobe_open(path, m[0]->offset, 0);
	if (fd < 0) {
		skip("runtime uprobe", fd == -EACCES || fd == -EPERM ?
		     "perf_event_open not permitted (run as root)" : strerror(-fd));
		goto out;
	}
	for (i = 0; i < 3; i++)
		fn(101 /* RowMajor */, 111, 111 /* NoTrans */, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2);
	if (read(fd, &count, sizeof(count)) != sizeof(count))
		count = 0;
	close(fd);
	check(count == 3 && c[0] == 1 && c[3] == 4,
	      "runtime: perf uprobe at %s offset %#llx fired %llu times for 3 calls", path,
	      (unsigned long long)m[0]->offset, (unsigned long long)count);
out:
	free(m);
	elfsyms_free(&s);
}

/* PLT stubs are named "name@plt" where objdump(1) names them (perf's names too), in .plt and .plt.sec
 * of this program, libstdc++ and OpenBLAS; and a glob never matches them (a uprobe there is not the
 * function). */
static void test_plt(void)
{
	const char *files[] = { "/proc/self/exe", LIBSTDCXX, OPENBLAS_LINK };

	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		char path[PATH_MAX], cmd[PATH_MAX + 128], line[1024], name[512], err[512] = "";
		unsigned long long addr;
		int stubs = 0, named = 0, matched;
		struct elfsyms s;
		FILE *p;

		if (!realpath(files[f], path) || elfsyms_load(path, &s, err, sizeof(err))) {
			check(0, "plt: loading %s: %s", files[f], err);
			continue;
		}
		snprintf(cmd, sizeof(cmd), "objdump -d -j .plt -j .plt.sec '%s' 2>/dev/null", path);
		p = popen(cmd, "r");
		while (p && fgets(line, sizeof(line), p)) {
			const struct elfsym *e;

			/* the stubs, not PLT0 ("first@plt-0x10") nor IRELATIVE ones ("*ABS*+0xa0c60@plt") */
			if (sscanf(line, "%llx <%511[^>]>:", &addr, name) != 2 || strlen(name) < 5 ||
			    strcmp(name + strlen(name) - 4, "@plt") || !strncmp(name, "*ABS*", 5))
				continue;
			stubs++;
			e = elfsyms_lookup(&s, addr);
			named += e && e->addr == addr && !strcmp(e->name, name);
			if (!(e && e->addr == addr && !strcmp(e->name, name)) && stubs - named <= 3)
				printf("# %s: objdump %llx %s, elfsyms %s\n", path, addr, name, e ? e->name : "none");
		}
		if (p)
			pclose(p);
		matched = elfsyms_match(&s, "*@plt", NULL, NULL);
		check(stubs > 0 && named == stubs && matched == 0,
		      "plt: %s: %d of objdump's %d stubs named alike, %d matched by '*@plt'", path, named, stubs, matched);
		elfsyms_free(&s);
	}
}

/* A file whose extended section count (section header 0's sh_size) claims 2^20 headers over a sparse
 * 64 MiB: libelf allocated every one at elf_begin; it is refused before, in one line. */
static void test_huge_section_count(void)
{
	char path[] = "/tmp/tmabpf-shnum-XXXXXX", err[512] = "";
	unsigned char ehdr[64];
	uint64_t shoff = 4096, count = 1u << 20;
	unsigned char sh0[64] = {};
	struct elfsyms s;
	int fd = mkstemp(path), r;
	FILE *self = fopen("/proc/self/exe", "rb");

	if (fd < 0 || !self || fread(ehdr, 1, sizeof(ehdr), self) != sizeof(ehdr)) {
		check(0, "huge section count: making %s", path);
		if (self)
			fclose(self);
		return;
	}
	fclose(self);
	memcpy(ehdr + 0x28, &shoff, 8);		/* e_shoff */
	memset(ehdr + 0x3c, 0, 4);		/* e_shnum 0, e_shstrndx 0: the count is in section 0 */
	memcpy(sh0 + 0x20, &count, 8);		/* sh_size */
	r = pwrite(fd, ehdr, sizeof(ehdr), 0) != sizeof(ehdr) || pwrite(fd, sh0, sizeof(sh0), shoff) != sizeof(sh0) ||
	    ftruncate(fd, shoff + count * 64);
	close(fd);
	if (!r) {
		r = elfsyms_load(path, &s, err, sizeof(err));
		check(r == -EFBIG && strstr(err, "section or program headers"),
		      "huge section count: refused before libelf allocates them (%d: %s)", r, err);
		if (!r)
			elfsyms_free(&s);
	} else {
		check(0, "huge section count: writing %s", path);
	}
	unlink(path);
}

/* Another user's file (a copy of libstdc++ given to nobody) is charged to the pool other users'
 * files share: past it, -E2BIG and one line naming the owner and the option; within it, loaded 100
 * times in a row (~1 MiB kept each time), the table freed each time gives its bytes back. */
static void test_other_users_pool(void)
{
	char path[] = "/tmp/tmabpf-pool-XXXXXX", err[512] = "", cmd[256];
	struct elfsyms s;
	int fd, r = 0, i;

	if (geteuid() != 0) {
		skip("other users' pool", "not root (the copy cannot be given to nobody)");
		return;
	}
	if ((fd = mkstemp(path)) < 0) {
		check(0, "other users' pool: mkstemp: %s", strerror(errno));
		return;
	}
	close(fd);
	snprintf(cmd, sizeof(cmd), "cp %s %s && chown 65534 %s", LIBSTDCXX, path, path);
	if (system(cmd)) {
		check(0, "other users' pool: %s failed", cmd);
		unlink(path);
		return;
	}
	elf_read_set_others_max(1u << 20);
	r = elfsyms_load(path, &s, err, sizeof(err));
	check(r == -E2BIG && strstr(err, "uid 65534") && strstr(err, "--max-user-symbols") && strstr(err, "not read"),
	      "another user's file past the pool: %d, '%s'", r, err);
	elf_read_set_others_max(16u << 20);
	for (i = 0; i < 100; i++) {
		if ((r = elfsyms_load(path, &s, err, sizeof(err))))
			break;
		elfsyms_free(&s);
	}
	check(i == 100, "another user's file loaded and freed 100 times within a 16 MiB pool: %d (%d, '%s')", i, r,
	      i < 100 ? err : "");
	elf_read_set_others_max(ELF_READ_OTHERS_MAX);
	unlink(path);
}

int main(void)
{
	test_openblas();
	test_libc();
	test_libstdcxx();
	test_nonpie();
	test_cxx_cold();
	test_errors();
	test_runtime();
	test_plt();
	test_huge_section_count();
	test_other_users_pool();
	return check_exit();
}
