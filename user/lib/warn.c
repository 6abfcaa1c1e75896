// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/warn.h"

static char *warnings[WARN_MAX];
static size_t nwarnings;
static bool quiet;

void warn_quiet(void)
{
	quiet = true;
}

/* One line, whatever a file or an argument put in the text: control bytes become '?'. */
static void one_line(char *s)
{
	for (unsigned char *p = (unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			*p = '?';
}

/* fmt as one line (at most max bytes), said on stderr after "tmabpf: " and prefix unless quiet; kept
 * for the report when keep. */
static void say(bool keep, size_t max, const char *prefix, const char *fmt, va_list ap)
{
	char buf[2048];

	vsnprintf(buf, max < sizeof(buf) ? max : sizeof(buf), fmt, ap);
	one_line(buf);
	if (!quiet)
		fprintf(stderr, "tmabpf: %s%s\n", prefix, buf);
	if (keep && nwarnings < WARN_MAX)
		warnings[nwarnings++] = strdup(buf);
}

void warn_add(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(true, 512, "", fmt, ap);
	va_end(ap);
}

size_t warn_count(void) { return nwarnings; }
const char *warn_get(size_t i) { return i < nwarnings ? warnings[i] : NULL; }

void err_print(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(false, 2048, "error: ", fmt, ap);
	va_end(ap);
}

void err_set(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}
