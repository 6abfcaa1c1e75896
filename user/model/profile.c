// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* A profile of stack samples, pprof's model.  See profile.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/grow.h"
#include "model/profile.h"

/* Room for element n of v (a table of the profile): 0, or -1 out of memory. */
static int grow_into(void **v, size_t *cap, size_t n, size_t size)
{
	void *g = grow(*v, cap, n, size, 64);

	if (!g)
		return -1;
	*v = g;
	return 0;
}

#define GROW(v, n, cap) grow_into((void **)&(v), &(cap), (n), sizeof(*(v)))

static uint64_t mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x100000001b3ULL;
	return h ^ (h >> 29);
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h;
}

/* Index of s in the string table, added when new; 0 ("") for NULL or out of memory. */
static int64_t str_index(struct profile *p, const char *s)
{
	uint64_t h;
	void *v;

	if (!s || !*s)
		return 0;
	for (h = str_hash(s); (v = u64map_get(&p->str_idx, h)); h++)
		if (!strcmp(p->str[(uintptr_t)v - 1], s))
			return (int64_t)((uintptr_t)v - 1);
	if (GROW(p->str, p->nstr, p->cap_str) || !(p->str[p->nstr] = strdup(s)))
		goto nomem;
	if (u64map_put(&p->str_idx, h, (void *)(uintptr_t)(p->nstr + 1))) {
		free(p->str[p->nstr]);
		goto nomem;
	}
	return (int64_t)p->nstr++;
nomem:
	p->nomem = true;
	return 0;
}

void profile_set_period(struct profile *p, const char *type, const char *unit, long long period)
{
	p->period_type = str_index(p, type);
	p->period_unit = str_index(p, unit);
	p->period = period;
}

int profile_init(struct profile *p, int ntypes, const char *const *type, const char *const *unit,
		 size_t max_samples)
{
	memset(p, 0, sizeof(*p));
	if (ntypes > PROFILE_MAX_TYPES)
		return -EINVAL;
	p->max_samples = max_samples;
	if (GROW(p->str, p->nstr, p->cap_str) || !(p->str[0] = strdup("")))
		return -ENOMEM;
	p->nstr = 1;
	p->ntypes = ntypes;
	for (int i = 0; i < ntypes; i++) {
		p->type[i] = str_index(p, type[i]);
		p->unit[i] = str_index(p, unit[i]);
	}
	return p->nomem ? -ENOMEM : 0;
}

const char *profile_event_unit(const char *event)
{
	return !strcmp(event, "task-clock") || !strcmp(event, "cpu-clock") ? "nanoseconds" : "count";
}

/* Mapping id (index + 1) of a frame; 0 when it has none (unmapped user address). */
static uint64_t mapping_of(struct profile *p, const struct sym_info *si)
{
	bool kernel = si->kind == SYM_KERNEL;
	int64_t file = kernel ? str_index(p, si->module) : str_index(p, si->map.path);
	uint64_t h;
	void *v;

	if (!kernel && !si->map.end)
		return 0;
	h = mix(mix(mix(kernel, si->map.start), si->map.end), (uint64_t)file);
	for (; (v = u64map_get(&p->map_idx, h)); h++) {
		const struct profile_mapping *m = &p->maps[(uintptr_t)v - 1];

		if (m->kernel == kernel && m->start == si->map.start && m->end == si->map.end && m->file == file)
			return (uintptr_t)v;
	}
	if (GROW(p->maps, p->nmaps, p->cap_maps) || u64map_put(&p->map_idx, h, (void *)(uintptr_t)(p->nmaps + 1))) {
		p->nomem = true;
		return 0;
	}
	p->maps[p->nmaps] = (struct profile_mapping){ .start = kernel ? 0 : si->map.start,
						      .end = kernel ? ~0ULL : si->map.end, .pgoff = si->map.pgoff,
						      .file = file, .build_id = str_index(p, si->map.build_id),
						      .kernel = kernel, .exe = !kernel && si->map.exe };
	return ++p->nmaps;
}

static uint64_t function_of(struct profile *p, const char *name, const char *module)
{
	int64_t n = str_index(p, name), f = str_index(p, module);
	uint64_t h = mix(mix(0x5bd1e995, (uint64_t)n), (uint64_t)f);
	void *v;

	for (; (v = u64map_get(&p->func_idx, h)); h++) {
		const struct profile_function *x = &p->funcs[(uintptr_t)v - 1];

		if (x->name == n && x->file == f)
			return (uintptr_t)v;
	}
	if (GROW(p->funcs, p->nfuncs, p->cap_funcs) || u64map_put(&p->func_idx, h, (void *)(uintptr_t)(p->nfuncs + 1))) {
		p->nomem = true;
		return 0;
	}
	p->funcs[p->nfuncs] = (struct profile_function){ .name = n, .file = f };
	return ++p->nfuncs;
}

/* Location id of a frame: (mapping, address), named by its function (or "module+0xOFF"). */
static uint64_t location_of(struct profile *p, uint32_t pid, const struct profile_frame *fr, const char *label)
{
	uint64_t map = mapping_of(p, &fr->si), fn = function_of(p, label, fr->si.module), h;
	void *v;

	/* unmapped user addresses: per process (the same address is other code elsewhere) */
	h = mix(mix(mix(mix(0x9e3779b97f4a7c15ULL, map), fr->addr), map ? 0 : pid), fn);
	for (; (v = u64map_get(&p->loc_idx, h)); h++) {
		const struct profile_location *l = &p->locs[(uintptr_t)v - 1];

		if (l->mapping == map && l->addr == fr->addr && l->function == fn)
			return (uintptr_t)v;
	}
	if (GROW(p->locs, p->nlocs, p->cap_locs) || u64map_put(&p->loc_idx, h, (void *)(uintptr_t)(p->nlocs + 1))) {
		p->nomem = true;
		return 0;
	}
	p->locs[p->nlocs] = (struct profile_location){ .mapping = map, .addr = fr->addr, .function = fn };
	return ++p->nlocs;
}

static bool same_sample(const struct profile_sample *s, const uint64_t *locs, int n, const struct profile_labels *l,
			int64_t comm, int64_t cgroup)
{
	return s->nlocs == n && s->l.pid == l->pid && s->l.tid == l->tid && s->comm == comm && s->cgroup == cgroup &&
	       !memcmp(s->locs, locs, n * sizeof(*locs));
}

void profile_add(struct profile *p, const struct profile_frame *f, int nframes, const long long *values,
		 const struct profile_labels *l)
{
	uint64_t locs[PROFILE_MAX_DEPTH], h;
	int64_t comm = str_index(p, l->comm), cgroup = str_index(p, l->cgroup);
	struct profile_sample *s;
	struct profile_frame more = {};
	struct profile_labels ml;
	int n = 0;
	void *v;

	if (nframes > PROFILE_MAX_DEPTH)
		nframes = PROFILE_MAX_DEPTH;
	if (p->nsamples >= p->max_samples) {	/* full: the process's "[more stacks]" sample */
		more.si.module = "[more stacks]";
		f = &more;
		nframes = 1;
		p->truncated++;
		ml = (struct profile_labels){ .pid = l->pid, .comm = l->comm, .cgroup = l->cgroup };
		if (p->nsamples >= p->max_samples + PROFILE_MORE(p->max_samples))
			ml = (struct profile_labels){ .comm = "[more processes]" };	/* ... and past those, one */
		l = &ml;
		comm = str_index(p, l->comm);
		cgroup = str_index(p, l->cgroup);
	}
	for (int i = 0; i < nframes; i++) {
		char label[64];
		const char *name = f[i].si.name;

		if (!name && !strcmp(f[i].si.module, "[unknown]")) {
			name = "[unknown]";	/* in no mapping: one function, as perf's [unknown] (the address stays) */
		} else if (!name) {
			snprintf(label, sizeof(label), "%s+0x%llx", f[i].si.module, (unsigned long long)f[i].si.offset);
			name = label;
		}
		if ((locs[n] = location_of(p, l->pid, &f[i], name))) {
			uint64_t m = p->locs[locs[n] - 1].mapping;

			if (m)
				p->maps[m - 1].frames++;
			n++;
		}
	}
	h = mix(mix(mix(mix(0x2545f4914f6cdd1dULL, l->pid), l->tid), (uint64_t)comm), (uint64_t)cgroup);
	for (int i = 0; i < n; i++)
		h = mix(h, locs[i]);
	for (; (v = u64map_get(&p->sample_idx, h)); h++) {
		s = &p->samples[(uintptr_t)v - 1];
		if (same_sample(s, locs, n, l, comm, cgroup))
			goto add;
	}
	if (GROW(p->samples, p->nsamples, p->cap_samples))
		goto nomem;
	s = &p->samples[p->nsamples];
	*s = (struct profile_sample){ .nlocs = n, .l = *l, .comm = comm, .cgroup = cgroup };
	s->locs = malloc((n ? n : 1) * sizeof(*locs));
	s->values = calloc(p->ntypes ? p->ntypes : 1, sizeof(*s->values));
	if (!s->locs || !s->values || u64map_put(&p->sample_idx, h, (void *)(uintptr_t)(p->nsamples + 1))) {
		free(s->locs);
		free(s->values);
		goto nomem;
	}
	memcpy(s->locs, locs, n * sizeof(*locs));
	s->l.comm = s->l.cgroup = NULL;
	p->nsamples++;
add:
	for (int i = 0; i < p->ntypes; i++)
		s->values[i] += values[i];
	return;
nomem:
	p->nomem = true;
}

void profile_free(struct profile *p)
{
	for (size_t i = 0; i < p->nstr; i++)
		free(p->str[i]);
	free(p->str);
	for (size_t i = 0; i < p->nsamples; i++) {
		free(p->samples[i].locs);
		free(p->samples[i].values);
	}
	free(p->samples);
	free(p->maps);
	free(p->funcs);
	free(p->locs);
	u64map_free(&p->str_idx);
	u64map_free(&p->map_idx);
	u64map_free(&p->func_idx);
	u64map_free(&p->loc_idx);
	u64map_free(&p->sample_idx);
	memset(p, 0, sizeof(*p));
}
