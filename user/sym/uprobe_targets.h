/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* --uprobe LIB:GLOB specs resolved to (file, offset) pairs, one per probed function. */
#ifndef TMABPF_UPROBE_TARGETS_H
#define TMABPF_UPROBE_TARGETS_H
#include <stdbool.h>
#include <stddef.h>
#include "sym/probe_place.h"
#include "sym/uprobe_insn.h"

struct elfsyms;
struct itt_names;
struct libresolve_result;

#define UPROBE_MAX_LIBS 32
#define UPROBE_MAX_FUNCS 65536

struct uprobe_func {
	char *symbol;			/* display name (demangled for C++) */
	unsigned long offset;		/* file offset */
	int lib;			/* index in uprobe_set.libs */
	bool ifunc;
	bool detached;			/* by --max-rate */
	struct uprobe_insn insn;	/* its probed instruction: cost class, or why the kernel refuses it
					 * (UINSN_REFUSED: never attached, listed as unprobeable) */
	struct probe_place place;	/* the file offset probed (past endbr64 where safe) and why */
	bool never_called;		/* set at the end of a run: attached, zero calls */
	bool marker;			/* --per-call: its outermost calls are iterations */
	bool spin;			/* --per-call: in the spin set (collect/spin.h): its on-CPU time is spin */
	bool itt;			/* --itt: an ITT span's name (sym/itt_names.h), not a probed function */
	unsigned int roof_cookie;	/* --roofline: its known GEMM/GEMV signature (ROOF_COOKIE of
					 * bpf/roof_shapes.h), read in its own entry; 0: none */
};

struct uprobe_lib {
	char *attach_path;		/* /proc/self/fd/N of fd: what was read is what is attached */
	int fd;				/* the file, open from resolution to uprobe_set_free */
	unsigned long long dev, ino;	/* its device and inode */
	char *module;			/* canonical path shown in reports */
	char *note;			/* which file was chosen and why, shown once attached */
	char *glob;			/* the glob of the first spec that named it */
	bool never_mapped;		/* set at the end of a run: no watched process mapped it */
};

/* A --uprobe NAME:GLOB whose library no process maps yet: resolved when a target maps a file of
 * that name (uprobe_set_add_deferred). */
struct uprobe_deferred {
	char *lib, *glob;
	int attached;			/* functions added when it resolved; 0: not yet */
	bool marker;			/* a --per-call spec: its functions are markers */
};

/* A process that mapped a library's file before its probes were attached (collect/uprobe_late.h):
 * its calls in between were not counted. */
struct uprobe_mapped_late {
	int pid, lib;
	double ms;			/* how long before the attach it mapped the file */
};

#define UPROBE_MAX_LATE 64

struct uprobe_set {
	int nr_libs;
	struct uprobe_lib libs[UPROBE_MAX_LIBS];
	int nr_funcs;
	struct uprobe_func *funcs;	/* index = function id = BPF cookie */
	int nr_deferred;
	struct uprobe_deferred deferred[UPROBE_MAX_LIBS];
	int nr_late;
	struct uprobe_mapped_late late[UPROBE_MAX_LATE];
	/* the symbols last read, kept for the next spec naming the same file (same device, inode,
	 * size and modification time) until uprobe_set_forget_symbols */
	struct elfsyms *last_syms;
	unsigned long long last_dev, last_ino, last_size, last_mtime_ns;
	enum probe_at probe_at;		/* --probe-at */
	struct itt_names *itt;		/* --itt: the spans' names (sym/itt_names.h); NULL when off */
};

/*
 * Resolve one SPEC (LIB:GLOB, split on the last colon) for target pid (-1:
 * none) and append the matching functions.  main_exe names the program for
 * "':GLOB'" when there is no running pid (launched command).  0, or -errno
 * with one line in err: -ENOENT library not found, -ESRCH no function matches
 * (with near matches), -EINVAL JIT address or malformed spec.
 */
int uprobe_set_add_spec(struct uprobe_set *s, const char *spec, int pid, const char *main_exe,
			char *err, size_t errlen);
/* The part of uprobe_set_add_spec after the library is resolved (res) and its symbols loaded
 * (syms): the functions matching glob appended, or -ESRCH with near matches in err. */
int uprobe_set_add_matching(struct uprobe_set *s, const struct libresolve_result *res, const struct elfsyms *syms,
			    const char *glob, char *err, size_t errlen);
/* Free the symbols kept for the next spec (a batch of specs is resolved). */
void uprobe_set_forget_symbols(struct uprobe_set *s);
void uprobe_set_free(struct uprobe_set *s);
/* LIB (a spec's library part) is a glob ("libggml-cpu-*.so", "/opt/x/lib*.so"): it matches the
 * files a target maps by their names (without a directory) or the files on disk (with one), each
 * probed with the function glob; not an address ("0x..."). */
bool uprobe_lib_is_glob(const char *lib);

/* Keep SPEC (a bare library name that nothing maps yet) for later.  0 or -errno (err filled). */
int uprobe_set_defer(struct uprobe_set *s, const char *spec, char *err, size_t errlen);
/* Resolve deferred spec d against path, just mapped by pid: its functions are appended to s (a new
 * library, its index in *lib).  0 or -errno (err filled). */
int uprobe_set_add_deferred(struct uprobe_set *s, int d, const char *path, int pid, int *lib, char *err,
			    size_t errlen);

/* Functions the kernel cannot probe (skipped): how many, and one line naming the reasons and the
 * first few ("4 of 137 functions cannot be probed (EVEX-encoded first instruction: 4): f, g, ...");
 * 0 when none. */
int uprobe_set_unprobeable(const struct uprobe_set *s, char *line, size_t len);

#endif
