// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Streaming JSON writer. Keeps only a comma-state stack; never buffers the document. */
#include <math.h>
#include "lib/json.h"
#include "lib/text_safe.h"

void json_init(struct json *j, FILE *f, bool pretty)
{
	j->f = f;
	j->depth = 0;
	j->first[0] = true;
	j->pretty = pretty;
}

static void indent(struct json *j)
{
	if (!j->pretty)
		return;
	fputc('\n', j->f);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

/* A JSON string, always valid UTF-8: a byte that is not part of valid UTF-8 becomes U+FFFD
 * (written \ufffd); control characters (C0, DEL and the C1 range) are written \u00XX, so the
 * file shown on a terminal carries no escape sequence. */
static void put_escaped(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		bool control;
		int n = text_safe_char(p, &control);

		if (*p == '"')
			fputs("\\\"", f);
		else if (*p == '\\')
			fputs("\\\\", f);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\r')
			fputs("\\r", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (control && !utf8_seq_len(p))
			fputs("\\ufffd", f);
		else if (control)
			fprintf(f, "\\u%04x", n == 2 ? p[1] : *p);
		else
			fwrite(p, 1, n, f);
		p += n;
	}
	fputc('"', f);
}

/* Separator, indentation and "key": for the next element. */
static void element(struct json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
	if (j->depth > 0)
		indent(j);
	if (key) {
		put_escaped(j->f, key);
		fputs(j->pretty ? ": " : ":", j->f);
	}
}

static void open_container(struct json *j, const char *key, char c)
{
	element(j, key);
	fputc(c, j->f);
	if (j->depth + 1 < JSON_MAX_DEPTH)
		j->depth++;
	j->first[j->depth] = true;
}

static void close_container(struct json *j, char c)
{
	bool empty = j->first[j->depth];

	if (j->depth > 0)
		j->depth--;
	if (!empty)
		indent(j);
	fputc(c, j->f);
}

void json_obj_begin(struct json *j, const char *key) { open_container(j, key, '{'); }
void json_obj_end(struct json *j) { close_container(j, '}'); }
void json_arr_begin(struct json *j, const char *key) { open_container(j, key, '['); }
void json_arr_end(struct json *j) { close_container(j, ']'); }

void json_str(struct json *j, const char *key, const char *val)
{
	element(j, key);
	if (val)
		put_escaped(j->f, val);
	else
		fputs("null", j->f);
}

void json_u64(struct json *j, const char *key, uint64_t val)
{
	element(j, key);
	fprintf(j->f, "%llu", (unsigned long long)val);
}

void json_i64(struct json *j, const char *key, int64_t val)
{
	element(j, key);
	fprintf(j->f, "%lld", (long long)val);
}

void json_double(struct json *j, const char *key, double val)
{
	element(j, key);
	if (isfinite(val))
		fprintf(j->f, "%.17g", val);
	else
		fputs("null", j->f);
}

void json_fixed3(struct json *j, const char *key, uint64_t thousandths)
{
	element(j, key);
	fprintf(j->f, "%llu.%03llu", (unsigned long long)(thousandths / 1000), (unsigned long long)(thousandths % 1000));
}

void json_bool(struct json *j, const char *key, bool val)
{
	element(j, key);
	fputs(val ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key)
{
	element(j, key);
	fputs("null", j->f);
}

void json_end(struct json *j)
{
	fputc('\n', j->f);
	fflush(j->f);
}
