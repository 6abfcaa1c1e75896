/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Zero evidence, said at the end of a run: a probed library that no target
 * process mapped (named with what they mapped instead, and a glob to try
 * there), probed functions that were never called, and deferred --uprobe
 * NAME:GLOB specs whose library never appeared.  One line each; the JSON
 * lists them (uprobe_lib.never_mapped, uprobe_func.never_called).
 */
#ifndef TMABPF_UPROBE_EVIDENCE_H
#define TMABPF_UPROBE_EVIDENCE_H
#include "sym/maps_watch.h"
#include "sym/uprobe_targets.h"

/* calls: per function id, the run's total.  w: the targets' mapped files, NULL when unknown
 * (system-wide: never-mapped is then not judged). */
void uprobe_evidence_report(struct uprobe_set *s, const unsigned long long *calls, const struct maps_watch *w);

#endif
