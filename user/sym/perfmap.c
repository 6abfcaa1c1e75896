// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/sorted.h"
#include "lib/warn.h"
#include "sym/perfmap.h"
#include "sym/user_file.h"

static int sym_cmp(const void *a, const void *b)
{
	const struct perfmap_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* A hex number (0x optional, no sign) then blanks at *p; *p moves past them.  0 or -EINVAL. */
static int hex_field(char **p, uint64_t *out)
{
	char *end;

	if (**p == '-' || **p == '+')
		return -EINVAL;
	*out = strtoull(*p, &end, 16);
	if (end == *p || (*end != ' ' && *end != '\t'))
		return -EINVAL;
	*p = end + strspn(end, " \t");
	return 0;
}

/* "START SIZE NAME": hex numbers, 0x optional; NAME is the rest of the line (may hold spaces). */
static int parse_line(char *line, struct perfmap_sym *s)
{
	char *p = line;

	if (hex_field(&p, &s->start) || hex_field(&p, &s->size))
		return -EINVAL;
	p[strcspn(p, "\r\n")] = 0;
	if (!*p || !s->size)
		return -EINVAL;
	if (s->size > UINT64_MAX - s->start)
		s->size = UINT64_MAX - s->start;	/* a region up to the end of the address space */
	s->name = strdup(p);
	return s->name ? 0 : -ENOMEM;
}

int perfmap_parse(struct perfmap *m, FILE *f)
{
	char line[PERFMAP_MAX_LINE + 2];
	long long total = 0;
	size_t cap = 0;

	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);
		struct perfmap_sym s;

		total += len;
		if (len && line[len - 1] != '\n' && !feof(f)) {
			int c;

			/* longer than PERFMAP_MAX_LINE: skip the rest of it */
			while ((c = getc(f)) != EOF && c != '\n' && total < PERFMAP_MAX_BYTES)
				total++;
			m->bad_lines++;
		} else if (parse_line(line, &s)) {
			if (line[strspn(line, " \t\r\n")])
				m->bad_lines++;
		} else {
			if (m->nr == cap) {
				struct perfmap_sym *v = realloc(m->syms, (cap = cap ? cap * 2 : 256) * sizeof(*v));

				if (!v) {
					free(s.name);
					return -ENOMEM;
				}
				m->syms = v;
			}
			s.line = m->nr;
			m->syms[m->nr++] = s;
		}
		if (m->nr >= PERFMAP_MAX_SYMS || total >= PERFMAP_MAX_BYTES) {
			m->truncated = true;
			break;
		}
	}
	if (m->nr)	/* qsort(NULL, 0) is undefined */
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

static bool owner_ok(uid_t owner, const uid_t *uids, size_t nr)
{
	if (owner == 0)
		return true;
	for (size_t i = 0; i < nr; i++)
		if (uids[i] == owner)
			return true;
	return false;
}

int perfmap_open(struct perfmap *m, const char *path, const uid_t *uids, size_t nr, char *err, size_t errlen)
{
	struct stat st;
	int fd, r;

	memset(m, 0, sizeof(*m));
	/* no link followed, nothing but a regular file opened (a FIFO, a device planted there) */
	fd = user_file_open(path, O_NOFOLLOW, &st);
	if (fd < 0) {
		r = fd;
		err_set(err, errlen, "open %s: %s", path, r == -ELOOP ? "a symbolic link (not followed)" :
			r == -EINVAL ? "not a regular file" : strerror(-r));
		return r;
	}
	if (st.st_nlink > 1) {
		/* a hard link to someone else's file, made where the process' user can write */
		err_set(err, errlen, "%s: %lu hard links to it (a perf map has one)", path, (unsigned long)st.st_nlink);
		r = -EPERM;
		goto fail;
	}
	if (!owner_ok(st.st_uid, uids, nr)) {
		err_set(err, errlen, "%s: owned by uid %u, neither the process' user nor root", path,
			(unsigned int)st.st_uid);
		r = -EPERM;
		goto fail;
	}
	if (st.st_size > PERFMAP_MAX_BYTES) {
		err_set(err, errlen, "%s: %lld MiB, larger than the %lld MiB a perf map may have", path,
			(long long)st.st_size >> 20, PERFMAP_MAX_BYTES >> 20);
		r = -EFBIG;
		goto fail;
	}
	m->file_size = st.st_size;
	m->mtime_ns = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	if (!(m->path = strdup(path))) {
		err_set(err, errlen, "%s: out of memory", path);
		r = -ENOMEM;
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return r;
}

int perfmap_read(struct perfmap *m, int fd, char *err, size_t errlen)
{
	FILE *f = fdopen(fd, "re");
	int r;

	if (!f) {
		r = -errno;
		close(fd);
	} else {
		r = perfmap_parse(m, f);
		fclose(f);
	}
	if (r) {
		err_set(err, errlen, "%s: %s", m->path, strerror(-r));
		perfmap_free(m);
	}
	return r;
}

const struct perfmap_sym *perfmap_lookup(const struct perfmap *m, uint64_t addr)
{
	const struct perfmap_sym *best = NULL;
	size_t lo = SORTED_COUNT_LE(m->syms, m->nr, start, addr);

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
