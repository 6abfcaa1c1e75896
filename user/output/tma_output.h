/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* TMA results as text and JSON: the tree, the bottleneck path, null reasons. */
#ifndef TMABPF_TMA_OUTPUT_H
#define TMABPF_TMA_OUTPUT_H
#include <stddef.h>
#include <stdio.h>
#include "lib/json.h"
#include "tma/tma.h"

/* {"metric": percent or null, ...} under key (NULL: an array element). */
void tma_result_json(const struct tma_result *r, struct json *j, const char *key);
/* {"metric": "why it is null", ...} for the null nodes; nothing when none is null. */
void tma_result_json_why(const struct tma_result *r, struct json *j, const char *key);
/* "Backend_Bound 69.0% › Memory_Bound 56.6% › ...": the largest node at each
 * level; its length, -ENOENT when no node has a value, -ENOSPC. */
int tma_bottleneck_path(const struct tma_result *r, char *buf, size_t len);
/* The tree, children under their parent, n/a with the reason, multiplexing notes. */
void tma_result_print(const struct tma_result *r, FILE *f, int indent);

#endif
