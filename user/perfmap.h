/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * perfmap: JIT symbols from a perf map file (/tmp/perf-PID.map), as written
 * by V8 (--perf-basic-prof), oneDNN (DNNL_JIT_PROFILE=1), the JVM's
 * perf-map-agent, LuaJIT, ...: one "START SIZE NAME" line per code region,
 * START and SIZE in hex (with or without 0x).  JIT compilers reuse memory:
 * where regions overlap, the line written last wins.
 */
#ifndef TMABPF_PERFMAP_H
#define TMABPF_PERFMAP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct perfmap_sym {
	uint64_t start, size;
	char *name;
	size_t line;		/* order in the file: later lines win */
};

struct perfmap {
	struct perfmap_sym *syms;	/* sorted by start, then line */
	size_t nr;
	uint64_t *max_end;	/* [i]: largest end among syms[0..i] (bounds the backward search) */
	size_t bad_lines;	/* lines that were not "START SIZE NAME" */
	char *path;
	off_t file_size;	/* at load, to notice appends */
	long long mtime_ns;
};

/* -ENOENT when the file does not exist. */
int perfmap_load(struct perfmap *m, const char *path, char *err, size_t errlen);
int perfmap_parse(struct perfmap *m, FILE *f);
/* The region holding addr (the latest written when several do), or NULL. */
const struct perfmap_sym *perfmap_lookup(const struct perfmap *m, uint64_t addr);
/* The file grew or changed since it was loaded (or disappeared). */
bool perfmap_changed(const struct perfmap *m);
void perfmap_free(struct perfmap *m);

#endif
