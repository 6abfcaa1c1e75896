/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Streaming JSON writer: objects, arrays, strings, integers, doubles (NaN -> null). */
#ifndef TMABPF_JSON_H
#define TMABPF_JSON_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json {
	FILE *f;
	int depth;
	bool first[JSON_MAX_DEPTH]; /* no element written yet at this depth */
	bool pretty;
};

void json_init(struct json *j, FILE *f, bool pretty);
void json_obj_begin(struct json *j, const char *key);	/* key NULL inside arrays / top level */
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j, const char *key);
void json_arr_end(struct json *j);
void json_str(struct json *j, const char *key, const char *val);	/* val NULL -> null */
void json_u64(struct json *j, const char *key, uint64_t val);
void json_i64(struct json *j, const char *key, int64_t val);
void json_double(struct json *j, const char *key, double val);	/* non-finite -> null */
void json_fixed3(struct json *j, const char *key, uint64_t thousandths);	/* exact v/1000, 3 decimals */
void json_bool(struct json *j, const char *key, bool val);
void json_null(struct json *j, const char *key);
void json_end(struct json *j);	/* final newline */

#endif
