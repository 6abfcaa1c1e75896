// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The view model's cells: column widths, fitting names, one cell as text, and
 * the TMA level-1 bar and dominant level-2 node of a row.  See view_model.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/cxx_name.h"
#include "lib/text_fit.h"
#include "lib/text_safe.h"
#include "lib/units.h"
#include "view/view_model.h"

/* ---------- cells ---------- */

int view_col_width(const struct vm_col *c, bool compact)
{
	int w = compact ? c->cwidth : c->width;
	int n = (int)strlen(c->name);

	return compact && n > w && c->fmt != VM_F_COUNTER ? n : w;
}

int view_stretch_width(const struct vm_table *t, int c, bool compact, int spare)
{
	int base = view_col_width(&t->col[c], compact), longest = base;

	if (!t->col[c].stretch || spare <= 0)
		return base;
	for (size_t i = 0; i < t->nrows; i++) {
		const char *s = t->rows[i].s[t->col[c].arg];
		int n = s ? text_columns(s) : 0;

		if (n > longest)
			longest = n;
	}
	return longest < base + spare ? longest : base + spare;
}

void view_fit_text(const struct vm_col *col, const char *text, int width, char *buf, size_t len)
{
	char fit[1024];
	int cols, pad;
	size_t n;

	if (col->stretch && strpbrk(text, "(<:")) {	/* C++: its own steps (cxx_name.h) */
		cols = cxx_name_shorten(text, width, fit, sizeof(fit));
	} else if (col->stretch || col->fmt == VM_F_STR) {	/* "sgemm_ker…_HASWELL" */
		cols = text_elide_middle(text, width, fit, sizeof(fit));
	} else {
		snprintf(fit, sizeof(fit), "%s", text);	/* a number is never cut: wider, not wrong */
		cols = text_columns(fit);
	}
	pad = width > cols ? width - cols : 0;
	n = strlen(fit);
	if (n + pad + 1 > len)
		pad = len > n + 1 ? (int)(len - n - 1) : 0;
	snprintf(buf, len, "%*s%s%*s", col->left ? 0 : pad, "", fit, col->left ? pad : 0, "");
}

int view_fit_columns(const struct vm_table *t, int width, bool compact, bool *shown)
{
	int used = -1;

	for (int c = 0; c < t->ncols; c++) {
		shown[c] = true;
		used += view_col_width(&t->col[c], compact) + 1;
	}
	while (used > width) {
		int drop = -1;

		for (int c = t->ncols - 1; c >= 0; c--)
			if (shown[c] && t->col[c].prio > 1 && (drop < 0 || t->col[c].prio > t->col[drop].prio))
				drop = c;
		if (drop < 0)
			break;	/* only the essentials left: the back end cuts the line */
		shown[drop] = false;
		used -= view_col_width(&t->col[drop], compact) + 1;
	}
	return used;
}

/* Short numbers for the live view: 1234 -> "1234", 12345 -> "12.3K", 1.2e9 -> "1.20G". */
static void human(double x, char *buf, size_t len)
{
	static const char suf[] = "KMGTPE";
	int i = -1;

	if (fabs(x) < 10000) {
		snprintf(buf, len, "%.0f", x);
		return;
	}
	while (fabs(x) >= 1000 && i < 5) {
		x /= 1000;
		i++;
	}
	snprintf(buf, len, fabs(x) < 10 ? "%.2f%c" : fabs(x) < 100 ? "%.1f%c" : "%.0f%c", x, suf[i]);
}

void view_format_cell(const struct vm_table *t, const struct vm_row *row, int c, bool compact, char *buf,
		      size_t len)
{
	const struct vm_col *col = &t->col[c];
	double x = row->v[c];
	char num[32];

	if (!len)
		return;
	switch (col->fmt) {
	case VM_F_STR: {	/* names from other users: no control byte reaches a terminal */
		const char *v = row->s[col->arg] ? row->s[col->arg] : "";

		if (text_safe(v, buf, len) == v)
			snprintf(buf, len, "%s", v);
		return;
	}
	case VM_F_CHAR:
		snprintf(buf, len, "%c", row->src ? row->src : '-');
		return;
	case VM_F_BAR: {
		int w = compact ? col->cwidth : col->width;
		char bar[128];

		vm_tma_bar(&row->tma, w < (int)sizeof(bar) ? w : (int)sizeof(bar) - 1, bar);
		snprintf(buf, len, "%s", bar);
		return;
	}
	case VM_F_NODE:
		snprintf(buf, len, "%s", row->tma.ok && row->tma.l2[0] ? row->tma.l2 : "-");
		return;
	case VM_F_STATE: {
		int w = compact ? col->cwidth : col->width;
		char bar[128];

		vm_state_bar(row->v[col->arg], row->v[col->arg + 2], row->v[col->arg + 1],
			     w < (int)sizeof(bar) ? w : (int)sizeof(bar) - 1, bar);
		snprintf(buf, len, "%s", bar);
		return;
	}
	default:
		break;
	}
	if (isnan(x)) {
		snprintf(buf, len, "-");
		return;
	}
	switch (col->fmt) {
	case VM_F_ID:
		if (x < 0)
			snprintf(buf, len, "-");
		else
			snprintf(buf, len, "%.0f", x);
		break;
	case VM_F_PCT:
		snprintf(buf, len, "%.1f", x);
		break;
	case VM_F_MS:
		snprintf(buf, len, "%.2f", x);
		break;
	case VM_F_RATIO:
		snprintf(buf, len, "%.3f", x);
		break;
	case VM_F_HEX:
		snprintf(buf, len, "0x%llx", (unsigned long long)x);
		break;
	case VM_F_COUNTER: {
		bool mux = row->mux & (1u << col->arg);

		if (compact)
			human(x, num, sizeof(num));
		else if (col->ns)
			units_ns(num, sizeof(num), x);
		else if (x >= 1000)
			units_si(num, sizeof(num), x, " ");
		else
			snprintf(num, sizeof(num), "%.0f", x);
		snprintf(buf, len, "%s%s", num, mux ? "*" : compact ? "" : " ");
		break;
	}
	case VM_F_RATE:
		if (compact)
			human(x, buf, len);
		else if (x >= 1000)
			units_si(buf, len, x, " ");
		else
			snprintf(buf, len, "%.0f", x);
		break;
	default:	/* VM_F_INT: exact */
		if (compact)
			human(x, buf, len);
		else
			snprintf(buf, len, "%.0f", x);
	}
}

/* ---------- TMA ---------- */


static int l1_slot(const char *name)
{
	if (strstr(name, "frontend"))
		return VM_FE;
	if (strstr(name, "bad_spec"))
		return VM_BS;
	if (strstr(name, "backend"))
		return VM_BE;
	if (strstr(name, "retiring"))
		return VM_RE;
	return -1;
}

void vm_tma_from_result(const struct tma_result *res, struct vm_tma *out)
{
	int best = -1, l2 = -1;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < VM_TMA_L1; i++)
		out->l1[i] = NAN;
	for (int i = 0; i < res->n; i++) {
		const struct tma_node *nd = &res->node[i];
		int s;

		if (nd->parent >= 0 || isnan(nd->value) || (s = l1_slot(nd->name)) < 0)
			continue;
		out->l1[s] = nd->value;
		out->ok = true;
		if (best < 0 || nd->value > res->node[best].value)
			best = i;
	}
	for (int i = 0; best >= 0 && i < res->n; i++)
		if (res->node[i].parent == best && !isnan(res->node[i].value) &&
		    (l2 < 0 || res->node[i].value > res->node[l2].value))
			l2 = i;
	if (l2 >= 0) {
		snprintf(out->l2, sizeof(out->l2), "%s", res->node[l2].label);
		out->l2_value = res->node[l2].value;
	}
}

void vm_tma_bar(const struct vm_tma *t, int width, char *buf)
{
	static const char letter[VM_TMA_L1] = { 'F', 'S', 'B', 'R' };
	double v[VM_TMA_L1], sum = 0;
	int n[VM_TMA_L1], k = 0, left = width;

	if (width <= 0) {
		buf[0] = 0;
		return;
	}
	for (int i = 0; i < VM_TMA_L1; i++) {
		v[i] = t->ok && !isnan(t->l1[i]) && t->l1[i] > 0 ? t->l1[i] : 0;
		sum += v[i];
	}
	if (sum <= 0) {
		memset(buf, '-', width);
		buf[width] = 0;
		return;
	}
	/* largest remainders: the letters add up to width exactly */
	for (int i = 0; i < VM_TMA_L1; i++) {
		n[i] = (int)floor(v[i] / sum * width);
		left -= n[i];
	}
	while (left > 0) {
		int best = -1;
		double bestr = -1;

		for (int i = 0; i < VM_TMA_L1; i++) {
			double r = v[i] / sum * width - n[i];

			if (v[i] > 0 && r > bestr) {
				bestr = r;
				best = i;
			}
		}
		n[best]++;
		left--;
	}
	for (int i = 0; i < VM_TMA_L1; i++)
		for (int j = 0; j < n[i]; j++)
			buf[k++] = letter[i];
	buf[k] = 0;
}

void vm_tma_of(const struct report *r, const struct thread_stats *s, struct vm_tma *out)
{
	struct tma_result res;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < VM_TMA_L1; i++)
		out->l1[i] = NAN;
	if (!s->oncpu_ns || report_tma(r, s, &res))
		return;
	vm_tma_from_result(&res, out);
}

void vm_state_bar(double oncpu, double runq, double blocked, int width, char *buf)
{
	double v[3] = { oncpu, runq, blocked }, edge = 0;
	static const char mark[3] = { '#', '+', '-' };
	int at = 0;

	if (width <= 0) {
		buf[0] = 0;
		return;
	}
	memset(buf, ' ', width);
	buf[width] = 0;
	for (int i = 0; i < 3; i++) {	/* each share ends where the running sum rounds to: they never overlap */
		int end;

		edge += isnan(v[i]) || v[i] < 0 ? 0 : v[i];
		end = (int)lround(fmin(edge, 100.0) / 100.0 * width);
		for (; at < end; at++)
			buf[at] = mark[i];
	}
}
