// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/text_safe.h"
#include "lib/warn.h"

/* The report keeps the first WARN_HEAD warnings and the latest WARN_TAIL: a flood of one kind early in
 * a run cannot push out the end's summaries (what was lost, what was never called).  A text already
 * kept is not kept again.  Between the two, one line says how many were left out. */
#define WARN_HEAD (WARN_MAX / 2)
#define WARN_TAIL (WARN_MAX - WARN_HEAD - 1)
static char *head[WARN_HEAD], *tail[WARN_TAIL];
static size_t nhead, ntail_seen, nwarnings_said, nskipped;
static char skipped_line[160];
static bool quiet, errors_only;

static bool kept(const char *s)
{
	size_t nt = ntail_seen < WARN_TAIL ? ntail_seen : WARN_TAIL;

	for (size_t i = 0; i < nhead; i++)
		if (!strcmp(head[i], s))
			return true;
	for (size_t i = 0; i < nt; i++)
		if (!strcmp(tail[i], s))
			return true;
	return false;
}

static void keep_line(const char *s)
{
	char *d;

	nwarnings_said++;
	if (kept(s) || !(d = strdup(s)))
		return;
	if (nhead < WARN_HEAD) {
		head[nhead++] = d;
		return;
	}
	if (ntail_seen >= WARN_TAIL) {	/* the oldest of the tail leaves */
		free(tail[ntail_seen % WARN_TAIL]);
		nskipped++;
	}
	tail[ntail_seen++ % WARN_TAIL] = d;
}

void warn_quiet(void)
{
	quiet = true;
}

void warn_errors_only(void)
{
	errors_only = true;
}

enum said { SAID_ERROR, SAID_WARNING, SAID_NOTE };

/* fmt as one line (at most max bytes), said on stderr after "tmabpf: " and prefix unless quiet (or
 * errors only and not an error); a warning is kept for the report. */
static void say(enum said kind, size_t max, const char *prefix, const char *fmt, va_list ap)
{
	char buf[2048], safe[2048];
	const char *line;

	vsnprintf(buf, max < sizeof(buf) ? max : sizeof(buf), fmt, ap);
	line = text_safe(buf, safe, sizeof(safe));	/* one line, whatever a file or an argument put in the text */
	if (!quiet && (!errors_only || kind == SAID_ERROR))
		fprintf(stderr, "tmabpf: %s%s\n", prefix, line);
	if (kind == SAID_WARNING)
		keep_line(line);
}

void warn_add(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(SAID_WARNING, 512, "", fmt, ap);
	va_end(ap);
}

size_t warn_total(void) { return nwarnings_said; }

size_t warn_count(void)
{
	return nhead + (nskipped ? 1 : 0) + (ntail_seen < WARN_TAIL ? ntail_seen : WARN_TAIL);
}

const char *warn_get(size_t i)
{
	size_t nt = ntail_seen < WARN_TAIL ? ntail_seen : WARN_TAIL;

	if (i < nhead)
		return head[i];
	i -= nhead;
	if (nskipped) {
		if (!i) {
			snprintf(skipped_line, sizeof(skipped_line),
				 "%zu more warnings not kept here (said on standard error without --quiet)", nskipped);
			return skipped_line;
		}
		i--;
	}
	return i < nt ? tail[(ntail_seen - nt + i) % WARN_TAIL] : NULL;
}

void err_print(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(SAID_ERROR, 2048, "error: ", fmt, ap);
	va_end(ap);
}

void note_print(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(SAID_NOTE, 2048, "", fmt, ap);
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
