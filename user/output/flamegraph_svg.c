// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The flame graph as SVG (flamegraph_svg.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "lib/grow.h"
#include "lib/text_safe.h"
#include "model/results.h"
#include "output/flamegraph_svg.h"

#define W FLAMEGRAPH_WIDTH
#define PAD FLAMEGRAPH_PAD
#define GW (W - 2 * PAD)	/* a graph's width */
#define FH 16			/* a frame's height */
#define TOP 36			/* the title line: Reset Zoom, the title, Search */
#define HEAD 26			/* a graph's own title line */
#define MIN_W 0.1		/* narrower boxes are left out, as flamegraph.pl does */
#define CHAR_W 7.0		/* a label character's width at 11px */

enum { G_ON, G_OFF, G__N };

struct graph {
	const struct folded_line **lines;	/* its stacks, sorted frame by frame */
	size_t nr;
	unsigned long long total;
	size_t max_depth;			/* frames of its deepest stack */
};

struct open_frame {
	char *name;
	unsigned long long start, v;
};

/* The stacks of --offcpu-stacks start with "[blocked]" or "[runqueue]" (user/collect/offcpu.c). */
static bool is_offcpu(const char *stack)
{
	static const int reasons[] = { OFFCPU_BLOCKED, OFFCPU_RUNQUEUE };

	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		const char *r = offcpu_reason_name(reasons[i]);
		size_t n = strlen(r);

		if (stack[0] == '[' && !strncmp(stack + 1, r, n) && stack[n + 1] == ']' && stack[n + 2] == ';')
			return true;
	}
	return false;
}

/* Frame by frame: a frame sorts before any longer frame it starts (";" below every other byte), so
 * that the stacks through one frame are next to one another. */
static int frame_cmp(const void *a, const void *b)
{
	const unsigned char *x = (const unsigned char *)(*(const struct folded_line *const *)a)->stack;
	const unsigned char *y = (const unsigned char *)(*(const struct folded_line *const *)b)->stack;

	for (;; x++, y++) {
		int cx = *x == ';' ? 1 : *x ? *x + 1 : 0, cy = *y == ';' ? 1 : *y ? *y + 1 : 0;

		if (cx != cy)
			return cx - cy;
		if (!cx)
			return 0;
	}
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

/* flamegraph.pl's palettes, the shade from the name (the same name, the same colour) */
static void colour(const char *name, int g, char *buf, size_t len)
{
	uint32_t h = name_hash(name);
	double v1 = (h & 0xff) / 255.0, v2 = ((h >> 8) & 0xff) / 255.0, v3 = ((h >> 16) & 0xff) / 255.0;

	if (g == G_OFF)			/* blue */
		snprintf(buf, len, "rgb(%d,%d,%d)", (int)(80 + 60 * v1), (int)(80 + 60 * v1), (int)(190 + 55 * v2));
	else if (ends_with(name, "_[k]"))	/* orange */
		snprintf(buf, len, "rgb(%d,%d,%d)", (int)(200 + 55 * v1), (int)(110 + 50 * v1), (int)(30 * v2));
	else if (ends_with(name, "_[j]"))	/* green */
		snprintf(buf, len, "rgb(%d,%d,%d)", (int)(50 + 60 * v1), (int)(180 + 60 * v1), (int)(50 + 60 * v2));
	else				/* hot */
		snprintf(buf, len, "rgb(%d,%d,%d)", (int)(205 + 50 * v3), (int)(230 * v1), (int)(55 * v2));
}

struct layout {
	FILE *f;
	int g;
	unsigned long long total;
	int base;		/* the y below the graph's root row */
};

static void frame_svg(const struct layout *l, const char *name, size_t depth, unsigned long long start,
		      unsigned long long v)
{
	double x = PAD + (double)start / l->total * GW, w = (double)v / l->total * GW;
	int y = l->base - (int)(depth + 1) * FH, fit = (int)((w - 6) / CHAR_W);
	char fill[32];
	size_t chars;

	if (w < MIN_W)
		return;
	colour(name, l->g, fill, sizeof(fill));
	fprintf(l->f, "<g class=\"f\" data-s=\"%llu\" data-v=\"%llu\"><title>", start, v);
	text_safe_xml_fputs(name, SIZE_MAX, l->f);
	if (l->g == G_OFF)
		fprintf(l->f, " (%.3f ms, %.2f%%)</title>", v / 1e3, 100.0 * v / l->total);
	else
		fprintf(l->f, " (%llu sample%s, %.2f%%)</title>", v, v == 1 ? "" : "s", 100.0 * v / l->total);
	fprintf(l->f, "<rect x=\"%.3f\" y=\"%d\" width=\"%.3f\" height=\"%d\" fill=\"%s\" rx=\"2\"/>"
		      "<text x=\"%.2f\" y=\"%d\">", x, y, w, FH - 1, fill, x + 3, y + FH - 4);
	if (fit >= 3) {
		chars = text_safe_xml_fputs(name, SIZE_MAX, NULL);
		text_safe_xml_fputs(name, chars <= (size_t)fit ? SIZE_MAX : (size_t)fit - 2, l->f);
		if (chars > (size_t)fit)
			fputs("..", l->f);
	}
	fputs("</text></g>\n", l->f);
}

/* The boxes, streamed: a frame is written when the stacks through it end (its weight then known). */
static int graph_svg(const struct layout *l, const struct graph *gr)
{
	struct open_frame *open = NULL;
	size_t nopen = 0, cap = 0;
	unsigned long long pos = 0;
	int rc = 0;

	frame_svg(l, "all", 0, 0, gr->total);
	for (size_t i = 0; i < gr->nr && !rc; i++) {
		const char *p = gr->lines[i]->stack;
		size_t d = 0;

		/* the frames this stack shares with the open ones */
		while (d < nopen && *p) {
			size_t n = strcspn(p, ";");

			if (strlen(open[d].name) != n || strncmp(open[d].name, p, n))
				break;
			d++;
			p += n + (p[n] == ';');
		}
		while (nopen > d) {
			nopen--;
			frame_svg(l, open[nopen].name, nopen + 1, open[nopen].start, open[nopen].v);
			free(open[nopen].name);
		}
		for (; *p; nopen++) {
			size_t n = strcspn(p, ";");
			struct open_frame *v = grow(open, &cap, nopen, sizeof(*open), 64);
			char *name = v ? strndup(p, n) : NULL;

			if (!name) {
				open = v ? v : open;
				rc = -ENOMEM;
				break;
			}
			open = v;
			open[nopen] = (struct open_frame){ .name = name, .start = pos };
			p += n + (p[n] == ';');
		}
		for (size_t k = 0; k < nopen; k++)
			open[k].v += gr->lines[i]->weight;
		pos += gr->lines[i]->weight;
	}
	while (nopen > 0) {
		nopen--;
		if (!rc)
			frame_svg(l, open[nopen].name, nopen + 1, open[nopen].start, open[nopen].v);
		free(open[nopen].name);
	}
	free(open);
	return rc;
}

static const char script[] =
	"\"use strict\";\n"
	"var details, matched, searchbtn, unzoombtn, searching = false;\n"
	"function frames(gr) { return Array.prototype.slice.call(gr.querySelectorAll('g.f')); }\n"
	"function fname(f) { var t = f.querySelector('title').textContent; return t.slice(0, t.lastIndexOf(' (')); }\n"
	"function num(f, a) { return Number(f.getAttribute(a)); }\n"
	"function label(f) {\n"
	"  var r = f.querySelector('rect'), t = f.querySelector('text'), n = fname(f);\n"
	"  var w = Number(r.getAttribute('width')), fit = Math.floor((w - 6) / 7);\n"
	"  t.setAttribute('x', (Number(r.getAttribute('x')) + 3).toFixed(2));\n"
	"  t.textContent = fit < 3 ? '' : n.length <= fit ? n : n.slice(0, fit - 2) + '..';\n"
	"}\n"
	"function place(f, x, w) {\n"
	"  var r = f.querySelector('rect');\n"
	"  r.setAttribute('x', x.toFixed(3)); r.setAttribute('width', w.toFixed(3)); label(f);\n"
	"}\n"
	"function depthY(f) { return Number(f.querySelector('rect').getAttribute('y')); }\n"
	"/* z fills the graph's width; its callers stay below, dimmed; what is not under it is hidden */\n"
	"function zoom(z) {\n"
	"  var gr = z.parentNode, zs = num(z, 'data-s'), zv = num(z, 'data-v'), zy = depthY(z);\n"
	"  unzoom();\n"
	"  unzoombtn.classList.remove('hide');\n"
	"  frames(gr).forEach(function (f) {\n"
	"    var s = num(f, 'data-s'), v = num(f, 'data-v'), y = depthY(f);\n"
	"    if (y > zy && s <= zs && s + v >= zs + zv) { f.classList.add('parent'); place(f, PAD, W - 2 * PAD); }\n"
	"    else if (y <= zy && s >= zs && s + v <= zs + zv) place(f, PAD + (s - zs) / zv * (W - 2 * PAD), v / zv * (W - 2 * PAD));\n"
	"    else f.classList.add('hide');\n"
	"  });\n"
	"}\n"
	"function unzoom() {\n"
	"  unzoombtn.classList.add('hide');\n"
	"  document.querySelectorAll('g.graph').forEach(function (gr) {\n"
	"    var total = num(gr, 'data-total');\n"
	"    frames(gr).forEach(function (f) {\n"
	"      f.classList.remove('hide', 'parent');\n"
	"      place(f, PAD + num(f, 'data-s') / total * (W - 2 * PAD), num(f, 'data-v') / total * (W - 2 * PAD));\n"
	"    });\n"
	"  });\n"
	"}\n"
	"function clearSearch() {\n"
	"  searching = false; searchbtn.textContent = 'Search'; matched.textContent = '';\n"
	"  document.querySelectorAll('g.f').forEach(function (f) {\n"
	"    f.querySelector('rect').setAttribute('fill', f.getAttribute('data-c'));\n"
	"  });\n"
	"}\n"
	"/* the matched boxes in magenta; the share is of the union of their spans (a match under a match counts once) */\n"
	"function search(term) {\n"
	"  var re, out = [];\n"
	"  try { re = new RegExp(term); } catch (e) { alert('not a regular expression: ' + e.message); return; }\n"
	"  clearSearch(); searching = true; searchbtn.textContent = 'Reset Search';\n"
	"  document.querySelectorAll('g.graph').forEach(function (gr) {\n"
	"    var spans = [], sum = 0, end = 0;\n"
	"    frames(gr).forEach(function (f) {\n"
	"      if (!re.test(fname(f))) return;\n"
	"      f.querySelector('rect').setAttribute('fill', 'rgb(230,0,230)');\n"
	"      spans.push([num(f, 'data-s'), num(f, 'data-s') + num(f, 'data-v')]);\n"
	"    });\n"
	"    spans.sort(function (a, b) { return a[0] - b[0]; });\n"
	"    spans.forEach(function (sp) { if (sp[1] > end) { sum += sp[1] - Math.max(sp[0], end); end = sp[1]; } });\n"
	"    out.push(gr.getAttribute('data-name') + ' ' + (100 * sum / num(gr, 'data-total')).toFixed(1) + '%');\n"
	"  });\n"
	"  matched.textContent = 'Matched: ' + out.join(', ');\n"
	"}\n"
	"function askSearch() {\n"
	"  if (searching) { clearSearch(); return; }\n"
	"  var term = prompt('Search for frames (a regular expression)', '');\n"
	"  if (term) search(term);\n"
	"}\n"
	"function init() {\n"
	"  details = document.getElementById('details'); matched = document.getElementById('matched');\n"
	"  searchbtn = document.getElementById('search'); unzoombtn = document.getElementById('unzoom');\n"
	"  document.querySelectorAll('g.f').forEach(function (f) {\n"
	"    f.setAttribute('data-c', f.querySelector('rect').getAttribute('fill'));\n"
	"    f.addEventListener('click', function () { zoom(f); });\n"
	"    f.addEventListener('mouseover', function () { details.textContent = f.querySelector('title').textContent; });\n"
	"    f.addEventListener('mouseout', function () { details.textContent = ''; });\n"
	"  });\n"
	"  searchbtn.addEventListener('click', askSearch);\n"
	"  unzoombtn.addEventListener('click', unzoom);\n"
	"  document.addEventListener('keydown', function (e) {\n"
	"    if ((e.ctrlKey && e.key === 'f') || e.key === 'F3') { e.preventDefault(); askSearch(); }\n"
	"    else if (e.key === 'Escape') { clearSearch(); unzoom(); }\n"
	"  });\n"
	"}\n"
	"init();\n";

int flamegraph_svg_write(struct folded *fold, FILE *f)
{
	static const char *const name[G__N] = { "On-CPU", "Off-CPU" };
	struct graph g[G__N] = { 0 };
	const struct folded_line **lines = calloc(fold->nr + 1, sizeof(*lines));
	int y = TOP, rc = 0;

	if (!lines)
		return -ENOMEM;
	folded_merge(fold);
	for (size_t i = 0; i < fold->nr; i++)	/* each graph's stacks, in one array: on-CPU first */
		if (!is_offcpu(fold->v[i].stack))
			lines[g[G_ON].nr++] = &fold->v[i];
	g[G_OFF].lines = lines + g[G_ON].nr;
	g[G_ON].lines = lines;
	for (size_t i = 0; i < fold->nr; i++)
		if (is_offcpu(fold->v[i].stack))
			g[G_OFF].lines[g[G_OFF].nr++] = &fold->v[i];
	for (int k = 0; k < G__N; k++) {
		qsort(g[k].lines, g[k].nr, sizeof(*lines), frame_cmp);
		for (size_t i = 0; i < g[k].nr; i++) {
			size_t d = 1;

			for (const char *p = g[k].lines[i]->stack; *p; p++)
				d += *p == ';';
			g[k].total += g[k].lines[i]->weight;
			if (d > g[k].max_depth)
				g[k].max_depth = d;
		}
		if (g[k].total)
			y += HEAD + (int)(g[k].max_depth + 1) * FH + 10;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n"
		   "<style>\n"
		   "text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; }\n"
		   "#title { font-size: 17px; } .head { font-size: 14px; }\n"
		   "g.f text { font-size: 11px; pointer-events: none; }\n"
		   "g.f:hover rect { stroke: #000; stroke-width: 0.5; cursor: pointer; }\n"
		   "#search, #unzoom { cursor: pointer; } #search:hover, #unzoom:hover { fill: #00c; }\n"
		   ".hide { display: none; } .parent { opacity: 0.5; }\n"
		   "</style>\n"
		   "<defs><linearGradient id=\"bg\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
		   "<stop stop-color=\"#eeeeee\" offset=\"5%%\"/><stop stop-color=\"#eeeeb0\" offset=\"95%%\"/>"
		   "</linearGradient></defs>\n"
		   "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"url(#bg)\"/>\n"
		   "<text id=\"title\" x=\"%d\" y=\"24\" text-anchor=\"middle\">Flame graph</text>\n"
		   "<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"24\">Reset Zoom</text>\n"
		   "<text id=\"search\" x=\"%d\" y=\"24\" text-anchor=\"end\">Search</text>\n",
		W, y + 30, W, y + 30, W, y + 30, W / 2, PAD, W - PAD);
	if (!g[G_ON].total && !g[G_OFF].total)
		fprintf(f, "<text x=\"%d\" y=\"%d\">No stacks were recorded.</text>\n", PAD, TOP + 20);
	y = TOP;
	for (int k = 0; k < G__N && !rc; k++) {
		struct layout l = { .f = f, .g = k, .total = g[k].total };

		if (!g[k].total)
			continue;
		fprintf(f, "<text class=\"head\" x=\"%d\" y=\"%d\">%s: ", PAD, y + 18, name[k]);
		if (k == G_OFF)
			fprintf(f, "%.3f ms off the CPU (blocked and runqueue)", g[k].total / 1e3);
		else
			fprintf(f, "%llu samples", g[k].total);
		fprintf(f, "</text>\n<g class=\"graph\" data-name=\"%s\" data-total=\"%llu\">\n", name[k], g[k].total);
		l.base = y + HEAD + (int)(g[k].max_depth + 1) * FH;
		rc = graph_svg(&l, &g[k]);
		fputs("</g>\n", f);
		y = l.base + 10;
	}
	fprintf(f, "<text id=\"details\" x=\"%d\" y=\"%d\"></text>\n"
		   "<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"></text>\n"
		   "<script type=\"text/ecmascript\"><![CDATA[\nvar W = %d, PAD = %d;\n%s]]></script>\n</svg>\n",
		PAD, y + 18, W - PAD, y + 18, W, PAD, script);
	free(lines);
	if (!rc && ferror(f))
		rc = errno ? -errno : -EIO;
	return rc;
}
