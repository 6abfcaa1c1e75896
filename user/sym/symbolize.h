/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * symbolize: (pid, address) and kernel addresses -> module, function, offset.
 * Shared by everything that names code addresses: sampling (--sample) now,
 * off-CPU stacks and memory samples later.
 *
 * User addresses: the process' maps (procmaps.c), read when the process is
 * first met, read again (at most every 100 ms) when an address is missing
 * from them while it lives, and kept after it exits; file
 * mappings are named from the ELF file's .symtab/.dynsym (elfsyms.c, C++
 * names demangled), or its separate debug file (debugfile.c: build-id,
 * .gnu_debuglink) when the file itself has no .symtab; files are opened
 * when first noted, so that they can still be read once the process has
 * gone, through /proc/PID/map_files (the inode mapped, whatever the path
 * holds now: a user can rename a root-only file's link over it), else
 * through /proc/PID/root (containers) when the maps' device and inode are
 * still there; only regular files are ever opened.  ELF symbols are loaded once per
 * file (device, inode) and shared between files with the same build-id.
 * The vDSO is named from this process' own copy.  Anonymous executable
 * memory (JIT code) is named from /tmp/perf-PID.map (perfmap.c).  Kernel
 * addresses: /proc/kallsyms (kallsyms.c).
 *
 * JIT code that no perf map names is grouped per mapping: module "[jit]
 * 0xSTART-0xEND PERMS SIZE", no name, so that its samples form one row per
 * mapping rather than one per address.
 *
 * Nothing is dropped: an address with no symbol keeps its module and offset
 * (symbolizer_label gives "module+0xOFF": a file offset for files, an offset
 * from the mapping's start for other mappings, the address itself when no
 * mapping holds it, module "[unknown]").
 *
 * Callers name addresses soon after they are sampled (sampling: each new
 * stack within ~50 ms), so that the maps read are the ones sampled, and add
 * the kernel's records of the mappings made since (symbolizer_add_mapping), so
 * that a process that exits first is still named.  Limit without those
 * records: an address of a process that exited (or unmapped the code) before
 * it was named stays "[unknown]+0xADDR" (or module+0xOFF when only its symbols
 * are missing).
 */
#ifndef TMABPF_SYMBOLIZE_H
#define TMABPF_SYMBOLIZE_H
#include <stdbool.h>
#include <stdint.h>

enum sym_kind {
	SYM_USER = 0,		/* ELF file, vDSO, anonymous memory */
	SYM_KERNEL = 1,
	SYM_JIT = 2,		/* named from a perf map file */
	SYM_JIT_ANON = 3,	/* anonymous executable memory that no perf map names: the module is
				 * the mapping ("[jit] 0xSTART-0xEND r-x 12 MB"), one row per mapping */
};

/* The mapping an address fell in (pprof's mapping table); zero when none (kernel, unmapped). */
struct sym_map {
	uint64_t start, end;	/* its addresses */
	uint64_t pgoff;		/* file offset of start */
	const char *path;	/* as the process maps it; interned, NULL when none */
	const char *build_id;	/* hex NT_GNU_BUILD_ID of the file; interned, NULL when unknown */
	bool exe;		/* the process' executable (/proc/PID/exe): pprof's main binary */
};

struct sym_info {
	struct sym_map map;
	const char *module;	/* "libc.so.6", "[kernel.kallsyms]", "[nvme]", "[vdso]", "perf-PID.map",
				 * "[anon]", "[heap]", "[unknown]", ...; interned, never NULL */
	const char *name;	/* function (demangled), interned; NULL when unknown */
	uint64_t offset;	/* from the function's start; when name is NULL, see above */
	enum sym_kind kind;
	bool unmapped;		/* user address in no mapping (even after re-reading the maps), or
				 * in JIT memory that the perf map does not name (yet): name it again later */
	bool code;		/* in executable memory (a file's code, the vDSO, JIT code), or kernel */
};

struct symbolizer;

struct symbolizer *symbolizer_new(void);
void symbolizer_free(struct symbolizer *s);

/*
 * Bound the memory of the files' symbol tables to about bytes (0, the default: no bound).  When a
 * table is loaded past it, the least recently used files' tables are dropped; a dropped file is
 * loaded again when one of its addresses is next named, as long as the tables loaded again in the
 * last SYMBOLIZER_RELOAD_S seconds stay under a quarter of the bound (small tables come back at
 * once; big ones cannot thrash: until then their frames are "module+0xOFF", counted).  A table
 * bigger than the bound alone stays.  A reload opens the mapping again (/proc/PID/map_files), or
 * once it is gone the file's path, which must hold the inode mapped (the maps' device and inode)
 * and be the one first loaded (its build id, or without one its size and modification time): else
 * it is refused, counted in reloads_refused.  Whatever the bound, one file's reading is held to
 * ELF_READ_MEMORY_MAX (elf_read.h), charged before each read: a file past it is not read (one line).
 */
#define SYMBOLIZER_RELOAD_S 10
void symbolizer_set_limit(struct symbolizer *s, size_t bytes);

/*
 * Read the files' symbol tables and the processes' perf maps on a thread of the symbolizer's own
 * (symload.c) rather than in the lookup that first needs them: for a loop that must not wait on a
 * file (the daemon's refresh; a user's library can take seconds to read, a user's 60 MiB perf map
 * half a second each time it changes).  A file met for the first time, or a dropped table met
 * again, is named "module+0xOFF" until its table is read (past symbolizer_wait_budget), counted in
 * deferred; the lookups after that name it.  Likewise JIT code before its process' perf map is
 * read (its mapping, as with no perf map); a perf map that changed is read again there while the
 * one before names the lookups (both in memory meanwhile).  0, or -EAGAIN with err saying why (no thread: the
 * lookups read the files, as without it).
 */
int symbolizer_set_async(struct symbolizer *s, char *err, size_t errlen);
/* The lookups from now on may wait up to ns in all for files being read on that thread (most files
 * take milliseconds: named at once; a slow one costs the budget once, then is left to the thread).
 * 0, the default: they never wait.  The daemon sets it at each refresh. */
void symbolizer_wait_budget(struct symbolizer *s, unsigned long long ns);

struct symbolizer_stats {
	size_t table_bytes;		/* symbol tables in memory now (elfsyms_bytes) */
	unsigned long long dropped;	/* tables dropped for the bound */
	unsigned long long unnamed;	/* addresses left "module+0xOFF" while their table waited to reload */
	unsigned long long reloads_refused;	/* dropped tables not reloaded: another file is at the path
						 * now (build id, or size and time, differ); their frames stay
						 * "module+0xOFF" */
	unsigned long long deferred;	/* addresses left "module+0xOFF" (JIT code: its mapping) while their
					 * file's table (its perf map) was read on the symbolizer's thread
					 * (symbolizer_set_async) */
};
void symbolizer_get_stats(const struct symbolizer *s, struct symbolizer_stats *out);
/* Processes and files it holds now (each process' maps; each file's record, its table when loaded). */
void symbolizer_size(const struct symbolizer *s, size_t *procs, size_t *files);
/* Forget the processes that have exited (kill(pid, 0): ESRCH) unless keep(ctx, pid): their maps and
 * perf maps freed, the files' tables kept for the processes that still map them.  Returns how
 * many were forgotten. */
size_t symbolizer_forget_exited(struct symbolizer *s, bool (*keep)(void *ctx, int pid), void *ctx);

/* Read pid's maps now and open its mapped files; a later call (after an
 * exec) replaces them.  0, or -errno when its maps cannot be read. */
int symbolizer_add_pid(struct symbolizer *s, int pid);
/* One executable file mapping pid made, as the kernel recorded it (collect/mmap_events.c): kept in
 * its maps, over what it overlaps, so that the addresses of a process that exits before its maps are
 * read are still named.  The file is read through /proc/PID/root while pid lives, else by path only
 * when that file is still the recorded one (device and inode).  0 or -errno. */
int symbolizer_add_mapping(struct symbolizer *s, int pid, uint64_t start, uint64_t end, uint64_t pgoff,
			   const char *path, unsigned int maj, unsigned int min, uint64_t ino);

/* Name a user address of pid.  caller: addr is a return address (a frame
 * below the leaf), looked up at addr - 1 so that a call at a function's end
 * is not named after the next function. */
void symbolizer_user(struct symbolizer *s, int pid, uint64_t addr, bool caller, struct sym_info *out);
void symbolizer_kernel(struct symbolizer *s, uint64_t addr, bool caller, struct sym_info *out);

/*
 * Name a user stack of pid, leaf first (ip[0..n)), into out[].  A frame-pointer walk through code
 * built without frame pointers reads data from some frame on: the stack ends at the first caller
 * frame outside executable memory, which is kept as one "[unknown]" frame (so such stacks merge, as
 * perf's [unknown] does).  Returns how many frames out holds.
 */
size_t symbolizer_user_stack(struct symbolizer *s, int pid, const unsigned long long *ip, size_t n, struct sym_info *out);

/* Does pid map a file whose name starts with prefix ("libdnnl", "node")?  From its last maps read. */
bool symbolizer_pid_maps(struct symbolizer *s, int pid, const char *prefix);

/* The function name, or "module+0xOFF" when unknown (the mapping alone for SYM_JIT_ANON; "[unknown]"
 * alone for an address in no mapping: one frame for what cannot be named, not one per address);
 * interned. */
const char *symbolizer_label(struct symbolizer *s, const struct sym_info *si);
/* The frame's name in a flame graph (folded stacks): its function, the JIT mapping (SYM_JIT_ANON), else
 * "[unknown]", as perf names what it cannot: one box for them, not one per address; interned. */
const char *symbolizer_fold_label(struct symbolizer *s, const struct sym_info *si);
/* A copy of str that lives as long as s (equal strings give equal pointers). */
const char *symbolizer_intern(struct symbolizer *s, const char *str);

#endif
