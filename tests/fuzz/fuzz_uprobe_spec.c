// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* libFuzzer target: --uprobe LIB:GLOB specs: the split on the last colon that is not C++'s "::"
 * (libresolve), then GLOB against a library's symbols (elfsyms: globs, demangled C++ names,
 * near matches) and the matches' first instructions (uprobe_insn).  The libraries are resolved
 * and their symbols loaded once (the ms each costs kept this target near 100 runs a second):
 * LIB picks one of them by its hash.  A LIB that is a path has its symlinks resolved as
 * libresolve does (lstat and readlink only); resolving names by the maps and directories is the
 * tests' (and fuzz_ldcache's, for ld.so.cache). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/warn.h"
#include "sym/elfsyms.h"
#include "sym/libresolve.h"
#include "sym/uprobe_targets.h"

/* small ones (100 to 200 functions: near matches scan them all), linked into every fuzzer */
static const char *const LIBS[] = { "libz.so.1", "libelf.so.1", "libjson-c.so.5" };
#define NLIBS (sizeof(LIBS) / sizeof(LIBS[0]))

static struct libresolve_result res[NLIBS];
static struct elfsyms syms[NLIBS];

static void load(void)
{
	char err[1024];

	warn_quiet();
	for (size_t i = 0; i < NLIBS; i++)
		if (libresolve_find(-1, LIBS[i], &res[i], err, sizeof(err)) ||
		    elfsyms_load(res[i].path, &syms[i], err, sizeof(err))) {
			fprintf(stderr, "fuzz_uprobe_spec: %s: %s\n", LIBS[i], err);
			abort();
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	struct uprobe_set s = {};
	char spec[512], lib[4096], glob[1024], err[1024];
	uint32_t h = 2166136261u;

	if (!init) {
		load();
		init = 1;
	}
	if (size >= sizeof(spec))
		size = sizeof(spec) - 1;
	memcpy(spec, data, size);
	spec[size] = 0;
	if (libresolve_split_spec(spec, lib, sizeof(lib), glob, sizeof(glob), err, sizeof(err)))
		return 0;
	if (lib[0] == '/') {
		char real[LIBRESOLVE_PATH_MAX];

		if (libresolve_realpath_in_root("", lib, real, sizeof(real)) == 0 && real[0] != '/')
			abort();
	}
	for (const char *p = lib; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	uprobe_set_add_matching(&s, &res[h % NLIBS], &syms[h % NLIBS], glob, err, sizeof(err));
	uprobe_set_free(&s);
	return 0;
}
