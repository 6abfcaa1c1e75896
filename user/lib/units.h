/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Numbers for people: three significant digits and an SI prefix ("242.9 G" -> "243 G"). */
#ifndef TMABPF_UNITS_H
#define TMABPF_UNITS_H
#include <stddef.h>

/* v with an SI prefix (K, M, G, T, P: powers of 1000), 3 significant digits; sep between the
 * number and the prefix (" " or ""). */
void units_si(char *buf, size_t len, double v, const char *sep);

#endif
