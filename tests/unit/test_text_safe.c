// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * text_safe (names shown on terminals and in text outputs) and the JSON writer's strings: no
 * control byte and no invalid UTF-8 gets through either, valid UTF-8 is kept.
 */
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "lib/json.h"
#include "lib/text_safe.h"

#define HOSTILE "\x1b]52;c;cm0gLXJmIC8K\x07" "x\x1b[2J\ny\t\x7f\xc2\x9b" "z\xff\xc3"

static const char *safe(const char *s)
{
	static char buf[256];

	return text_safe(s, buf, sizeof(buf));
}

static char *fputs_safe(const char *s)
{
	static char buf[256];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	text_safe_fputs(s, f);
	fclose(f);
	return buf;
}

static char *xml_of(const char *s, size_t max, size_t *chars)
{
	static char buf[512];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	*chars = text_safe_xml_fputs(s, max, f);
	fclose(f);
	return buf;
}

static char *json_of(const char *s)
{
	static char buf[512];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	struct json j;

	json_init(&j, f, false);
	json_str(&j, NULL, s);
	fclose(f);
	return buf;
}

int main(void)
{
	const char *plain = "llama-cli", *utf8 = "caf\xc3\xa9 \xe2\x82\xac\xf0\x9f\x98\x80";
	char small[6];
	size_t chars;

	check(safe(plain) == plain, "a plain name is returned as is, not copied");
	check(safe(utf8) == utf8, "valid UTF-8 (2, 3, 4 bytes) is kept");
	check(safe(NULL) == NULL, "NULL stays NULL");
	check(!strcmp(safe(HOSTILE), "?]52;c;cm0gLXJmIC8K?x?[2J?y???z??"),
	      "OSC 52, CSI 2J, newline, tab, DEL, C1 CSI, invalid and cut UTF-8 become '?' (%s)", safe(HOSTILE));
	check(!strcmp(fputs_safe(HOSTILE), safe(HOSTILE)), "text_safe_fputs writes what text_safe returns");
	check(!strcmp(safe("\xc0\xaf\xed\xa0\x80"), "?????"), "overlong and surrogate encodings are replaced");
	check(!strcmp(text_safe("\x1b\xc3\xa9\xc3\xa9\xc3\xa9", small, sizeof(small)), "?\xc3\xa9\xc3\xa9"),
	      "a cut copy ends at a character boundary");
	check(!strcmp(json_of(HOSTILE),
		      "\"\\u001b]52;c;cm0gLXJmIC8K\\u0007x\\u001b[2J\\ny\\t\\u007f\\u009bz\\ufffd\\ufffd\""),
	      "JSON: controls as \\u00XX, invalid UTF-8 as \\ufffd (%s)", json_of(HOSTILE));
	check(!strcmp(json_of(utf8), "\"caf\xc3\xa9 \xe2\x82\xac\xf0\x9f\x98\x80\""), "JSON keeps valid UTF-8");
	check(!strcmp(json_of("a\"b\\c"), "\"a\\\"b\\\\c\""), "JSON escapes quote and backslash");
	check(!strcmp(xml_of("<a href=\"x\">&\x1b\xc3\xa9", SIZE_MAX, &chars), "&lt;a href=&quot;x&quot;&gt;&amp;?\xc3\xa9") &&
	      chars == 15, "XML: special characters escaped, controls '?', UTF-8 kept, characters counted");
	check(!strcmp(xml_of("\xc3\xa9\xc3\xa9<b", 2, &chars), "\xc3\xa9\xc3\xa9") && chars == 4,
	      "XML: at most max characters written, whole ones; all counted");
	check(text_safe_xml_fputs("abc", SIZE_MAX, NULL) == 3, "XML: no file: counted only");
	return check_exit();
}
