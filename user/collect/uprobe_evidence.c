// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Zero-evidence warnings at the end of a run.  See uprobe_evidence.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collect/uprobe_evidence.h"
#include "lib/path.h"
#include "lib/warn.h"
#include "sym/elfsyms.h"

#define SHOWN 3
#define CANDIDATES 12	/* files of a similar name judged (MKL maps 6 named libmkl_*) */

/* The length of the name prefix a and b share, cut back to a whole part of the name (after its
 * last '_', '-' or '.'): libmkl_avx512.so and libmkl_avx2.so share "libmkl_", not "libmkl_avx". */
static size_t common_prefix(const char *a, const char *b)
{
	size_t n = 0;

	while (a[n] && a[n] == b[n])
		n++;
	while (n && a[n] && !strchr("_-.", a[n - 1]))
		n--;
	return n;
}

/* A mapped file that may stand in for the probed one: its functions matching the glob as given,
 * and (a CPU-dispatch sibling: libmkl_def.so for libmkl_avx512.so) the share of its names that
 * carry its own tag ("mkl_blas_def_sgemm": tag "def"). */
struct candidate {
	const char *path;
	int as_is;
	double tagged;
};

/* pre: the length of the name prefix the probed library and its siblings share ("libmkl_") */
static void judge(struct candidate *c, size_t pre, const char *glob)
{
	const char *b = path_base(c->path);
	char tag[128], pat[160];
	struct elfsyms syms;
	const char *dot;
	int all;

	c->as_is = 0;
	c->tagged = 0;
	if (elfsyms_load(c->path, &syms, NULL, 0))
		return;
	c->as_is = elfsyms_match(&syms, glob, NULL, NULL);
	dot = strstr(b + pre, ".so");
	snprintf(tag, sizeof(tag), "%.*s", dot ? (int)(dot - b - pre) : 0, b + pre);
	if (tag[0] && strlen(tag) < sizeof(tag) - 8) {
		snprintf(pat, sizeof(pat), "*_%s_*", tag);
		all = elfsyms_match(&syms, "*", NULL, NULL);
		c->tagged = all > 0 ? (double)elfsyms_match(&syms, pat, NULL, NULL) / all : 0;
	}
	elfsyms_free(&syms);
}

/* A library nobody mapped: what was mapped instead (files of a similar name), and a glob to try in
 * the best of them: one where the glob matches as given, else the CPU-dispatch sibling with the
 * glob widened to *GLOB*. */
static void never_mapped(const struct uprobe_lib *l, int nfuncs, const struct maps_watch *w)
{
	const char *name = path_base(l->module);
	struct candidate c[CANDIDATES], self, *best = NULL;
	char instead[512] = "", suggest[700] = "", wide[300];
	size_t o = 0, most = 0;
	int nc = 0;

	for (size_t i = 0; i < w->n; i++) {
		size_t p = common_prefix(name, path_base(w->paths[i]));

		if (p > most && p >= 4)
			most = p;
	}
	for (size_t i = 0; most && i < w->n && nc < CANDIDATES; i++) {
		if (common_prefix(name, path_base(w->paths[i])) < most)
			continue;
		c[nc].path = w->paths[i];
		judge(&c[nc], most, l->glob);
		o += snprintf(instead + o, o < sizeof(instead) ? sizeof(instead) - o : 0, "%s%s", nc ? ", " : "",
			      path_base(w->paths[i]));
		nc++;
	}
	/* a CPU-dispatch library (most names carry its tag) stands for its sibling of the same kind */
	self.path = l->module;
	judge(&self, most, l->glob);
	for (int i = 0; self.tagged >= 0.5 && i < nc; i++)
		if (c[i].tagged >= 0.5 && (!best || c[i].tagged > best->tagged))
			best = &c[i];
	for (int i = 0; !best && i < nc; i++)
		if (c[i].as_is > 0 && (!best || c[i].as_is > best->as_is))
			best = &c[i];
	snprintf(wide, sizeof(wide), "%s%s%s", l->glob[0] == '*' ? "" : "*", l->glob,
		 l->glob[0] && l->glob[strlen(l->glob) - 1] == '*' ? "" : "*");
	if (best && best->as_is > 0)
		snprintf(suggest, sizeof(suggest), "; try --uprobe '%s:%s' (%d function%s match there)",
			 path_base(best->path), l->glob, best->as_is, best->as_is == 1 ? "" : "s");
	else if (best)
		snprintf(suggest, sizeof(suggest), "; %s is its CPU-dispatch sibling: try --uprobe '%s:%s'",
			 path_base(best->path), path_base(best->path), wide);
	warn_add("uprobe: %s was never mapped by the target, so its %d probed function%s could not fire; it mapped "
		 "%s%s%s", name, nfuncs, nfuncs == 1 ? "" : "s", instead[0] ? instead : "no file of a similar name",
		 instead[0] ? " instead" : "", suggest);
}

void uprobe_evidence_report(struct uprobe_set *s, const unsigned long long *calls, const struct maps_watch *w)
{
	for (int lib = 0; lib < s->nr_libs; lib++) {
		int nfuncs = 0, zero = 0, shown = 0;
		unsigned long long total = 0;
		char names[512] = "";
		size_t o = 0;

		for (int i = 0; i < s->nr_funcs; i++)
			if (s->funcs[i].lib == lib && s->funcs[i].insn.cls != UINSN_REFUSED && !s->funcs[i].itt) {
				nfuncs++;
				total += calls[i];
			}
		if (!nfuncs)
			continue;
		/* a call is proof of a mapping the watch may have missed (mapped between two reads) */
		if (w && !total && !maps_watch_seen(w, s->libs[lib].module)) {
			s->libs[lib].never_mapped = true;
			never_mapped(&s->libs[lib], nfuncs, w);
			continue;
		}
		for (int i = 0; i < s->nr_funcs; i++) {
			struct uprobe_func *f = &s->funcs[i];

			if (f->lib != lib || f->insn.cls == UINSN_REFUSED || f->detached || calls[i])
				continue;
			f->never_called = true;
			if (f->marker)
				continue;	/* --per-call says it (percall_finish) */
			zero++;
			if (shown < SHOWN)
				o += snprintf(names + o, o < sizeof(names) ? sizeof(names) - o : 0, "%s%s", shown++ ? ", " : "",
					      f->symbol);
		}
		if (zero)
			warn_add("uprobe: %d of %d probed function%s in %s %s never called: %s%s", zero, nfuncs,
				 nfuncs == 1 ? "" : "s", path_base(s->libs[lib].module), zero == 1 ? "was" : "were", names,
				 zero > SHOWN ? ", ... (all in --json)" : "");
	}
	for (int d = 0; d < s->nr_deferred; d++)
		if (!s->deferred[d].attached)
			warn_add("uprobe: '%s:%s' never attached: no target process mapped a file named %s", s->deferred[d].lib,
				 s->deferred[d].glob, s->deferred[d].lib);
}
