// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Text that fits a width: names elided in the middle, prose wrapped (text_fit.h). */
#include <stdarg.h>
#include <stdbool.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <wchar.h>
#include "lib/text_fit.h"

#define ELLIPSIS "\xe2\x80\xa6"	/* U+2026, one column */

int text_width(FILE *f, int opt)
{
	struct winsize ws;

	if (opt > 0)
		return opt;
	if (isatty(fileno(f)) && ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col)
		return ws.ws_col;
	return 80;
}

/* The C.UTF-8 LC_CTYPE that wcwidth reads, made once; NULL (said once) when glibc has none. */
static locale_t utf8_ctype(void)
{
	static locale_t loc;
	static bool tried;

	if (!tried) {
		tried = true;
		loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
		if (!loc)
			fprintf(stderr, "tmabpf: no C.UTF-8 locale (%m): wide characters counted as one column each; "
					"install libc-bin's C.UTF-8\n");
	}
	return loc;
}

/* The code point of the UTF-8 character at s and its bytes in *len; -1 (one byte) when malformed. */
static long utf8_decode(const char *s, size_t *len)
{
	const unsigned char *u = (const unsigned char *)s;
	int n = u[0] < 0x80 ? 1 : u[0] >= 0xc2 && u[0] < 0xe0 ? 2 : u[0] >= 0xe0 && u[0] < 0xf0 ? 3 :
			 u[0] >= 0xf0 && u[0] < 0xf5 ? 4 : 0;
	long cp = n == 1 ? u[0] : n == 2 ? u[0] & 0x1f : n == 3 ? u[0] & 0x0f : u[0] & 0x07;

	for (int i = 1; i < n; i++) {
		if ((u[i] & 0xc0) != 0x80)
			n = 0;
		else
			cp = cp << 6 | (u[i] & 0x3f);
		if (!n)
			break;
	}
	*len = n ? (size_t)n : 1;
	return n ? cp : -1;
}

int text_char(const char *s, size_t *len)
{
	long cp = utf8_decode(s, len);
	locale_t loc = cp > 0x7e ? utf8_ctype() : (locale_t)0, old;
	int w;

	if (cp < 0x7f)
		return 1;	/* ASCII, or a stray byte (shown as one replacement column) */
	if (!loc)
		return 1;
	old = uselocale(loc);
	w = wcwidth((wchar_t)cp);
	uselocale(old);
	return w < 0 ? 1 : w;
}

/* Columns of the n bytes at s (whole characters). */
static int span_columns(const char *s, size_t n)
{
	int cols = 0;

	for (size_t i = 0, len; i < n && s[i]; i += len)
		cols += text_char(s + i, &len);
	return cols;
}

int text_columns(const char *s)
{
	return span_columns(s, strlen(s));
}

/* Bytes of the longest head of s within cols columns. */
static size_t head_bytes(const char *s, int cols)
{
	size_t i = 0, len;

	for (int c = 0; s[i]; i += len) {
		int w = text_char(s + i, &len);

		if (c + w > cols)
			break;
		c += w;
	}
	return i;
}

const char *text_tail(const char *s, int cols)
{
	int left = text_columns(s);
	size_t len;

	while (*s && left > cols) {
		left -= text_char(s, &len);
		s += len;
	}
	while (*s && !text_char(s, &len))	/* never a combining mark without its base */
		s += len;
	return s;
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
	t = text_tail(s, tail);
	tb = strlen(t);
	snprintf(out, outlen, "%.*s%s%.*s", (int)hb, s, ELLIPSIS, (int)tb, t);
	return text_columns(out);
}

/* Columns of the field at s: up to two spaces in a row (or the end). */
static int field_columns(const char *s)
{
	const char *e = strstr(s, "  ");

	return span_columns(s, e ? (size_t)(e - s) : strlen(s));
}

/* Bytes of the longest head of the n-byte word that ends in a comma and fits room columns; 0 when none
 * does. */
static int comma_cut(const char *word, size_t n, int room)
{
	int cut = 0, cols = 0;

	for (size_t i = 0, len; i < n && cols <= room; i += len) {
		cols += text_char(word + i, &len);
		if (word[i] == ',' && cols <= room)
			cut = i + 1;
	}
	return cut;
}

/* The n-byte word (wider than width) elided in the middle to width columns on f, however long it is;
 * returns the columns written. */
static int put_elided(FILE *f, const char *word, size_t n, int width)
{
	char *buf = malloc(2 * n + 5);	/* the word, then its elision: at most its bytes and a "…" */
	int w;

	if (!buf) {
		fprintf(stderr, "tmabpf: out of memory: a word of %zu bytes shown as \"%s\"\n", n, ELLIPSIS);
		fputs(ELLIPSIS, f);
		return 1;
	}
	memcpy(buf, word, n);
	buf[n] = 0;
	w = text_elide_middle(buf, width, buf + n + 1, n + 4);
	fputs(buf + n + 1, f);
	free(buf);
	return w;
}

void text_wrap(FILE *f, int width, int indent, const char *s)
{
	int at = 0, start = 0;	/* columns on the current line; where its text starts */

	if (width < indent + 8)
		width = indent + 8;
	while (*s) {
		size_t sp = strspn(s, " "), n = strcspn(s + sp, " ");
		const char *word = s + sp;	/* n bytes, however many */
		int w = span_columns(word, n), fw;

		if (w > width - indent && memchr(word, ',', n)) {	/* wider than any line: broken after a comma */
			int k = comma_cut(word, n, width - at - (at > start ? (int)sp : 0));

			if (k > 0) {
				fprintf(f, "%*s%.*s", at > start ? (int)sp : 0, "", k, word);
				at += (at > start ? (int)sp : 0) + span_columns(word, (size_t)k);
				s = word + k;
				continue;
			}
			if (at > start) {
				fprintf(f, "\n%*s", indent, "");
				at = start = indent;
				s = word;
				continue;
			}
		}
		/* a new line before a word that does not fit, or before a field ("a: b c", two spaces before it)
		 * that fits a line of its own but not what is left of this one */
		fw = sp >= 2 || at == 0 ? field_columns(word) : w;
		if (at > start && (at + (int)sp + w > width || (sp >= 2 && at + (int)sp + fw > width &&
								  indent + fw <= width))) {
			fprintf(f, "\n%*s", indent, "");
			at = start = indent;
			sp = 0;
		}
		fprintf(f, "%*s", (int)sp, "");
		at += (int)sp;
		if (w > width - at)	/* wider than a whole line: its head and its tail around one "…" */
			w = put_elided(f, word, n, width - at);
		else
			fwrite(word, 1, n, f);
		at += w;
		s = word + n;
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
