// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Host facts for the TMA engine; see tma_env.h. */
#include <stdio.h>
#include <string.h>
#include "tma.h"
#include "tma_env.h"

static int read_int_file(const char *path, int dflt)
{
	FILE *f = fopen(path, "r");
	int v = dflt;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = dflt;
		fclose(f);
	}
	return v;
}

void tma_env_host(struct tma_env *e)
{
	memset(e, 0, sizeof(*e));
	e->smt_on = read_int_file("/sys/devices/system/cpu/smt/active", 0) > 0;
	e->nmi_watchdog = read_int_file("/proc/sys/kernel/nmi_watchdog", 0) > 0;
}
