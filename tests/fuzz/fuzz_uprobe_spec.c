// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* libFuzzer target: --uprobe LIB:GLOB specs, resolved for this process (libresolve: names,
 * SONAMEs, paths, ld.so.cache; elfsyms: the library's symbols, globs, near matches). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sym/uprobe_targets.h"
#include "lib/warn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	struct uprobe_set s = {};
	char spec[512], err[1024];

	if (!init) {
		warn_quiet();
		init = 1;
	}
	if (size >= sizeof(spec))
		size = sizeof(spec) - 1;
	memcpy(spec, data, size);
	spec[size] = 0;
	uprobe_set_add_spec(&s, spec, size & 1 ? (int)getpid() : -1, "/proc/self/exe", err, sizeof(err));
	uprobe_set_free(&s);
	return 0;
}
