// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "perfmap.h"
#include "warn.h"

static int sym_cmp(const void *a, const void *b)
{
	const struct perfmap_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* "START SIZE NAME": hex numbers, 0x optional; NAME is the rest of the line (may hold spaces). */
static int parse_line(char *line, struct perfmap_sym *s)
{
	char *p = line, *end;

	s->start = strtoull(p, &end, 16);
	if (end == p || (*end != ' ' && *end != '\t'))
		return -EINVAL;
	p = end;
	s->size = strtoull(p, &end, 16);
	if (end == p || (*end != ' ' && *end != '\t'))
		return -EINVAL;
	p = end + strspn(end, " \t");
	p[strcspn(p, "\r\n")] = 0;
	if (!*p || !s->size)
		return -EINVAL;
	s->name = strdup(p);
	return s->name ? 0 : -ENOMEM;
}

int perfmap_parse(struct perfmap *m, FILE *f)
{
	size_t cap = 0, len = 0;
	char *line = NULL;

	while (getline(&line, &len, f) > 0) {
		struct perfmap_sym s;

		if (parse_line(line, &s)) {
			if (line[strspn(line, " \t\r\n")])
				m->bad_lines++;
			continue;
		}
		if (m->nr == cap) {
			struct perfmap_sym *v = realloc(m->syms, (cap = cap ? cap * 2 : 256) * sizeof(*v));

			if (!v) {
				free(s.name);
				free(line);
				return -ENOMEM;
			}
			m->syms = v;
		}
		s.line = m->nr;
		m->syms[m->nr++] = s;
	}
	free(line);
	qsort(m->syms, m->nr, sizeof(*m->syms), sym_cmp);
	m->max_end = calloc(m->nr ? m->nr : 1, sizeof(*m->max_end));
	if (!m->max_end)
		return -ENOMEM;
	for (size_t i = 0; i < m->nr; i++) {
		uint64_t end = m->syms[i].start + m->syms[i].size;

		m->max_end[i] = i && m->max_end[i - 1] > end ? m->max_end[i - 1] : end;
	}
	return 0;
}

int perfmap_load(struct perfmap *m, const char *path, char *err, size_t errlen)
{
	struct stat st;
	FILE *f;
	int r;

	memset(m, 0, sizeof(*m));
	f = fopen(path, "re");
	if (!f) {
		r = -errno;
		err_set(err, errlen, "open %s: %s", path, strerror(-r));
		return r;
	}
	if (fstat(fileno(f), &st) == 0) {
		m->file_size = st.st_size;
		m->mtime_ns = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	}
	m->path = strdup(path);
	r = m->path ? perfmap_parse(m, f) : -ENOMEM;
	fclose(f);
	if (r) {
		err_set(err, errlen, "%s: out of memory", path);
		perfmap_free(m);
	}
	return r;
}

const struct perfmap_sym *perfmap_lookup(const struct perfmap *m, uint64_t addr)
{
	const struct perfmap_sym *best = NULL;
	size_t lo = 0, hi = m->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* regions starting at or before addr, back to where none can reach it */
	for (size_t i = lo; i-- > 0 && m->max_end[i] > addr;) {
		const struct perfmap_sym *s = &m->syms[i];

		if (addr < s->start + s->size && (!best || s->line > best->line))
			best = s;
	}
	return best;
}

bool perfmap_changed(const struct perfmap *m)
{
	struct stat st;

	if (!m->path || stat(m->path, &st))
		return false;	/* gone (the process cleaned up): keep what we read */
	return st.st_size != m->file_size || st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec != m->mtime_ns;
}

void perfmap_free(struct perfmap *m)
{
	for (size_t i = 0; i < m->nr; i++)
		free(m->syms[i].name);
	free(m->syms);
	free(m->max_end);
	free(m->path);
	memset(m, 0, sizeof(*m));
}
