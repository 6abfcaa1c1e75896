// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Text that fits a width: names elided in the middle, prose wrapped (text_fit.h). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "lib/text_fit.h"

#define ELLIPSIS "\xe2\x80\xa6"	/* U+2026, one column */

static bool continuation(char c)
{
	return ((unsigned char)c & 0xc0) == 0x80;
}

int text_width(FILE *f, int opt)
{
	struct winsize ws;

	if (opt > 0)
		return opt;
	if (isatty(fileno(f)) && ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col)
		return ws.ws_col;
	return 80;
}

int text_columns(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += !continuation(*s);
	return n;
}

/* Bytes of the first cols columns of s. */
static size_t head_bytes(const char *s, int cols)
{
	size_t i = 0;

	for (int c = 0; s[i] && c <= cols; i++)
		if (!continuation(s[i]) && c++ == cols)
			break;
	return i;
}

int text_elide_middle(const char *s, int width, char *out, size_t outlen)
{
	int cols = text_columns(s), head, tail;
	size_t hb, tb;
	const char *t;

	if (!outlen)
		return 0;
	if (cols <= width) {
		snprintf(out, outlen, "%s", s);
		return text_columns(out);
	}
	if (width <= 0) {
		out[0] = 0;
		return 0;
	}
	if (width == 1) {
		snprintf(out, outlen, "%s", ELLIPSIS);
		return 1;
	}
	head = (width - 1 + 1) / 2;	/* the head gets the odd column: "sgemm_ker…_HASWELL" */
	tail = width - 1 - head;
	hb = head_bytes(s, head);
	t = s + head_bytes(s, cols - tail);
	tb = strlen(t);
	snprintf(out, outlen, "%.*s%s%.*s", (int)hb, s, ELLIPSIS, (int)tb, t);
	return text_columns(out);
}

/* Columns of the field at s: up to two spaces in a row (or the end). */
static int field_columns(const char *s)
{
	const char *e = strstr(s, "  ");
	int n = 0;

	for (; *s && (!e || s < e); s++)
		n += !continuation(*s);
	return n;
}

/* Bytes of the longest head of word that ends in a comma and fits room columns; 0 when none does. */
static int comma_cut(const char *word, int room)
{
	int cut = 0, cols = 0;

	for (int i = 0; word[i] && cols <= room; i++) {
		cols += !continuation(word[i]);
		if (word[i] == ',' && cols <= room)
			cut = i + 1;
	}
	return cut;
}

void text_wrap(FILE *f, int width, int indent, const char *s)
{
	int at = 0, start = 0;	/* columns on the current line; where its text starts */

	if (width < indent + 8)
		width = indent + 8;
	while (*s) {
		size_t sp = strspn(s, " "), n = strcspn(s + sp, " ");
		char word[1024], fit[1024];
		int w, fw;

		snprintf(word, sizeof(word), "%.*s", (int)n, s + sp);
		w = text_columns(word);
		if (w > width - indent && strchr(word, ',')) {	/* wider than any line: broken after a comma */
			int k = comma_cut(word, width - at - (at > start ? (int)sp : 0));

			if (k > 0) {
				fprintf(f, "%*s%.*s", at > start ? (int)sp : 0, "", k, word);
				at += (at > start ? (int)sp : 0) + text_columns(word) - text_columns(word + k);
				s += sp + (size_t)k;
				continue;
			}
			if (at > start) {
				fprintf(f, "\n%*s", indent, "");
				at = start = indent;
				s += sp;
				continue;
			}
		}
		/* a new line before a word that does not fit, or before a field ("a: b c", two spaces before it)
		 * that fits a line of its own but not what is left of this one */
		fw = sp >= 2 || at == 0 ? field_columns(s + sp) : w;
		if (at > start && (at + (int)sp + w > width || (sp >= 2 && at + (int)sp + fw > width &&
								  indent + fw <= width))) {
			fprintf(f, "\n%*s", indent, "");
			at = start = indent;
			sp = 0;
		}
		fprintf(f, "%*s", (int)sp, "");
		at += (int)sp;
		if (w > width - at)	/* wider than a whole line */
			w = text_elide_middle(word, width - at, fit, sizeof(fit));
		else
			snprintf(fit, sizeof(fit), "%s", word);
		fputs(fit, f);
		at += w;
		s += strspn(s, " ") + n;
	}
	fputc('\n', f);
}

void text_wrap_lines(FILE *f, int width, const char *text)
{
	while (*text) {
		size_t n = strcspn(text, "\n");
		char *line = strndup(text, n);

		if (line && text_columns(line) > width)
			text_wrap(f, width, (int)strspn(line, " ") + 4, line);
		else
			fprintf(f, "%.*s\n", (int)n, text);
		free(line);
		text += n + (text[n] == '\n');
	}
}

void text_wrapf(FILE *f, int width, int indent, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	text_wrap(f, width, indent, s);
	free(s);
}
