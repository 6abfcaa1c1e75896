// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Unit tests for the symbolization libraries: kallsyms.c (aliases, modules,
 * hidden addresses), perfmap.c (overlapping JIT regions, bad lines),
 * folded.c (merging, escaping) and symbolize.c against this very process
 * (its own functions, libc, a perf map it writes, anonymous memory, the
 * kernel).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "lib/clock.h"
#include "model/folded.h"
#include "sym/kallsyms.h"
#include "sym/perfmap.h"
#include "sym/procmaps.h"
#include "sym/symbolize.h"

static void test_kallsyms(void)
{
	static const char text[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81000000 T _text\n"
		"ffffffff81000100 t __pfx_do_thing\n"
		"ffffffff81000110 t do_thing\n"
		"ffffffff81000110 T do_thing_alias\n"
		"ffffffff81000200 D some_data\n"
		"ffffffff81000300 T schedule\n"
		"ffffffffc0001000 t nvme_probe\t[nvme]\n"
		"ffffffffc0002000 t bpf_prog_abc_x\t[bpf]\n";
	static const char hidden[] = "0000000000000000 T _stext\n0000000000000000 T schedule\n";
	static const char data_only[] = "ffffffff81000200 D some_data\nffffffff81000300 b bss\n";
	struct kallsyms k;
	const struct ksym *s;
	uint64_t off = 0;
	char err[256] = "";
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");

	check(kallsyms_parse(&k, f, err, sizeof(err)) == 0, "kallsyms: parse");
	fclose(f);
	check(k.nr == 6, "kallsyms: text symbols only, one per address (%zu)", k.nr);
	s = kallsyms_lookup(&k, 0xffffffff81000118, &off);
	check(s && !strcmp(s->name, "do_thing_alias") && off == 8, "kallsyms: global alias preferred, offset 8 (%s+%llu)",
	      s ? s->name : "-", (unsigned long long)off);
	s = kallsyms_lookup(&k, 0xffffffff81000104, &off);
	check(s && !strcmp(s->name, "__pfx_do_thing"), "kallsyms: padding symbol covers its padding");
	s = kallsyms_lookup(&k, 0xffffffff81000250, &off);
	check(s && !strcmp(s->name, "do_thing_alias"), "kallsyms: data symbols skipped");
	s = kallsyms_lookup(&k, 0xffffffffc0001010, &off);
	check(s && !strcmp(s->module, "[nvme]") && !strcmp(s->name, "nvme_probe"), "kallsyms: module symbol");
	s = kallsyms_lookup(&k, 0xffffffff81000000, &off);
	check(s && !strcmp(s->module, "[kernel.kallsyms]"), "kallsyms: core kernel module name");
	check(!kallsyms_lookup(&k, 0xffffffff80000000, &off), "kallsyms: below the first symbol");
	check(!kallsyms_lookup(&k, 0xffffffff81000300 + KALLSYMS_MAX_FUNC, &off), "kallsyms: gap past the limit");
	kallsyms_free(&k);

	f = fmemopen((void *)data_only, sizeof(data_only) - 1, "r");
	check(kallsyms_parse(&k, f, err, sizeof(err)) == 0 && k.nr == 0 && !kallsyms_lookup(&k, 0xffffffff81000200, &off),
	      "kallsyms: text with no text symbol parses to none (%zu)", k.nr);
	fclose(f);
	kallsyms_free(&k);

	f = fmemopen((void *)hidden, sizeof(hidden) - 1, "r");
	check(kallsyms_parse(&k, f, err, sizeof(err)) == -EPERM && strstr(err, "kptr_restrict"),
	      "kallsyms: hidden addresses refused (%s)", err);
	fclose(f);
	{	/* the cause named is this host's: kptr_restrict 1 or 2, else perf_event_paranoid */
		FILE *kp = fopen("/proc/sys/kernel/kptr_restrict", "r");
		int kptr = -1;
		char want[64];

		if (kp && fscanf(kp, "%d", &kptr) != 1)
			kptr = -1;
		if (kp)
			fclose(kp);
		snprintf(want, sizeof(want), kptr >= 1 ? "kernel.kptr_restrict=%d)" : "kernel.perf_event_paranoid=", kptr);
		check(strstr(err, want) != NULL,
		      "kallsyms: the hidden addresses' cause is this host's setting (kptr_restrict=%d: %s)", kptr, err);
	}
}

static void test_perfmap(void)
{
	static const char text[] =
		"0x1000 100 old_code\n"
		"1000 10 new_code at 1000\n"
		"garbage line\n"
		"2000 0 zero_size\n"
		"\n"
		"3000 1000 big\n"
		"3100 10 small\n";
	struct perfmap m = {};
	const struct perfmap_sym *s;
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");

	check(perfmap_parse(&m, f) == 0, "perfmap: parse");
	fclose(f);
	check(m.nr == 4 && m.bad_lines == 2, "perfmap: 4 regions, 2 bad lines (%zu, %zu)", m.nr, m.bad_lines);
	s = perfmap_lookup(&m, 0x1005);
	check(s && !strcmp(s->name, "new_code at 1000"), "perfmap: the later line wins, names keep spaces");
	s = perfmap_lookup(&m, 0x1050);
	check(s && !strcmp(s->name, "old_code"), "perfmap: the older region where only it reaches");
	check(!perfmap_lookup(&m, 0x1100), "perfmap: past a region");
	s = perfmap_lookup(&m, 0x3800);
	check(s && !strcmp(s->name, "big"), "perfmap: a large region behind a small one");
	s = perfmap_lookup(&m, 0x3105);
	check(s && !strcmp(s->name, "small"), "perfmap: the small region inside the large one");
	perfmap_free(&m);
}

static void test_folded(void)
{
	const char *a[] = { "comm", "main", "f;g", "leaf" };
	const char *b[] = { "comm", "main", "other" };
	struct folded f;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	folded_init(&f);
	folded_add(&f, a, 4, 3);
	folded_add(&f, b, 3, 2);
	folded_add(&f, a, 4, 4);
	folded_add(&f, b, 3, 0);
	check(folded_total(&f) == 9, "folded: total weight");
	check(folded_write(&f, out) == 0, "folded: write");
	fclose(out);
	check(!strcmp(buf, "comm;main;f:g;leaf 7\ncomm;main;other 2\n"), "folded: merged, sorted, ';' escaped");
	if (strcmp(buf, "comm;main;f:g;leaf 7\ncomm;main;other 2\n"))
		printf("# got: %s\n", buf);
	free(buf);
	folded_free(&f);
}

__attribute__((noinline)) int symbolize_me(int x)
{
	return x * 3 + 1;
}

static void test_symbolizer(void)
{
	struct symbolizer *s = symbolizer_new();
	unsigned char *jit = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *anon = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct sym_info si;
	char path[64], line[256];
	unsigned long long kaddr = 0;
	FILE *f;

	check(symbolizer_add_pid(s, getpid()) == 0, "symbolizer: maps of this process");
	symbolizer_user(s, getpid(), (uint64_t)(uintptr_t)symbolize_me + 2, false, &si);
	check(si.name && !strcmp(si.name, "symbolize_me") && si.offset == 2 && !strcmp(si.module, "test_symbolize"),
	      "symbolizer: own function from .symtab (%s+%llu in %s)", si.name ? si.name : "-",
	      (unsigned long long)si.offset, si.module);
	/* a return address just past a function's end belongs to that function */
	symbolizer_user(s, getpid(), (uint64_t)(uintptr_t)symbolize_me, true, &si);
	check(!si.name || strcmp(si.name, "symbolize_me"), "symbolizer: caller frames are looked up at addr - 1");
	symbolizer_user(s, getpid(), (uint64_t)(uintptr_t)getpid, false, &si);
	check(si.name && strstr(si.name, "getpid") && !strcmp(si.module, "libc.so.6"), "symbolizer: libc (%s in %s)",
	      si.name ? si.name : "-", si.module);

	/* JIT code named by a perf map written after the maps were read, and after a first lookup */
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	unlink(path);
	symbolizer_user(s, getpid(), (uint64_t)(uintptr_t)jit + 0x110, false, &si);
	check(!si.name && si.unmapped, "symbolizer: JIT code before its perf map exists: unnamed, to retry");
	f = fopen(path, "w");
	if (f && jit != MAP_FAILED) {
		fprintf(f, "%lx 40 jit_fn\n", (unsigned long)(uintptr_t)jit + 0x100);
		fclose(f);
		usleep(150 * 1000);	/* a missing perf map is looked for again after 100 ms */
		symbolizer_user(s, getpid(), (uint64_t)(uintptr_t)jit + 0x110, false, &si);
		check(si.kind == SYM_JIT && si.name && !strcmp(si.name, "jit_fn") && si.offset == 0x10,
		      "symbolizer: perf map (%s)", si.name ? si.name : "-");
		symbolizer_user(s, getpid(), (uint64_t)(uintptr_t)jit + 0x800, false, &si);
		snprintf(line, sizeof(line), "[jit] 0x%lx-0x%lx rwx 4 KB", (unsigned long)(uintptr_t)jit,
			 (unsigned long)(uintptr_t)jit + 4096);
		check(!si.name && si.kind == SYM_JIT_ANON && !strcmp(symbolizer_label(s, &si), line),
		      "symbolizer: JIT address not in the map is its mapping, one row per mapping (%s)",
		      symbolizer_label(s, &si));
		unlink(path);
	} else {
		check(0, "symbolizer: cannot write %s", path);
	}
	symbolizer_user(s, getpid(), (uint64_t)(uintptr_t)anon + 0x20, true, &si);
	check(!si.name && !strcmp(symbolizer_label(s, &si), "[anon]+0x20"),
	      "symbolizer: a caller frame in anonymous data memory (FP walk junk) is that memory (%s)",
	      symbolizer_label(s, &si));
	symbolizer_user(s, getpid(), (uint64_t)(uintptr_t)anon + 0x20, false, &si);
	check(!si.name && si.unmapped && !strcmp(si.module, "[unknown]"),
	      "symbolizer: a sampled leaf cannot be in memory that is not executable: no code there now, to retry "
	      "(%s)", symbolizer_label(s, &si));
	symbolizer_user(s, getpid(), 0x10, false, &si);
	check(!strcmp(symbolizer_label(s, &si), "[unknown]") && si.offset == 0x10,
	      "symbolizer: an address in no mapping is one [unknown] frame, its address kept apart (%s)",
	      symbolizer_label(s, &si));
	{
		/* an FP walk through code without frame pointers: the stack ends at the first caller frame
		 * outside code, one [unknown] whatever the junk's address (it was "[anon]+0x20", then more) */
		unsigned long long ip[] = { (uintptr_t)symbolize_me + 2, (uintptr_t)getpid + 1,
					    (uintptr_t)anon + 0x20, (uintptr_t)symbolize_me + 2 };
		unsigned long long ip2[] = { (uintptr_t)symbolize_me + 2, 0xbd2faba0bcd8cc9fULL,
					     (uintptr_t)symbolize_me + 2 };
		struct sym_info fr[4], fr2[3];
		size_t n = symbolizer_user_stack(s, getpid(), ip, 4, fr);
		size_t n2 = symbolizer_user_stack(s, getpid(), ip2, 3, fr2);

		check(n == 3 && fr[1].name && strstr(fr[1].name, "getpid") && !strcmp(symbolizer_label(s, &fr[2]), "[unknown]"),
		      "symbolizer: a user stack ends at its first caller frame in data memory, as [unknown] (%zu frames, %s)",
		      n, n > 2 ? symbolizer_label(s, &fr[2]) : "-");
		check(n2 == 2 && symbolizer_label(s, &fr2[1]) == symbolizer_label(s, &fr[2]),
		      "symbolizer: junk in no mapping ends it too, the same [unknown] (%zu frames, %s)", n2,
		      n2 > 1 ? symbolizer_label(s, &fr2[1]) : "-");
	}
	check(symbolizer_intern(s, "abc") == symbolizer_intern(s, "abc"), "symbolizer: interned strings");

	f = fopen("/proc/kallsyms", "r");
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, " T schedule\n") && sscanf(line, "%llx", &kaddr) == 1)
			break;
	if (f)
		fclose(f);
	if (kaddr) {
		symbolizer_kernel(s, kaddr + 4, false, &si);
		check(si.kind == SYM_KERNEL && si.name && !strcmp(si.name, "schedule") && si.offset == 4 &&
		      !strcmp(si.module, "[kernel.kallsyms]"), "symbolizer: kernel (%s+%llu)", si.name ? si.name : "-",
		      (unsigned long long)si.offset);
	} else {
		skip("symbolizer: kernel", "schedule not in /proc/kallsyms or addresses hidden");
	}
	symbolizer_free(s);
}

/* A JIT writes its code, then makes it executable: maps read in between say "rw-p" there. A
 * sampled leaf there is code, so that copy of the maps is stale: it is read again, and the
 * leaf is in the JIT's mapping, not in "[anon]" data memory (CI, test_onednn_jit_rows: 3
 * samples of oneDNN's kernels named "[anon]+0x..."). */
static void test_symbolizer_mprotect_after_read(void)
{
	struct symbolizer *s = symbolizer_new();
	unsigned char *code = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct sym_info si;
	char want[128];

	if (code == MAP_FAILED) {
		check(0, "symbolizer mprotect: mmap: %s", strerror(errno));
		return;
	}
	check(symbolizer_add_pid(s, getpid()) == 0, "symbolizer mprotect: maps read while the code is rw-");
	memset(code, 0xc3, 8192);	/* ret */
	check(mprotect(code, 4096, PROT_READ | PROT_EXEC) == 0, "symbolizer mprotect: r-x");
	/* no re-read yet for this process: the first one is not rate-limited */
	symbolizer_user(s, getpid(), (uint64_t)(uintptr_t)code + 0x40, false, &si);
	snprintf(want, sizeof(want), "[jit] 0x%lx-0x%lx r-x 4 KB", (unsigned long)(uintptr_t)code,
		 (unsigned long)(uintptr_t)code + 4096);
	check(si.kind == SYM_JIT_ANON && !strcmp(si.module, want),
	      "symbolizer mprotect: a leaf in code made executable after the maps were read is in its JIT mapping "
	      "(%s in %s)", symbolizer_label(s, &si), si.module);
	munmap(code, 8192);
	symbolizer_free(s);
}

/* The same for a file: ld.so maps a library r-- before it maps the code segment over it, so maps
 * read in between say "r--p" where code then runs.  A second mapping of this program's own code
 * (same file offset), read r--, then made r-x: a leaf in it is named from the file. */
static void test_symbolizer_file_made_executable(void)
{
	struct symbolizer *s = symbolizer_new();
	uint64_t at = (uint64_t)(uintptr_t)symbolize_me;
	const struct procmaps_entry *e;
	struct procmaps m = {};
	struct sym_info si;
	void *copy = MAP_FAILED;
	size_t len = 0;
	int fd = -1;

	if (procmaps_load(getpid(), &m, NULL, 0) == 0 && (e = procmaps_find(&m, at)) && e->path[0] == '/') {
		len = e->end - e->start;
		fd = open(e->path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			copy = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, e->offset);
		at = at - e->start;
	}
	if (copy == MAP_FAILED) {
		check(0, "symbolizer r--: a second mapping of this program's code: %s", strerror(errno));
	} else {
		check(symbolizer_add_pid(s, getpid()) == 0, "symbolizer r--: maps read while the copy is r--");
		check(mprotect(copy, len, PROT_READ | PROT_EXEC) == 0, "symbolizer r--: r-x");
		symbolizer_user(s, getpid(), (uint64_t)(uintptr_t)copy + at + 2, false, &si);
		check(si.name && !strcmp(si.name, "symbolize_me") && si.offset == 2,
		      "symbolizer r--: a leaf in a file mapping made executable after the maps were read is named from "
		      "the file (%s)", symbolizer_label(s, &si));
		munmap(copy, len);
	}
	if (fd >= 0)
		close(fd);
	procmaps_free(&m);
	symbolizer_free(s);
}

/* Maps re-read after a miss keep the earlier entries the fresh read does not overlap. */
static void test_maps_merge(void)
{
	struct procmaps fresh, old;

	procmaps_parse("1000-2000 r-xp 00000000 08:01 11 /lib/a.so\n"
		       "5000-6000 r-xp 00000000 08:01 12 /lib/b.so\n", &old, NULL, 0);
	procmaps_parse("1000-2000 r-xp 00000000 08:01 11 /lib/a.so\n"
		       "3000-4000 r-xp 00000000 08:01 13 /lib/c.so\n"
		       "5800-5900 rw-p 00000000 00:00 0\n", &fresh, NULL, 0);
	check(procmaps_merge_stale(&fresh, &old) == 0 && fresh.nr == 3 && old.nr == 0,
	      "procmaps_merge_stale: b.so overlapped by a fresh entry is dropped, a.so not doubled (%zu entries)",
	      fresh.nr);
	procmaps_free(&fresh);
	procmaps_parse("1000-2000 r-xp 00000000 08:01 11 /lib/a.so\n"
		       "5000-6000 r-xp 00000000 08:01 12 /lib/b.so\n"
		       "9000-a000 r-xp 00000000 08:01 14 /lib/d.so\n", &old, NULL, 0);
	procmaps_parse("3000-4000 r-xp 00000000 08:01 13 /lib/c.so\n", &fresh, NULL, 0);
	check(procmaps_merge_stale(&fresh, &old) == 0 && fresh.nr == 4 && fresh.entries[0].start == 0x1000 &&
	      fresh.entries[1].start == 0x3000 && fresh.entries[2].start == 0x5000 && fresh.entries[3].start == 0x9000 &&
	      !strcmp(fresh.entries[3].path, "/lib/d.so"),
	      "procmaps_merge_stale: unmapped since (dlclose) kept, sorted (%zu entries)", fresh.nr);
	procmaps_free(&fresh);
}

/* The race of issue 16: a miss after the process exited re-read its (empty) maps and unnamed
 * every address of it, the sampled ones included. */
static void test_symbolizer_after_exit(void)
{
	struct symbolizer *s = symbolizer_new();
	int fds[2], status;
	struct sym_info si;
	pid_t child;
	char c;

	if (pipe(fds))
		return;
	child = fork();
	if (child == 0) {
		close(fds[0]);
		write(fds[1], "x", 1);
		pause();
		_exit(0);
	}
	close(fds[1]);
	read(fds[0], &c, 1);
	close(fds[0]);
	check(symbolizer_add_pid(s, child) == 0, "symbolizer: maps of a child");
	kill(child, SIGKILL);
	usleep(150 * 1000);	/* a zombie now (not reaped), whose maps read empty; past the re-read limit */
	symbolizer_user(s, child, 0x7f0000001234ULL, false, &si);	/* a miss: re-reads the maps */
	symbolizer_user(s, child, (uint64_t)(uintptr_t)symbolize_me + 2, false, &si);
	check(si.name && !strcmp(si.name, "symbolize_me"),
	      "symbolizer: a process that exited keeps the names of its last maps (%s)", symbolizer_label(s, &si));
	symbolizer_user(s, child, 0x2d8, true, &si);
	check(!si.name && !si.unmapped, "symbolizer: an impossible user address (FP walk junk) is not retried");
	waitpid(child, &status, 0);
	symbolizer_free(s);
}

/* A bound on the symbol tables: the least recently used file's table goes, and comes back only
 * while reloads stay under a quarter of the bound per SYMBOLIZER_RELOAD_S (its frames meanwhile
 * "module+0xOFF", counted). */
static void test_symbol_limit(void)
{
	struct symbolizer *s = symbolizer_new();
	struct symbolizer_stats st, st1;
	struct sym_info si;

	symbolizer_set_limit(s, 1);	/* below any table: one table at a time */
	check(symbolizer_add_pid(s, getpid()) == 0, "symbol limit: maps of this process");
	symbolizer_user(s, getpid(), (uint64_t)(uintptr_t)getpid, false, &si);
	symbolizer_get_stats(s, &st1);
	check(si.name && strstr(si.name, "getpid") && st1.table_bytes > 100000 && st1.dropped == 0,
	      "symbol limit: a table bigger than the bound alone stays (libc: %zu bytes)", st1.table_bytes);
	symbolizer_user(s, getpid(), (uint64_t)(uintptr_t)elf_version, false, &si);
	symbolizer_get_stats(s, &st);
	check(si.name && !strcmp(si.name, "elf_version") && st.dropped == 1 && st.table_bytes < st1.table_bytes,
	      "symbol limit: loading libelf's table drops libc's (%s; %zu bytes now, %llu dropped)",
	      si.name ? si.name : "-", st.table_bytes, st.dropped);
	symbolizer_user(s, getpid(), (uint64_t)(uintptr_t)getpid, false, &si);
	symbolizer_get_stats(s, &st);
	check(!si.name && !strcmp(si.module, "libc.so.6") && st.unnamed == 1 && st.dropped == 1,
	      "symbol limit: a dropped table past the reload allowance is not loaded again: %s, counted (%llu)",
	      symbolizer_label(s, &si), st.unnamed);
	symbolizer_free(s);
}

/* Build a one-function library: 0, or -1 when cc fails. */
static int build_lib(const char *dir, const char *name, const char *fn)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "printf 'int %s(int x) { return x * 3 + 1; }\\nint %s_2(int x) { return x - 7; }\\n' "
		 "> %s/%s.c && cc -shared -fPIC -O1 -Wl,--build-id -o %s/%s.so %s/%s.c", fn, fn, dir, name, dir, name,
		 dir, name);
	return system(cmd) == 0 ? 0 : -1;
}

/* Map dir/lib.so (a copy of dir/name.so), name fn in it, drop its table for the bound (libc's
 * loaded after it), then, replaced on disk by dir/other.so when replace, name fn again. */
static void reload_after(const char *dir, const char *name, bool replace, char *got, size_t len,
			 struct symbolizer_stats *st)
{
	struct sym_info one, *si = &one;
	char lib[512], cmd[2048];
	struct symbolizer *s;
	struct symbolizer_stats st0;
	void *h, *fn;

	snprintf(lib, sizeof(lib), "%s/%s-mapped-%d.so", dir, name, replace);	/* a file of its own each */
	snprintf(cmd, sizeof(cmd), "cp %s/%s.so %s", dir, name, lib);
	if (system(cmd) || !(h = dlopen(lib, RTLD_NOW)) || !(fn = dlsym(h, "tmabpf_reload_a"))) {
		check(0, "reload: mapping %s", lib);
		got[0] = 0;
		return;
	}
	/* the library's table alone, to set the bound: 4x it, under libc's */
	s = symbolizer_new();
	symbolizer_add_pid(s, getpid());
	symbolizer_user(s, getpid(), (uint64_t)(uintptr_t)fn, false, si);
	symbolizer_get_stats(s, &st0);
	symbolizer_free(s);
	s = symbolizer_new();
	symbolizer_set_limit(s, 4 * st0.table_bytes);
	symbolizer_add_pid(s, getpid());
	symbolizer_user(s, getpid(), (uint64_t)(uintptr_t)fn, false, si);
	symbolizer_user(s, getpid(), (uint64_t)(uintptr_t)getpid, false, si);	/* drops the library's */
	if (replace) {
		snprintf(cmd, sizeof(cmd), "cp %s/other.so %s.new && mv %s.new %s", dir, lib, lib, lib);
		if (system(cmd))
			check(0, "reload: replacing %s", lib);
	}
	symbolizer_user(s, getpid(), (uint64_t)(uintptr_t)fn, false, si);
	snprintf(got, len, "%s", si->name ? si->name : "");	/* the name dies with the symbolizer */
	symbolizer_get_stats(s, st);
	symbolizer_free(s);
}

/* A dropped table is reloaded from the mapping: the file replaced on disk since is not read for it,
 * the one mapped is. */
static void test_reload_checks_the_file(void)
{
	char dir[] = "/tmp/tmabpf-reload-XXXXXX";
	struct symbolizer_stats st;
	char got[256];

	if (!mkdtemp(dir) || build_lib(dir, "a", "tmabpf_reload_a") || build_lib(dir, "other", "tmabpf_reload_b")) {
		skip("reload checks the file", "cc could not build the test libraries");
		return;
	}
	reload_after(dir, "a", false, got, sizeof(got), &st);
	check(!strcmp(got, "tmabpf_reload_a") && st.dropped >= 1 && st.reloads_refused == 0,
	      "reload: the same file's dropped table comes back (%s, %llu dropped)", got, st.dropped);
	reload_after(dir, "a", true, got, sizeof(got), &st);
	/* the mapping is opened again (/proc/PID/map_files), not the path: the inode mapped, whatever the
	 * path holds now */
	check(!strcmp(got, "tmabpf_reload_a") && st.dropped >= 1 && st.reloads_refused == 0,
	      "reload: a file replaced on disk is not read for the mapped one, the mapped one is: %s, %llu refused",
	      got[0] ? got : "unnamed", st.reloads_refused);
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			check(0, "reload: removing %s", dir);
	}
}

/* symbolizer_set_async: a file's table is read on the reading thread, never in the lookup.  A
 * stripped library whose .gnu_debuglink names a 1 GiB sparse file takes a second or so to read
 * (the debug file is read whole for its CRC): its first lookup returns at once, unnamed and
 * counted, as does libc's queued behind it; within a wait budget the lookup waits and names both;
 * a symbolizer freed while a file is queued or being read frees it (ASan: no leak). */
static void test_symbolizer_async(void)
{
	char dir[] = "/tmp/tmabpf-async-XXXXXX", cmd[2048], lib[600];
	struct symbolizer *s;
	struct symbolizer_stats st;
	struct sym_info si;
	unsigned long long t0, took;
	char err[256] = "";
	void *h, *fn;

	if (!mkdtemp(dir) || build_lib(dir, "slow", "tmabpf_slow")) {
		skip("async", "cc could not build the test library");
		return;
	}
	snprintf(lib, sizeof(lib), "%s/slow.so", dir);
	snprintf(cmd, sizeof(cmd), "printf x > %s/slow.debug && objcopy --strip-unneeded --remove-section=.note.gnu.build-id "
		 "--add-gnu-debuglink=%s/slow.debug %s && truncate -s 1G %s/slow.debug", dir, dir, lib, dir);
	if (system(cmd) || !(h = dlopen(lib, RTLD_NOW)) || !(fn = dlsym(h, "tmabpf_slow"))) {
		check(0, "async: a slow library %s", lib);
		return;
	}
	s = symbolizer_new();
	check(symbolizer_set_async(s, err, sizeof(err)) == 0, "async: the reading thread starts (%s)", err);
	check(symbolizer_add_pid(s, getpid()) == 0, "async: maps of this process");
	t0 = mono_ns();
	symbolizer_user(s, getpid(), (uint64_t)(uintptr_t)fn, false, &si);
	took = mono_ns() - t0;
	symbolizer_get_stats(s, &st);
	check(!si.name && !strcmp(si.module, "slow.so") && st.deferred == 1 && took < 200000000ULL,
	      "async: the slow library's first lookup does not read it: %s, %llu deferred, %.3f s",
	      symbolizer_label(s, &si), st.deferred, took / 1e9);
	symbolizer_user(s, getpid(), (uint64_t)(uintptr_t)getpid, false, &si);
	symbolizer_get_stats(s, &st);
	check(!si.name && !strcmp(si.module, "libc.so.6") && st.deferred == 2 && st.table_bytes == 0,
	      "async: libc queued behind it, unnamed: %s, %llu deferred", symbolizer_label(s, &si), st.deferred);
	symbolizer_wait_budget(s, 30000000000ULL);
	t0 = mono_ns();
	symbolizer_user(s, getpid(), (uint64_t)(uintptr_t)getpid, false, &si);
	took = mono_ns() - t0;
	check(si.name && strstr(si.name, "getpid"), "async: within a wait budget the lookup waits for the reads: %s "
	      "after %.3f s", symbolizer_label(s, &si), took / 1e9);
	symbolizer_user(s, getpid(), (uint64_t)(uintptr_t)fn, false, &si);
	symbolizer_get_stats(s, &st);
	check(si.name && !strcmp(si.name, "tmabpf_slow") && st.deferred == 2 && st.table_bytes > 100000,
	      "async: the slow library named from its .dynsym once read: %s (%zu bytes of tables)",
	      symbolizer_label(s, &si), st.table_bytes);
	symbolizer_wait_budget(s, 0);
	symbolizer_user(s, getpid(), (uint64_t)(uintptr_t)elf_version, false, &si);
	symbolizer_free(s);	/* libelf's read queued or under way: freed here, or by the thread */
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		check(0, "async: removing %s", dir);
}

/* The JIT code's perf map with name for it (then filler regions elsewhere, ~0.1 s to read), appended
 * when append: the later line wins. */
static bool write_perfmap(const char *path, const void *jit, const char *name, bool append)
{
	FILE *f = fopen(path, append ? "a" : "w");

	if (!f)
		return false;
	fprintf(f, "%lx 40 %s\n", (unsigned long)(uintptr_t)jit + 0x100, name);
	for (int i = 0; !append && i < 300000; i++)
		fprintf(f, "%lx 30 filler_%07d_named_like_a_javascript_fn\n", 0x100000000000UL + i * 0x40UL, i);
	return fclose(f) == 0;
}

/* symbolizer_set_async: a perf map is read on the reading thread too (a user's 60 MiB map took the
 * daemon's refresh 0.5 s, each time it changed).  Its first lookup is unnamed, counted; within a
 * wait budget it waits and names; a change is read again there while the map before names the
 * lookups; a symbolizer freed with a read queued or under way frees it (ASan: no leak). */
static void test_symbolizer_async_perfmap(void)
{
	unsigned char *jit = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t at = (uint64_t)(uintptr_t)jit + 0x110;
	struct symbolizer *s = symbolizer_new();
	struct symbolizer_stats st;
	struct sym_info si;
	unsigned long long t0, took;
	char path[64], err[256] = "";
	bool v2 = false;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	if (jit == MAP_FAILED || !write_perfmap(path, jit, "jit_fn_v1", false)) {
		check(0, "async perf map: cannot write %s", path);
		return;
	}
	check(symbolizer_set_async(s, err, sizeof(err)) == 0, "async perf map: the reading thread starts (%s)", err);
	check(symbolizer_add_pid(s, getpid()) == 0, "async perf map: maps of this process");
	t0 = mono_ns();
	symbolizer_user(s, getpid(), at, false, &si);
	took = mono_ns() - t0;
	symbolizer_get_stats(s, &st);
	check(!si.name && si.kind == SYM_JIT_ANON && si.unmapped && st.deferred == 1 && took < 50000000ULL,
	      "async perf map: its first lookup does not read it: %s, %llu deferred, %.3f s", symbolizer_label(s, &si),
	      st.deferred, took / 1e9);
	symbolizer_wait_budget(s, 30000000000ULL);
	symbolizer_user(s, getpid(), at, false, &si);
	check(si.kind == SYM_JIT && si.name && !strcmp(si.name, "jit_fn_v1") && si.offset == 0x10,
	      "async perf map: within a wait budget the lookup waits for the read: %s", symbolizer_label(s, &si));
	if (!write_perfmap(path, jit, "jit_fn_v2", true))
		check(0, "async perf map: cannot append to %s", path);
	symbolizer_user(s, getpid(), at, false, &si);
	check(si.name && !strcmp(si.name, "jit_fn_v1"), "async perf map: while its change is read, the map before "
	      "names it: %s", symbolizer_label(s, &si));
	for (int i = 0; i < 1000 && !v2; i++) {
		usleep(10000);
		symbolizer_user(s, getpid(), at, false, &si);
		v2 = si.name && !strcmp(si.name, "jit_fn_v2");
	}
	symbolizer_get_stats(s, &st);
	check(v2 && st.deferred == 1, "async perf map: the change named once read: %s, %llu deferred",
	      symbolizer_label(s, &si), st.deferred);
	if (!write_perfmap(path, jit, "jit_fn_v3", true))
		check(0, "async perf map: cannot append to %s", path);
	symbolizer_wait_budget(s, 0);
	symbolizer_user(s, getpid(), at, false, &si);
	symbolizer_free(s);	/* the map's read queued or under way: freed here, or by the thread */
	unlink(path);
	munmap(jit, 4096);
}

int main(void)
{
	test_symbol_limit();
	test_reload_checks_the_file();
	test_maps_merge();
	test_symbolizer_after_exit();
	test_kallsyms();
	test_perfmap();
	test_folded();
	test_symbolizer();
	test_symbolizer_mprotect_after_read();
	test_symbolizer_file_made_executable();
	test_symbolizer_async();	/* last: its thread's stack, cached once it ends, could neighbour the
					 * anonymous memory test_symbolizer names */
	test_symbolizer_async_perfmap();
	return check_exit();
}
