// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* libFuzzer target: -e event-spec parser (lists, pmu/terms/, raw, names) and
 * the metric-expression evaluator on the same bytes. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "pmu/events.h"
#include "pmu/cpu_detect.h"
#include "tma/tma_keys.h"
#include "tma/tma_expr.h"

static int resolve(struct tma_expr_ctx *x, enum tma_expr_kind k, const char *id, struct tma_expr_val *out)
{
	memset(out, 0, sizeof(*out));
	out->v = x->planning && k == TMA_EXPR_ID ? NAN : (double)(strlen(id) % 7);
	tma_ids_add(&out->ids, (int)(strlen(id) % TMA_EXPR_MAX_IDS));
	return strlen(id) % 11 ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct event_list l;
	static const struct tma_cpu *cpu;
	static int init;
	char buf[1024], err[512], key[TMA_KEY_LEN];

	if (!init) {
		/* libpfm4 names need a CPU; the built-in cpu/ formats too */
		cpu = tma_cpu_by_name("skylakex");
		init = 1;
	}
	if (size >= sizeof(buf))
		size = sizeof(buf) - 1;
	memcpy(buf, data, size);
	buf[size] = 0;
	l.n = 0;
	events_parse_list(buf, cpu, &l, err, sizeof(err));
	tma_event_key(buf, key, sizeof(key));
	struct tma_expr_ctx x;
	struct tma_expr_val v;
	memset(&x, 0, sizeof(x));
	x.resolve = resolve;
	x.planning = size & 1;
	tma_expr_eval(&x, buf, &v, err, sizeof(err));
	return 0;
}
