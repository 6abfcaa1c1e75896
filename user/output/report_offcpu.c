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

/* The columns before STACK: at a short width TID and COUNT go first, COMM is elided down to 8 columns before;
 * STACK follows them on the line when 24 columns are left, else comes under them. */
static const struct text_col offcpu_cols[] = {
	{ .name = "PID", .prio = 1 }, { .name = "TID", .prio = 3 }, { .name = "COMM", .prio = 1, .left = true, .min = 8 },
	{ .name = "REASON", .prio = 1, .left = true }, { .name = "MS", .prio = 1 }, { .name = "COUNT", .prio = 2 },
};
#define OFFCPU_STACK_MIN 24

void report_offcpu_text(const struct report *r, FILE *f, int top, int width, struct text_hidden *hid)
{
	const struct offcpu_result *o = r->offcpu;
	char pid[16], tid[16], comm[64], ms[32], count[24];
	struct text_table t;
	int used;
	bool below;

	if (!o)
		return;
	text_wrapf(f, width, 2, "off-CPU stacks (--offcpu-stacks: %llu periods, blocked %.1f ms, runqueue %.1f ms; "
		   "stacks at switch-out, leaf first, full stacks in --json/--folded):",
		   o->stat[OFFCPU_STAT_PERIODS], o->blocked_ns / 1e6, o->runqueue_ns / 1e6);
	text_table_init(&t, offcpu_cols, 6);
	for (size_t i = 0; i < o->n && (int)i < top; i++) {
		const struct offcpu_stack *s = &o->v[i];

		snprintf(pid, sizeof(pid), "%u", s->pid);
		snprintf(tid, sizeof(tid), "%u", s->tid);
		snprintf(ms, sizeof(ms), "%.3f", s->ns / 1e6);
		snprintf(count, sizeof(count), "%llu", s->count);
		if (text_table_add(&t, (const char *[]){ pid, tid, text_safe(s->comm, comm, sizeof(comm)),
							  offcpu_reason_name(s->reason), ms, count }))
			break;
	}
	/* the stack on the line when the table leaves it room, else on lines of its own */
	below = !text_table_fit(&t, width - 2 - OFFCPU_STACK_MIN, NULL) ||
		text_table_width(&t) + 2 + OFFCPU_STACK_MIN > width;
	if (!text_table_fit(&t, below ? width : width - 2 - OFFCPU_STACK_MIN, hid)) {
		text_table_print_needs(&t, f, width);
		text_table_free(&t);
		return;
	}
	used = text_table_width(&t);
	text_table_print_cells(&t, TEXT_TABLE_HEADER, f);
	fputs(below ? "\n    STACK\n" : "  STACK\n", f);
	for (size_t i = 0; i < t.nrows; i++) {
		text_table_print_cells(&t, i, f);
		fputs(below ? "\n    " : "  ", f);
		print_stack(f, &o->v[i], below ? width - 4 : width - used - 2, below ? 4 : used + 2);
	}
	if ((int)o->n > top)
		fprintf(f, "  ... %zu more stacks (see --json)\n", o->n - (size_t)top);
	text_table_free(&t);
}
