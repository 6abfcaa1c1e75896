// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "warn.h"

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

void warn_add(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	one_line(buf);
	if (!quiet)
		fprintf(stderr, "tmabpf: %s\n", buf);
	if (nwarnings < WARN_MAX)
		warnings[nwarnings++] = strdup(buf);
}

size_t warn_count(void) { return nwarnings; }
const char *warn_get(size_t i) { return i < nwarnings ? warnings[i] : NULL; }

void err_print(const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	one_line(buf);
	if (!quiet)
		fprintf(stderr, "tmabpf: error: %s\n", buf);
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
