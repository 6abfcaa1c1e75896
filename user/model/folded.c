// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/grow.h"
#include "lib/text_safe.h"
#include "model/folded.h"

void folded_init(struct folded *f)
{
	memset(f, 0, sizeof(*f));
}

int folded_add(struct folded *f, const char *const *frames, size_t n, unsigned long long weight)
{
	size_t len = 1;
	char *line, *p;

	if (!n || !weight)
		return 0;
	for (size_t i = 0; i < n; i++)
		len += strlen(frames[i]) + 1;
	line = malloc(len);
	if (!line)
		return -ENOMEM;
	p = line;
	for (size_t i = 0; i < n; i++) {
		for (const char *c = frames[i]; *c; c++)
			*p++ = *c == ';' ? ':' : (*c == '\n' || *c == '\r') ? ' ' : *c;
		*p++ = ';';
	}
	p[-1] = 0;
	struct folded_line *v = grow(f->v, &f->cap, f->nr, sizeof(*v), 256);

	if (!v) {
		free(line);
		return -ENOMEM;
	}
	f->v = v;
	f->v[f->nr++] = (struct folded_line){ .stack = line, .weight = weight };
	return 0;
}

static int line_cmp(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->stack, ((const struct folded_line *)b)->stack);
}

void folded_merge(struct folded *f)
{
	size_t n = 0;

	qsort(f->v, f->nr, sizeof(*f->v), line_cmp);
	for (size_t i = 0; i < f->nr; i++) {
		if (n && !strcmp(f->v[n - 1].stack, f->v[i].stack)) {
			f->v[n - 1].weight += f->v[i].weight;
			free(f->v[i].stack);
			continue;
		}
		f->v[n++] = f->v[i];
	}
	f->nr = n;
}

int folded_write(struct folded *f, FILE *out)
{
	folded_merge(f);
	for (size_t i = 0; i < f->nr; i++) {	/* one stack a line: no name may break a line (text_safe) */
		text_safe_fputs(f->v[i].stack, out);
		if (fprintf(out, " %llu\n", f->v[i].weight) < 0)
			return errno ? -errno : -EIO;
	}
	return 0;
}

unsigned long long folded_total(const struct folded *f)
{
	unsigned long long t = 0;

	for (size_t i = 0; i < f->nr; i++)
		t += f->v[i].weight;
	return t;
}

void folded_free(struct folded *f)
{
	for (size_t i = 0; i < f->nr; i++)
		free(f->v[i].stack);
	free(f->v);
	memset(f, 0, sizeof(*f));
}
