// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* libFuzzer target: an ELF file's build-id note and .gnu_debuglink section (libelf, libdw's
 * dwelf_elf_gnu_build_id / dwelf_elf_gnu_debuglink), then the search for its debug file by both.
 * The directories searched do not exist: a fuzzed link name cannot reach a real file. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "sym/debugfile.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	const char *path = fuzz_file(data, size);
	char hex[256], out[8192];

	if (!init) {
		setenv("TMABPF_DEBUG_DIR", "/nonexistent-tmabpf-fuzz/debug", 1);
		init = 1;
	}
	if (debugfile_build_id(path, hex, sizeof(hex)) == 0 && (strlen(hex) % 2 || strlen(hex) < 2))
		abort();
	if (debugfile_find(path, "/nonexistent-tmabpf-fuzz/lib/libx.so", "", out, sizeof(out)) == 0)
		abort();	/* nothing exists there */
	debugfile_find(path, "libx.so", "/nonexistent-tmabpf-fuzz/root", out, sizeof(out));
	return 0;
}
