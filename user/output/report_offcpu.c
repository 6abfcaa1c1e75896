// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The off-CPU stacks section of the reports (--offcpu-stacks): JSON rows and the text table. */
#include <stdbool.h>
#include <string.h>
#include "lib/text_fit.h"
#include "lib/text_safe.h"
#include "output/report_sections.h"

void report_offcpu_json(const struct report *r, struct json *j)
{
	const struct offcpu_result *o = r->offcpu;

	json_arr_begin(j, "offcpu_stacks");
	for (size_t i = 0; o && i < o->n; i++) {
		const struct offcpu_stack *s = &o->v[i];

		json_obj_begin(j, NULL);
		json_u64(j, "pid", s->pid);
		json_u64(j, "tid", s->tid);
		json_str(j, "comm", s->comm);
		json_str(j, "reason", offcpu_reason_name(s->reason));
		json_u64(j, "ns", s->ns);
		json_u64(j, "count", s->count);
		json_arr_begin(j, "frames");
		for (size_t f = 0; f < s->nframes; f++)
			json_str(j, NULL, s->frames[f]);
		json_arr_end(j);
		json_obj_end(j);
	}
	json_arr_end(j);
	if (!o)
		return;
	json_obj_begin(j, "offcpu");
	json_u64(j, "blocked_ns", o->blocked_ns);
	json_u64(j, "runqueue_ns", o->runqueue_ns);
	json_u64(j, "periods", o->stat[OFFCPU_STAT_PERIODS]);
	json_u64(j, "rows", o->n);
	json_u64(j, "rows_full", o->stat[OFFCPU_STAT_ROWS_FULL]);
	json_u64(j, "stack_errors", o->stat[OFFCPU_STAT_STACK_ERRORS]);
	json_u64(j, "starts_full", o->stat[OFFCPU_STAT_STARTS_FULL]);
	json_u64(j, "missed_switch_in", o->stat[OFFCPU_STAT_MISSED_IN]);
	json_u64(j, "notices_lost", o->stat[OFFCPU_STAT_NOTICES_LOST]);
	json_obj_end(j);
}

/* The first user frames (leaf first), or the kernel's when there is no user stack, in room columns:
 * wrapped at frames onto lines indented by indent. */
static void print_stack(FILE *f, const struct offcpu_stack *s, int room, int indent)
{
	size_t nk = 0, shown = 0;
	char safe[512], fit[512];
	int at = 0;

	while (nk < s->nframes && strstr(s->frames[nk], "_[k]"))
		nk++;
	for (size_t i = nk < s->nframes ? nk : 0; i < s->nframes && shown < 6; i++, shown++) {
		int w = text_elide_middle(text_safe(s->frames[i], safe, sizeof(safe)), room - 3, fit, sizeof(fit));
		const char *sep = shown ? " <- " : "";

		if (shown && at + 4 + w > room) {
			fprintf(f, "\n%*s", indent, "");
			sep = "<- ";
			at = 0;
		}
		fprintf(f, "%s%s", sep, fit);
		at += (int)strlen(sep) + w;
	}
	if (!s->nframes)
		fputs("[no stack]", f);
	fputc('\n', f);
}

void report_offcpu_text(const struct report *r, FILE *f, int top, int width)
{
	const struct offcpu_result *o = r->offcpu;
	bool below = width - 62 < 24;	/* the stack on lines of its own */

	if (!o)
		return;
	text_wrapf(f, width, 2, "off-CPU stacks (--offcpu-stacks: %llu periods, blocked %.1f ms, runqueue %.1f ms; "
		   "stacks at switch-out, leaf first, full stacks in --json/--folded):",
		   o->stat[OFFCPU_STAT_PERIODS], o->blocked_ns / 1e6, o->runqueue_ns / 1e6);
	fprintf(f, "%7s %7s %-16s %-8s %10s %7s  %s\n", "PID", "TID", "COMM", "REASON", "MS", "COUNT", "STACK");
	for (size_t i = 0; i < o->n && (int)i < top; i++) {
		const struct offcpu_stack *s = &o->v[i];
		char comm[64], fit[64];

		text_elide_middle(text_safe(s->comm, comm, sizeof(comm)), 16, fit, sizeof(fit));
		fprintf(f, "%7u %7u %s%*s %-8s %10.3f %7llu%s", s->pid, s->tid, fit, 16 - text_columns(fit), "",
			offcpu_reason_name(s->reason), s->ns / 1e6, s->count, below ? "\n    " : "  ");
		print_stack(f, s, below ? width - 4 : width - 62, below ? 4 : 62);
	}
	if ((int)o->n > top)
		fprintf(f, "  ... %zu more stacks (see --json)\n", o->n - (size_t)top);
}
