/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Numbers for people, as perf stat prints them: three significant digits and an SI prefix
 * ("242.9 G" -> "243 G"), times in the unit that fits ("684.9 ms", "1.21 s"). */
#ifndef TMABPF_UNITS_H
#define TMABPF_UNITS_H
#include <stddef.h>

/* v with an SI prefix (K, M, G, T, P: powers of 1000), 3 significant digits; sep between the
 * number and the prefix (" " or ""). */
void units_si(char *buf, size_t len, double v, const char *sep);
/* A time of ns nanoseconds in ns, us, ms or s, whichever keeps it under 1000: "512 ns",
 * "12.34 us", "684.9 ms", "1.21 s" (minutes and more stay in s: "4021.5 s"). */
void units_ns(char *buf, size_t len, double ns);

#endif
