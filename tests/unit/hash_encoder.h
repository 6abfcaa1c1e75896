/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A TMA plan encoder for the engine's own unit tests, which link without pmu/
 * and libpfm4: each recipe key becomes a raw event whose config is a hash of
 * the key (distinct keys, distinct configs), so that planning, grouping and
 * matching counts by encoding (-e rXXXX) are tested without real encodings
 * (those are tests/unit/test_dryrun.c's, against the recipes and libpfm4). */
#ifndef TMABPF_TEST_HASH_ENCODER_H
#define TMABPF_TEST_HASH_ENCODER_H
#include <string.h>
#include "tma/tma.h"

static int hash_encoder(const struct tma_cpu *c, const char *key, struct perf_event_attr *attr, char *err,
			size_t errlen)
{
	unsigned long long h = 1469598103934665603ULL;

	for (const char *s = key; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_RAW;
	attr->config = h & 0xffffffffffffULL;
	return 0;
}

#endif
