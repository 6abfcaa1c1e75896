// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* libFuzzer target: ELF files as a profiled process' user may write them: function symbols,
 * versions, segments, notes, SONAME (elfsyms), build-id and debuglink (debugfile), then
 * lookups and globs over what was read. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "sym/debugfile.h"
#include "sym/elfsyms.h"
#include "lib/warn.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	const char *path = fuzz_file(data, size);
	struct elfsyms s;
	const struct elfsym **m = NULL;
	char buf[512], err[512];

	if (!init) {
		warn_quiet();
		init = 1;
	}
	debugfile_build_id(path, buf, sizeof(buf));
	elfsyms_read_soname(path, buf, sizeof(buf));
	if (elfsyms_load(path, &s, err, sizeof(err)))
		return 0;
	for (size_t i = 0; i < s.nr_syms; i++) {
		uint64_t off, va;

		elfsyms_lookup(&s, s.syms[i].addr + (s.syms[i].size ? s.syms[i].size - 1 : 0));
		if (!elfsyms_vaddr_to_offset(&s, s.syms[i].addr, &off))
			elfsyms_offset_to_vaddr(&s, off, &va);
		elfsyms_ifunc_warning(&s, &s.syms[i], buf, sizeof(buf));
	}
	elfsyms_lookup(&s, 0);
	elfsyms_lookup(&s, UINT64_MAX);
	elfsyms_match_all(&s, "*", &m);
	free(m);
	elfsyms_match(&s, "f*o[a-z]?", NULL, NULL);
	elfsyms_near_matches(&s, "main", buf, sizeof(buf));
	elfsyms_free(&s);
	return 0;
}
