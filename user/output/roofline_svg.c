// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The roofline chart as SVG (roofline_svg.h). */
#include <math.h>
#include <string.h>
#include <stdint.h>
#include "lib/text_safe.h"
#include "lib/units.h"
#include "output/roofline_svg.h"

#define W 900
#define H 560
#define LEFT 80
#define RIGHT 30
#define TOP 40
#define BOTTOM 60

struct axes {
	double x0, x1, y0, y1;	/* log10 of the ranges */
};

static double px(const struct axes *a, double ai)
{
	return LEFT + (log10(ai) - a->x0) / (a->x1 - a->x0) * (W - LEFT - RIGHT);
}

static double py(const struct axes *a, double flops)
{
	return H - BOTTOM - (log10(flops) - a->y0) / (a->y1 - a->y0) * (H - TOP - BOTTOM);
}

static void widen(double *lo, double *hi, double v)
{
	if (v > 0 && isfinite(v)) {
		*lo = fmin(*lo, log10(v));
		*hi = fmax(*hi, log10(v));
	}
}

/* Decades that hold every point, roof and ridge, one decade of air on each side. */
static void axes_fit(const struct roofline_result *r, struct axes *a)
{
	double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;

	for (size_t i = 0; i < r->nrows; i++) {
		widen(&xlo, &xhi, r->rows[i].intensity);
		widen(&ylo, &yhi, r->rows[i].flop_per_s);
	}
	if (r->have_roofs)
		for (int p = 0; p < ROOF__PRECS; p++) {
			const struct roof_figure *peak = &r->roofs.flops[p][r->roof_threads];

			if (!peak->valid)
				continue;
			widen(&ylo, &yhi, peak->median);
			for (int l = 0; l < ROOF__LEVELS; l++) {
				const struct roof_figure *bw = &r->roofs.bw[ROOF_READ][l][r->roof_threads];

				if (bw->valid)
					widen(&xlo, &xhi, peak->median / bw->median);
			}
		}
	if (!isfinite(xlo)) {
		xlo = -1;
		xhi = 2;
		ylo = 8;
		yhi = 11;
	}
	a->x0 = floor(xlo) - 1;
	a->x1 = ceil(xhi) + 1;
	a->y0 = floor(ylo) - 1;
	a->y1 = ceil(yhi) + 1;
}

static void grid(FILE *f, const struct axes *a)
{
	char v[16];

	for (double d = a->x0; d <= a->x1; d++) {
		double x = LEFT + (d - a->x0) / (a->x1 - a->x0) * (W - LEFT - RIGHT);

		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"grid\"/>\n", x, TOP, x, H - BOTTOM);
		units_si(v, sizeof(v), pow(10, d), "");
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"tick\" text-anchor=\"middle\">%s</text>\n", x, H - BOTTOM + 18,
			d < 0 ? (snprintf(v, sizeof(v), "%g", pow(10, d)), v) : v);
	}
	for (double d = a->y0; d <= a->y1; d++) {
		double y = H - BOTTOM - (d - a->y0) / (a->y1 - a->y0) * (H - TOP - BOTTOM);

		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" class=\"grid\"/>\n", LEFT, y, W - RIGHT, y);
		units_si(v, sizeof(v), pow(10, d), "");
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">%s</text>\n", LEFT - 6, y + 4, v);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"axis\" text-anchor=\"middle\">arithmetic intensity (FLOP per "
		   "compulsory byte)</text>\n", (LEFT + W - RIGHT) / 2, H - 18);
	fprintf(f, "<text x=\"18\" y=\"%d\" class=\"axis\" text-anchor=\"middle\" transform=\"rotate(-90 18 %d)\">"
		   "FLOP/s</text>\n", (TOP + H - BOTTOM) / 2, (TOP + H - BOTTOM) / 2);
}

static void roofs(FILE *f, const struct roofline_result *r, const struct axes *a)
{
	static const char *const dash[ROOF__LEVELS] = { "2 3", "6 3", "10 4", "" };
	char v[16];

	if (!r->have_roofs)
		return;
	for (int p = 0; p < ROOF__PRECS; p++) {
		const struct roof_figure *peak = &r->roofs.flops[p][r->roof_threads];
		double xmax = pow(10, a->x1), xmin = pow(10, a->x0);

		if (!peak->valid)
			continue;
		units_si(v, sizeof(v), peak->median, " ");
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"peak\" data-roof=\"peak-%s\" "
			   "data-flop-per-s=\"%.6g\"/>\n", px(a, xmin), py(a, peak->median), px(a, xmax),
			py(a, peak->median), p == ROOF_SP ? "fp32" : "fp64", peak->median);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"roof\" text-anchor=\"end\">peak %s %sFLOP/s</text>\n",
			W - RIGHT - 4, py(a, peak->median) - 4, p == ROOF_SP ? "fp32" : "fp64", v);
		if (p != ROOF_SP)
			continue;
		for (int l = 0; l < ROOF__LEVELS; l++) {
			const struct roof_figure *bw = &r->roofs.bw[ROOF_READ][l][r->roof_threads];
			double ridge;

			if (!bw->valid)
				continue;
			ridge = peak->median / bw->median;
			xmin = fmax(xmin, pow(10, a->y0) / bw->median);
			units_si(v, sizeof(v), bw->median, " ");
			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"bw\" stroke-dasharray=\"%s\" "
				   "data-roof=\"read-%s\" data-bytes-per-s=\"%.6g\"/>\n",
				px(a, xmin), py(a, bw->median * xmin), px(a, ridge), py(a, peak->median), dash[l],
				roof_level_name(l), bw->median);
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"roof\" text-anchor=\"end\">%s %sB/s</text>\n",
				px(a, ridge) - 6, py(a, peak->median) + 14 + 14 * l, roof_level_name(l), v);
		}
	}
}

static const char *verdict_class(enum roofline_verdict v)
{
	switch (v) {
	case ROOFLINE_MEMORY: return "memory";
	case ROOFLINE_COMPUTE: return "compute";
	case ROOFLINE_BELOW_BOTH_ROOFS: return "below";
	default: return "none";
	}
}

static void points(FILE *f, const struct roofline_result *r, const struct axes *a)
{
	unsigned long long total = 0;
	char shape[48], verdict[40];

	for (size_t i = 0; i < r->nrows; i++)
		total += r->rows[i].wall_ns;
	/* rows are by time, descending: the largest drawn first, the small ones on top */
	for (size_t i = 0; i < r->nrows; i++) {
		const struct roofline_row *w = &r->rows[i];
		double share = total ? (double)w->wall_ns / (double)total : 0, rad = 3 + 27 * sqrt(share);
		double x, y;

		if (!(w->intensity > 0) || !(w->flop_per_s > 0))
			continue;
		x = px(a, w->intensity);
		y = py(a, w->flop_per_s);
		roofline_shape_name(w, shape, sizeof(shape));
		roofline_verdict_name(w, verdict, sizeof(verdict));
		/* a function's name comes from the probed library's symbols, which another user may own:
		 * escaped like every such name (text_safe) */
		fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\" class=\"pt %s\" data-function=\"", x, y, rad,
			verdict_class(w->verdict));
		text_safe_xml_fputs(w->func, SIZE_MAX, f);
		fprintf(f, "\" data-shape=\"%s\" data-pid=\"%u\" data-calls=\"%llu\" data-wall-ns=\"%llu\" "
			   "data-intensity=\"%.9g\" data-flop-per-s=\"%.9g\"><title>", shape, w->pid,
			(unsigned long long)w->calls, (unsigned long long)w->wall_ns, w->intensity, w->flop_per_s);
		text_safe_xml_fputs(w->func, SIZE_MAX, f);
		fprintf(f, " %s (pid %u): %llu calls, %.3f ms, %.3g FLOP/s, %.3g FLOP/B, %s</title></circle>\n", shape,
			w->pid, (unsigned long long)w->calls, (double)w->wall_ns / 1e6, w->flop_per_s, w->intensity,
			verdict);
		if (i < ROOFLINE_SVG_LABELS) {
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"label\">", x + rad + 3, y + 4);
			text_safe_xml_fputs(w->func, SIZE_MAX, f);
			fprintf(f, " %s</text>\n", shape);
		}
	}
}

void roofline_svg_write(const struct roofline_result *r, FILE *f)
{
	struct axes a;

	axes_fit(r, &a);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		   "data-x-decades=\"%g %g\" data-y-decades=\"%g %g\">\n",
		W, H, W, H, a.x0, a.x1, a.y0, a.y1);
	fputs("<style>\n"
	      "text { font-family: sans-serif; font-size: 12px; fill: #222; }\n"
	      ".grid { stroke: #ddd; stroke-width: 1; }\n"
	      ".tick { font-size: 11px; fill: #555; } .axis { font-size: 13px; } .roof { font-size: 11px; fill: #444; }\n"
	      ".peak { stroke: #333; stroke-width: 2; } .bw { stroke: #1f5fa8; stroke-width: 2; }\n"
	      ".pt { fill-opacity: 0.55; stroke: #222; stroke-width: 0.6; }\n"
	      ".memory { fill: #1f77b4; } .compute { fill: #d62728; } .below { fill: #999; } .none { fill: #2ca02c; }\n"
	      ".label { font-size: 11px; }\n"
	      "</style>\n", f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
	fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"15\">tmabpf roofline: %zu shapes, %llu calls%s", LEFT, r->nrows,
		(unsigned long long)r->calls, r->have_roofs ? "; roofs of " : " (no measured roofs: 'sudo tmabpf roofs')");
	if (r->have_roofs)
		text_safe_xml_fputs(r->roofs.host.cpu, SIZE_MAX, f);
	fputs("</text>\n", f);
	grid(f, &a);
	roofs(f, r, &a);
	points(f, r, &a);
	fputs("</svg>\n", f);
}
