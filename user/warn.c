// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "warn.h"

static char *warnings[WARN_MAX];
static size_t nwarnings;

void warn_add(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "tmabpf: %s\n", buf);
	if (nwarnings < WARN_MAX)
		warnings[nwarnings++] = strdup(buf);
}

size_t warn_count(void) { return nwarnings; }
const char *warn_get(size_t i) { return i < nwarnings ? warnings[i] : NULL; }

void die_msg(const char *fmt, ...)
{
	va_list ap;

	fputs("tmabpf: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
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
