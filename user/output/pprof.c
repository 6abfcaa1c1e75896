// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* A profile as gzipped pprof protobuf.  See pprof.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "lib/text_safe.h"
#include "lib/warn.h"
#include "output/pprof.h"
#include "profile.pb-c.h"

typedef Tmabpf__Pprof__Profile Profile;
typedef Tmabpf__Pprof__ValueType ValueType;
typedef Tmabpf__Pprof__Sample Sample;
typedef Tmabpf__Pprof__Label Label;
typedef Tmabpf__Pprof__Mapping Mapping;
typedef Tmabpf__Pprof__Location Location;
typedef Tmabpf__Pprof__Line Line;
typedef Tmabpf__Pprof__Function Function;

/* Every message of the profile, in arrays freed together. */
struct msgs {
	ValueType *types, **ptypes, period_type;
	Sample *samples, **psamples;
	Label *labels, **plabels;
	Mapping *maps, **pmaps;
	Location *locs, **plocs;
	Line *lines, **plines;
	Function *funcs, **pfuncs;
	int64_t *values;
};

static void msgs_free(struct msgs *m)
{
	free(m->types), free(m->ptypes), free(m->samples), free(m->psamples), free(m->labels), free(m->plabels);
	free(m->maps), free(m->pmaps), free(m->locs), free(m->plocs), free(m->lines), free(m->plines);
	free(m->funcs), free(m->pfuncs), free(m->values);
}

/* Label keys are string indexes the profile may not hold: the writer adds them to its own copy of
 * the table (strings past the profile's). */
enum { KEY_PID, KEY_THREAD, KEY_COMM, KEY_CGROUP, NKEYS };
static const char *const key_names[NKEYS] = { "pid", "thread", "comm", "cgroup" };

static int build(const struct profile *p, Profile *pr, struct msgs *m, char **strs)
{
	size_t ns = p->nsamples, nl = 4 * p->nsamples;
	size_t li = 0, main_map = SIZE_MAX, main_pos = 0;

	m->types = calloc(p->ntypes + 1, sizeof(*m->types));
	m->ptypes = calloc(p->ntypes + 1, sizeof(*m->ptypes));
	m->samples = calloc(ns + 1, sizeof(*m->samples));
	m->psamples = calloc(ns + 1, sizeof(*m->psamples));
	m->labels = calloc(nl + 1, sizeof(*m->labels));
	m->plabels = calloc(nl + 1, sizeof(*m->plabels));
	m->maps = calloc(p->nmaps + 1, sizeof(*m->maps));
	m->pmaps = calloc(p->nmaps + 1, sizeof(*m->pmaps));
	m->locs = calloc(p->nlocs + 1, sizeof(*m->locs));
	m->plocs = calloc(p->nlocs + 1, sizeof(*m->plocs));
	m->lines = calloc(p->nlocs + 1, sizeof(*m->lines));
	m->plines = calloc(p->nlocs + 1, sizeof(*m->plines));
	m->funcs = calloc(p->nfuncs + 1, sizeof(*m->funcs));
	m->pfuncs = calloc(p->nfuncs + 1, sizeof(*m->pfuncs));
	m->values = calloc(ns * p->ntypes + 1, sizeof(*m->values));
	if (!m->types || !m->ptypes || !m->samples || !m->psamples || !m->labels || !m->plabels || !m->maps ||
	    !m->pmaps || !m->locs || !m->plocs || !m->lines || !m->plines || !m->funcs || !m->pfuncs || !m->values)
		return -ENOMEM;
	tmabpf__pprof__profile__init(pr);
	for (int i = 0; i < p->ntypes; i++) {
		tmabpf__pprof__value_type__init(&m->types[i]);
		m->types[i].type = p->type[i];
		m->types[i].unit = p->unit[i];
		m->ptypes[i] = &m->types[i];
	}
	pr->n_sample_type = p->ntypes;
	pr->sample_type = m->ptypes;
	for (size_t i = 0; i < ns; i++) {
		const struct profile_sample *s = &p->samples[i];
		Sample *x = &m->samples[i];
		size_t first = li;

		tmabpf__pprof__sample__init(x);
		x->n_location_id = s->nlocs;
		x->location_id = s->locs;
		x->n_value = p->ntypes;
		x->value = m->values + i * p->ntypes;
		memcpy(x->value, s->values, p->ntypes * sizeof(*x->value));
		for (int k = 0; k < NKEYS; k++) {
			Label *l = &m->labels[li];

			tmabpf__pprof__label__init(l);
			l->key = (int64_t)(p->nstr + k);
			switch (k) {
			case KEY_PID: l->num = s->l.pid; break;
			case KEY_THREAD: l->num = s->l.tid; break;
			case KEY_COMM: l->str = s->comm; break;
			case KEY_CGROUP: l->str = s->cgroup; break;
			}
			if ((k == KEY_COMM || k == KEY_CGROUP) && !l->str)
				continue;	/* none */
			m->plabels[li] = l;
			li++;
		}
		x->n_label = li - first;
		x->label = m->plabels + first;
		m->psamples[i] = x;
	}
	pr->n_sample = ns;
	pr->sample = m->psamples;
	/* pprof takes the first mapping for the main binary: the executable sampled most goes first, the
	 * other user mappings after it in the order met, the kernel's last */
	for (size_t i = 0, k = 0; i < p->nmaps; i++) {
		k += p->maps[i].kernel;
		if (p->maps[i].exe && (main_map == SIZE_MAX || p->maps[i].frames > p->maps[main_map].frames)) {
			main_map = i;
			main_pos = i - k;
		}
	}
	for (size_t i = 0, k = 0; i < p->nmaps; i++) {
		const struct profile_mapping *pm = &p->maps[i];
		Mapping *x = &m->maps[i];
		size_t at = pm->kernel ? p->nmaps - 1 - k++ : i - k;

		if (main_map != SIZE_MAX && !pm->kernel)
			at = i == main_map ? 0 : at < main_pos ? at + 1 : at;
		tmabpf__pprof__mapping__init(x);
		x->id = i + 1;
		x->memory_start = pm->start;
		x->memory_limit = pm->end;
		x->file_offset = pm->pgoff;
		x->filename = pm->file;
		x->build_id = pm->build_id;
		x->has_functions = true;
		m->pmaps[at] = x;
	}
	pr->n_mapping = p->nmaps;
	pr->mapping = m->pmaps;
	for (size_t i = 0; i < p->nlocs; i++) {
		const struct profile_location *pl = &p->locs[i];
		Location *x = &m->locs[i];

		tmabpf__pprof__location__init(x);
		tmabpf__pprof__line__init(&m->lines[i]);
		m->lines[i].function_id = pl->function;
		m->plines[i] = &m->lines[i];
		x->id = i + 1;
		x->mapping_id = pl->mapping;
		x->address = pl->addr;
		x->n_line = 1;
		x->line = &m->plines[i];
		m->plocs[i] = x;
	}
	pr->n_location = p->nlocs;
	pr->location = m->plocs;
	for (size_t i = 0; i < p->nfuncs; i++) {
		Function *x = &m->funcs[i];

		tmabpf__pprof__function__init(x);
		x->id = i + 1;
		x->name = x->system_name = p->funcs[i].name;
		x->filename = p->funcs[i].file;
		m->pfuncs[i] = x;
	}
	pr->n_function = p->nfuncs;
	pr->function = m->pfuncs;
	memcpy(strs, p->str, p->nstr * sizeof(*strs));
	for (int k = 0; k < NKEYS; k++)
		strs[p->nstr + k] = (char *)key_names[k];
	pr->n_string_table = p->nstr + NKEYS;
	pr->string_table = strs;
	pr->time_nanos = (int64_t)p->time_ns;
	pr->duration_nanos = (int64_t)p->duration_ns;
	pr->default_sample_type = p->ntypes > 1 ? p->type[1] : 0;
	if (p->period_type) {
		tmabpf__pprof__value_type__init(&m->period_type);
		m->period_type.type = p->period_type;
		m->period_type.unit = p->period_unit;
		pr->period_type = &m->period_type;
		pr->period = p->period;
	}
	return 0;
}

static int gzip(const unsigned char *in, size_t len, unsigned char **out, size_t *outlen)
{
	z_stream z = {};
	uLong cap = compressBound(len) + 64;
	int r;

	if (!(*out = malloc(cap)))
		return -ENOMEM;
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(*out);
		return -ENOMEM;
	}
	z.next_in = (unsigned char *)in;
	z.avail_in = len;
	z.next_out = *out;
	z.avail_out = cap;
	r = deflate(&z, Z_FINISH);
	*outlen = z.total_out;
	deflateEnd(&z);
	if (r != Z_STREAM_END) {
		free(*out);
		return -EIO;
	}
	return 0;
}

/* The string table as protobuf strings must be: valid UTF-8 (go tool pprof and pprof's parsers may
 * refuse a profile otherwise), and without control characters; another user's comm, symbol or cgroup
 * name may hold any bytes: text_safe's copy of each such string, in owned[i] (freed by the caller). */
static int safe_strings(char **strs, size_t n, char **owned)
{
	char *buf = NULL;
	size_t cap = 0;
	int r = 0;

	for (size_t i = 0; i < n && !r; i++) {
		size_t len = strs[i] ? strlen(strs[i]) + 1 : 0;
		const char *s;

		if (len > cap) {
			char *b = realloc(buf, len);

			if (!b) {
				r = -ENOMEM;
				break;
			}
			buf = b;
			cap = len;
		}
		s = text_safe(strs[i], buf, len);	/* never longer than the string */
		if (s != strs[i] && !(strs[i] = owned[i] = strdup(s)))
			r = -ENOMEM;
	}
	free(buf);
	return r;
}

int pprof_encode(const struct profile *p, unsigned char **out, size_t *len, char *err, size_t errlen)
{
	struct msgs m = {};
	Profile pr;
	char **strs = malloc((p->nstr + NKEYS) * sizeof(*strs)), **owned = calloc(p->nstr + 1, sizeof(*owned));
	unsigned char *raw = NULL;
	size_t n;
	int r = strs && owned ? build(p, &pr, &m, strs) : -ENOMEM;

	*out = NULL;
	*len = 0;
	if (!r)
		r = safe_strings(strs, p->nstr, owned);
	if (!r) {
		n = tmabpf__pprof__profile__get_packed_size(&pr);
		if (!(raw = malloc(n ? n : 1)))
			r = -ENOMEM;
		else if (tmabpf__pprof__profile__pack(&pr, raw) != n)
			r = -EIO;
		else
			r = gzip(raw, n, out, len);
	}
	if (r)
		err_set(err, errlen, "encoding the pprof profile: %s", strerror(-r));
	free(raw);
	free(strs);
	for (size_t i = 0; owned && i < p->nstr; i++)
		free(owned[i]);
	free(owned);
	msgs_free(&m);
	return r;
}

int pprof_write(const struct profile *p, FILE *f, char *err, size_t errlen)
{
	unsigned char *buf;
	size_t len;
	int r = pprof_encode(p, &buf, &len, err, errlen);

	if (r)
		return r;
	if (fwrite(buf, 1, len, f) != len) {
		r = -errno;
		err_set(err, errlen, "writing the pprof profile: %s", strerror(errno));
	}
	free(buf);
	return r;
}
