// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Names made safe for terminals and line-oriented text.  See text_safe.h. */
#include "lib/text_safe.h"

int utf8_seq_len(const unsigned char *p)
{
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		return (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (p[0] >= 0xe0 && p[0] <= 0xef) {
		if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
			return 0;
		if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0))
			return 0;	/* overlong, surrogate */
		return 3;
	}
	if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80)
			return 0;
		if ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
			return 0;	/* overlong, > U+10FFFF */
		return 4;
	}
	return 0;
}

int text_safe_char(const unsigned char *p, bool *replace)
{
	int n = utf8_seq_len(p);

	*replace = !n || p[0] < 0x20 || p[0] == 0x7f || (n == 2 && p[0] == 0xc2 && p[1] < 0xa0);
	return n ? n : 1;
}

static bool is_safe(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		bool replace;

		p += text_safe_char(p, &replace);
		if (replace)
			return false;
	}
	return true;
}

const char *text_safe(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	if (!s || is_safe(s))
		return s;
	if (!len)
		return "";
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		bool replace;
		int n = text_safe_char(p, &replace), w = replace ? 1 : n;

		if (o + w + 1 > len)
			break;
		for (int i = 0; i < w; i++)
			buf[o++] = replace ? '?' : (char)p[i];
		p += n;
	}
	buf[o] = 0;
	return buf;
}

void text_safe_fputs(const char *s, FILE *f)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		bool replace;
		int n = text_safe_char(p, &replace);

		if (replace)
			fputc('?', f);
		else
			fwrite(p, 1, n, f);
		p += n;
	}
}

size_t text_safe_xml_fputs(const char *s, size_t max, FILE *f)
{
	size_t chars = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; chars++) {
		bool replace;
		int n = text_safe_char(p, &replace);

		if (f && chars < max) {
			if (replace)
				fputc('?', f);
			else if (*p == '<')
				fputs("&lt;", f);
			else if (*p == '>')
				fputs("&gt;", f);
			else if (*p == '&')
				fputs("&amp;", f);
			else if (*p == '"')
				fputs("&quot;", f);
			else
				fwrite(p, 1, n, f);
		}
		p += n;
	}
	return chars;
}
