// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* One number from a kernel file.  See kernel_file.h. */
#include <stdio.h>
#include "lib/kernel_file.h"

int kernel_file_int(const char *path, int dflt)
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
