// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Numbers with SI prefixes (units.h). */
#include <stdio.h>
#include "lib/units.h"

void units_si(char *buf, size_t len, double v, const char *sep)
{
	static const char *const prefix[] = { "", "K", "M", "G", "T", "P" };
	int i = 0;

	while (v >= 999.5 && i < 5) {
		v /= 1000;
		i++;
	}
	snprintf(buf, len, v >= 99.5 ? "%.0f%s%s" : v >= 9.95 ? "%.1f%s%s" : "%.2f%s%s", v, sep, prefix[i]);
}

void units_ns(char *buf, size_t len, double ns)
{
	static const char *const unit[] = { "ns", "us", "ms", "s" };
	int i = 0;

	while (ns >= 999.95 && i < 3) {
		ns /= 1000;
		i++;
	}
	snprintf(buf, len, i == 0 ? "%.0f %s" : ns >= 99.995 ? "%.1f %s" : "%.2f %s", ns, unit[i]);
}
