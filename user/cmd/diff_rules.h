/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Budgets of 'tmabpf diff --fail-on': comma-separated rules
 *
 *   [SCOPE[ '[' GLOB ']' ] '.'] METRIC OP [+|-]NUMBER [UNIT]
 *
 *   SCOPE   run, process, thread, function or iteration (default: every row that has METRIC)
 *   GLOB    shell pattern on the row's name (its last component: comm, thread
 *           comm or symbol)
 *   METRIC  a report field (oncpu_ns, offcpu_ns, offcpu_blocked_ns, wall_ns,
 *           calls, ...), an event name (page-faults, cycles, ...) or a TMA node
 *           (tma_backend_bound, ...); iteration (--per-call): p50_ns, p90_ns, p99_ns,
 *           max_ns, per_s (iterations, e.g. tokens, a second), iterations,
 *           calls[LIB:FUNC] (a probed function's mean calls per iteration)
 *   OP      >, >=, <, <=: the budget breaks when NEW - BASE compares so
 *   UNIT    %  relative to BASE (rows whose BASE is 0 are not judged);
 *           pp percentage points, for TMA nodes (their values are percent);
 *           none: absolute, in the metric's unit
 *
 * e.g. 'tma_backend_bound>+5pp,wall_ns>+5%,thread[gt-*].oncpu_ns>+10%',
 *      'iteration.p99_ns>+5%,iteration.calls[libcuda.so.1:cuLaunchKernel]>+0,iteration.per_s<-5%'
 */
#ifndef TMABPF_DIFF_RULES_H
#define TMABPF_DIFF_RULES_H
#include <stdbool.h>
#include <stddef.h>

enum drow_kind { DROW_RUN, DROW_PROCESS, DROW_THREAD, DROW_FUNCTION, DROW_ITERATION, DROW_KINDS };

enum rule_unit { UNIT_ABS, UNIT_PCT, UNIT_PP };

struct diff_rule {
	char text[160];
	int scope;		/* enum drow_kind, or -1 for any */
	char glob[96];		/* "" for any */
	char metric[96];
	char op;		/* '>' or '<' */
	bool or_equal;
	double value;		/* signed */
	enum rule_unit unit;
};

/* Parse spec into *rules (malloc'd); 0, or -EINVAL with one line in err. */
int diff_rules_parse(const char *spec, struct diff_rule **rules, int *n, char *err, size_t errlen);
/* The change the rule judges (absolute, % or pp); false when it cannot judge
 * it (relative to a base of 0). */
bool diff_rule_delta(const struct diff_rule *r, double base, double now, double *delta);
/* Does delta break the rule? */
bool diff_rule_broken(const struct diff_rule *r, double delta);
const char *diff_kind_name(enum drow_kind k);

#endif
