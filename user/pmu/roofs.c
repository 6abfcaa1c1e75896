// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* This host's measured roofs: identity, the cache file, the roofline model (roofs.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <json-c/json.h>
#include "lib/outfile.h"
#include "lib/warn.h"
#include "pmu/roofs.h"

static const char *const prec_names[ROOF__PRECS] = { "sp", "dp" };
static const char *const bw_names[ROOF__BWS] = { "read", "triad", "copy" };
static const char *const level_names[ROOF__LEVELS] = { "L1", "L2", "L3", "DRAM" };
static const char *const thread_names[ROOF__THREADS] = { "1", "all" };

const char *roof_prec_name(enum roof_prec p) { return prec_names[p]; }
const char *roof_bw_name(enum roof_bw b) { return bw_names[b]; }
const char *roof_level_name(enum roof_level l) { return level_names[l]; }

/* The value after "key<spaces>:" on the first line of text that starts with key. */
static void cpuinfo_field(const char *text, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);

	out[0] = 0;
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *v, *e;

		if (strncmp(p, key, kl) || (p[kl] != ' ' && p[kl] != '\t' && p[kl] != ':'))
			continue;
		v = strchr(p, ':');
		e = strchr(p, '\n');
		if (!v || (e && v > e))
			continue;
		for (v++; *v == ' '; v++)
			;
		if (!e)
			e = v + strlen(v);
		snprintf(out, len, "%.*s", (int)(e - v), v);
		return;
	}
}

static const char *widest_isa(const char *cpuinfo)
{
	char flags[4096];

#if defined(__aarch64__)
	cpuinfo_field(cpuinfo, "Features", flags, sizeof(flags));
	return strstr(flags, "asimd") ? "neon" : "scalar";
#else
	cpuinfo_field(cpuinfo, "flags", flags, sizeof(flags));
	strcat(flags, " ");
	if (strstr(flags, " avx512f "))
		return "avx512";
	if (strstr(flags, " avx2 ") && strstr(flags, " fma "))
		return "avx2";
	if (strstr(flags, " sse2 "))
		return "sse";
	return "scalar";
#endif
}

/* At most max bytes of path (NUL-terminated, malloc'd), stopping at the first blank line when
 * one_block (cpuinfo's first processor).  NULL when unreadable. */
static char *read_text(const char *path, size_t max, bool one_block)
{
	FILE *f = fopen(path, "re");
	char *buf = f ? malloc(max + 1) : NULL;
	size_t n = 0;

	if (!buf) {
		if (f)
			fclose(f);
		return NULL;
	}
	while (n < max && fgets(buf + n, (int)(max + 1 - n), f)) {
		if (one_block && buf[n] == '\n' && n > 0)
			break;
		n += strlen(buf + n);
	}
	buf[n] = 0;
	fclose(f);
	return buf;
}

void roofs_host_now(struct roof_host *h)
{
	char *text = read_text("/proc/cpuinfo", 1 << 16, true);
	struct utsname u;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	memset(h, 0, sizeof(*h));
	if (text) {
		cpuinfo_field(text, "model name", h->cpu, sizeof(h->cpu));
		if (!h->cpu[0])	/* arm64: no model name */
			cpuinfo_field(text, "CPU part", h->cpu, sizeof(h->cpu));
		cpuinfo_field(text, "microcode", h->microcode, sizeof(h->microcode));
		snprintf(h->isa, sizeof(h->isa), "%s", widest_isa(text));
	}
	free(text);
	if (uname(&u) == 0)
		snprintf(h->kernel, sizeof(h->kernel), "%s", u.release);
	h->cpus = n > 0 ? (int)n : 1;
}

void roofs_cache_sizes(uint64_t bytes[ROOF_DRAM])
{
	for (int l = 0; l < ROOF_DRAM; l++)
		bytes[l] = 0;
	for (int i = 0; i < 8; i++) {
		char path[96], buf[32], type[32];
		int level;
		unsigned long long kb;
		FILE *f;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
		if (!(f = fopen(path, "r")))
			break;
		level = fscanf(f, "%d", &level) == 1 ? level : 0;
		fclose(f);
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
		type[0] = 0;
		if ((f = fopen(path, "r"))) {
			if (!fgets(type, sizeof(type), f))
				type[0] = 0;
			fclose(f);
		}
		if (!strncmp(type, "Instruction", 11) || level < 1 || level > 3)
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		if (!(f = fopen(path, "r")))
			continue;
		if (fgets(buf, sizeof(buf), f) && sscanf(buf, "%llu", &kb) == 1)
			bytes[level - 1] = kb * (strchr(buf, 'M') ? 1024 * 1024 : 1024);
		fclose(f);
	}
}

double roof_spread(const struct roof_figure *f)
{
	return f->valid && f->median > 0 ? (f->max - f->min) / f->median : 0;
}

double roof_at(const struct roofs *r, enum roof_prec p, enum roof_level l, enum roof_threads t, double ai)
{
	const struct roof_figure *peak = &r->flops[p][t], *bw = &r->bw[ROOF_READ][l][t];
	double mem;

	if (!peak->valid || !bw->valid || !(ai > 0))
		return 0;
	mem = bw->median * ai;
	return mem < peak->median ? mem : peak->median;
}

/* ---------- the cache file ---------- */

static struct json_object *figure_json(const struct roof_figure *f)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "median", json_object_new_double(f->median));
	json_object_object_add(o, "min", json_object_new_double(f->min));
	json_object_object_add(o, "max", json_object_new_double(f->max));
	json_object_object_add(o, "spread", json_object_new_double(roof_spread(f)));
	json_object_object_add(o, "repeats", json_object_new_int(f->repeats));
	json_object_object_add(o, "working_set_bytes", json_object_new_uint64(f->ws_bytes));
	json_object_object_add(o, "likwid_test", json_object_new_string(f->kernel));
	return o;
}

static struct json_object *roofs_json(const struct roofs *r)
{
	struct json_object *doc = json_object_new_object(), *host = json_object_new_object();
	struct json_object *flops = json_object_new_array(), *bw = json_object_new_array();

	json_object_object_add(doc, "format", json_object_new_int(ROOFS_FORMAT));
	json_object_object_add(host, "cpu", json_object_new_string(r->host.cpu));
	json_object_object_add(host, "microcode", json_object_new_string(r->host.microcode));
	json_object_object_add(host, "kernel", json_object_new_string(r->host.kernel));
	json_object_object_add(host, "isa", json_object_new_string(r->host.isa));
	json_object_object_add(host, "cpus", json_object_new_int(r->host.cpus));
	json_object_object_add(doc, "host", host);
	json_object_object_add(doc, "measured_at", json_object_new_int64(r->measured_at));
	json_object_object_add(doc, "threads_one", json_object_new_int(r->threads[ROOF_ONE]));
	json_object_object_add(doc, "threads_all", json_object_new_int(r->threads[ROOF_ALL]));
	json_object_object_add(doc, "l1d_bytes", json_object_new_uint64(r->cache_bytes[ROOF_L1]));
	json_object_object_add(doc, "l2_bytes", json_object_new_uint64(r->cache_bytes[ROOF_L2]));
	json_object_object_add(doc, "l3_bytes", json_object_new_uint64(r->cache_bytes[ROOF_L3]));
	for (int p = 0; p < ROOF__PRECS; p++)
		for (int t = 0; t < ROOF__THREADS; t++) {
			struct json_object *e;

			if (!r->flops[p][t].valid)
				continue;
			e = json_object_new_object();
			json_object_object_add(e, "precision", json_object_new_string(prec_names[p]));
			json_object_object_add(e, "threads", json_object_new_string(thread_names[t]));
			json_object_object_add(e, "flop_per_s", figure_json(&r->flops[p][t]));
			json_object_array_add(flops, e);
		}
	for (int b = 0; b < ROOF__BWS; b++)
		for (int l = 0; l < ROOF__LEVELS; l++)
			for (int t = 0; t < ROOF__THREADS; t++) {
				struct json_object *e;

				if (!r->bw[b][l][t].valid)
					continue;
				e = json_object_new_object();
				json_object_object_add(e, "kind", json_object_new_string(bw_names[b]));
				json_object_object_add(e, "level", json_object_new_string(level_names[l]));
				json_object_object_add(e, "threads", json_object_new_string(thread_names[t]));
				json_object_object_add(e, "bytes_per_s", figure_json(&r->bw[b][l][t]));
				json_object_array_add(bw, e);
			}
	json_object_object_add(doc, "flops", flops);
	json_object_object_add(doc, "bandwidth", bw);
	return doc;
}

int roofs_save(const struct roofs *r, const char *path, char *err, size_t errlen)
{
	struct outfile o = { 0 };
	struct json_object *doc;
	char dir[4096], *slash;
	int e;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		if (mkdir(dir, 0755) && errno != EEXIST) {
			e = -errno;
			err_set(err, errlen, "cannot create %s: %s", dir, strerror(errno));
			return e;
		}
	}
	e = outfile_open(&o, "roofs", path, OUTFILE_AT_END, 0644, err, errlen);
	if (e)
		return e;
	doc = roofs_json(r);
	fputs(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED), o.f);
	fputc('\n', o.f);
	json_object_put(doc);
	return outfile_commit(&o, err, errlen);
}

static int name_index(const char *s, const char *const *names, int n)
{
	for (int i = 0; s && i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

static const char *jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
		json_object_get_string(v) : NULL;
}

static bool jnum(struct json_object *o, const char *key, double *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		return false;
	*out = json_object_get_double(v);
	return true;
}

static bool read_figure(struct json_object *o, const char *key, struct roof_figure *f)
{
	struct json_object *v;
	double reps = 0, ws = 0;
	const char *k;

	if (!json_object_object_get_ex(o, key, &v) || !jnum(v, "median", &f->median) ||
	    !jnum(v, "min", &f->min) || !jnum(v, "max", &f->max) || !jnum(v, "repeats", &reps) ||
	    !(f->median > 0) || !(f->min <= f->median) || !(f->median <= f->max) || reps < 1)
		return false;
	jnum(v, "working_set_bytes", &ws);
	f->repeats = (int)reps;
	f->ws_bytes = (uint64_t)ws;
	k = jstr(v, "likwid_test");
	snprintf(f->kernel, sizeof(f->kernel), "%s", k ? k : "");
	f->valid = true;
	return true;
}

static int parse_doc(struct roofs *r, struct json_object *doc)
{
	struct json_object *host, *arr;
	double v;
	const char *s;

	if (!jnum(doc, "format", &v) || v != ROOFS_FORMAT || !json_object_object_get_ex(doc, "host", &host))
		return -EINVAL;
	snprintf(r->host.cpu, sizeof(r->host.cpu), "%s", (s = jstr(host, "cpu")) ? s : "");
	snprintf(r->host.microcode, sizeof(r->host.microcode), "%s", (s = jstr(host, "microcode")) ? s : "");
	snprintf(r->host.kernel, sizeof(r->host.kernel), "%s", (s = jstr(host, "kernel")) ? s : "");
	snprintf(r->host.isa, sizeof(r->host.isa), "%s", (s = jstr(host, "isa")) ? s : "");
	r->host.cpus = jnum(host, "cpus", &v) ? (int)v : 0;
	r->measured_at = jnum(doc, "measured_at", &v) ? (int64_t)v : 0;
	r->threads[ROOF_ONE] = jnum(doc, "threads_one", &v) ? (int)v : 1;
	r->threads[ROOF_ALL] = jnum(doc, "threads_all", &v) ? (int)v : r->host.cpus;
	r->cache_bytes[ROOF_L1] = jnum(doc, "l1d_bytes", &v) ? (uint64_t)v : 0;
	r->cache_bytes[ROOF_L2] = jnum(doc, "l2_bytes", &v) ? (uint64_t)v : 0;
	r->cache_bytes[ROOF_L3] = jnum(doc, "l3_bytes", &v) ? (uint64_t)v : 0;
	if (json_object_object_get_ex(doc, "flops", &arr) && json_object_is_type(arr, json_type_array))
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			struct json_object *e = json_object_array_get_idx(arr, i);
			int p = name_index(jstr(e, "precision"), prec_names, ROOF__PRECS);
			int t = name_index(jstr(e, "threads"), thread_names, ROOF__THREADS);

			if (p < 0 || t < 0 || !read_figure(e, "flop_per_s", &r->flops[p][t]))
				return -EINVAL;
		}
	if (json_object_object_get_ex(doc, "bandwidth", &arr) && json_object_is_type(arr, json_type_array))
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			struct json_object *e = json_object_array_get_idx(arr, i);
			int b = name_index(jstr(e, "kind"), bw_names, ROOF__BWS);
			int l = name_index(jstr(e, "level"), level_names, ROOF__LEVELS);
			int t = name_index(jstr(e, "threads"), thread_names, ROOF__THREADS);

			if (b < 0 || l < 0 || t < 0 || !read_figure(e, "bytes_per_s", &r->bw[b][l][t]))
				return -EINVAL;
		}
	return 0;
}

#define ROOFS_MAX_FILE (1 << 20)

int roofs_load(struct roofs *r, const char *path, const struct roof_host *now, char *err, size_t errlen)
{
	struct json_object *doc;
	char *text;
	struct stat st;
	double old;
	int e;

	memset(r, 0, sizeof(*r));
	if (lstat(path, &st)) {
		e = -errno;
		err_set(err, errlen, "%s: %s", path, strerror(errno));
		return e;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > ROOFS_MAX_FILE) {
		err_set(err, errlen, "%s: not a roofs file (%s)", path,
			S_ISREG(st.st_mode) ? "larger than 1 MiB" : "not a regular file");
		return -EINVAL;
	}
	text = read_text(path, ROOFS_MAX_FILE, false);
	if (!text) {
		e = -errno;
		err_set(err, errlen, "%s: %s", path, strerror(errno));
		return e;
	}
	doc = json_tokener_parse(text);
	free(text);
	e = doc ? parse_doc(r, doc) : -EINVAL;
	if (e && doc && json_object_is_type(doc, json_type_object) && jnum(doc, "format", &old) && old >= 1 &&
	    old < ROOFS_FORMAT) {
		json_object_put(doc);
		err_set(err, errlen, "%s: roofs of format %g, measured by an older tmabpf%s; this one reads format %d: "
			"measure again with 'tmabpf roofs'", path, old,
			old == 1 ? " (its copy figures used non-temporal stores)" : "", ROOFS_FORMAT);
		return e;
	}
	json_object_put(doc);
	if (e) {
		err_set(err, errlen, "%s: not a tmabpf roofs file of format %d: measure again with 'tmabpf roofs'",
			path, ROOFS_FORMAT);
		return e;
	}
	if (strcmp(r->host.cpu, now->cpu) || strcmp(r->host.microcode, now->microcode) ||
	    r->host.cpus != now->cpus) {
		err_set(err, errlen,
			"%s was measured on another host ('%s', microcode %s, %d CPUs; this one: '%s', microcode %s, "
			"%d CPUs): measure again with 'tmabpf roofs'",
			path, r->host.cpu, r->host.microcode[0] ? r->host.microcode : "?", r->host.cpus, now->cpu,
			now->microcode[0] ? now->microcode : "?", now->cpus);
		return -ESTALE;
	}
	return 0;
}
