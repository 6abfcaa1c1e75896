// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* libFuzzer target: /proc/kallsyms text (types, modules, aliases, hidden addresses), then
 * lookups at and around every symbol. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "sym/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kallsyms k;
	char err[512];
	uint64_t off;
	FILE *f;

	if (!size || !(f = fmemopen((void *)data, size, "r")))
		return 0;
	if (kallsyms_parse(&k, f, err, sizeof(err)) == 0) {
		for (size_t i = 0; i < k.nr; i++) {
			const struct ksym *s = kallsyms_lookup(&k, k.syms[i].addr, &off);

			/* one symbol per address, sorted: each is found at its own address */
			if (!s || s->addr != k.syms[i].addr || off || (i && k.syms[i - 1].addr >= k.syms[i].addr))
				abort();
			kallsyms_lookup(&k, k.syms[i].addr - 1, &off);
			kallsyms_lookup(&k, k.syms[i].addr + KALLSYMS_MAX_FUNC, &off);
		}
		kallsyms_lookup(&k, 0, &off);
		kallsyms_lookup(&k, UINT64_MAX, NULL);
		kallsyms_free(&k);
	}
	fclose(f);
	return 0;
}
