// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Event specifications: perf-style names to perf_event_attr.
 *   software names (page-faults, cpu-clock, ...), generic hardware names
 *   (cycles, instructions, ...), raw rUUEE, and pmu/term=val,.../ resolved
 *   through /sys/bus/event_source/devices/PMU/{type,format,events}.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/suggest.h"
#include "lib/warn.h"
#include "pmu/cpu_detect.h"
#include "pmu/key_encode.h"
#include "pmu/events.h"
#include "pmu/pfm_enc.h"
#include "tma/tma_keys.h"
#include "tma/tma_recipes.h"

#define SYSFS_PMUS "/sys/bus/event_source/devices"

struct named_event {
	const char *name;
	const char *alias;
	__u32 type;
	__u64 config;
};

static const struct named_event named_events[] = {
	{ "cpu-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "minor-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "alignment-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
	{ "dummy", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY },
	{ "cycles", "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
};

/* Append "; did you mean 'page-faults'?" to err when tok is near a named event. */
static void named_event_suggest(const char *tok, char *err, size_t errlen)
{
	const char *names[2 * sizeof(named_events) / sizeof(named_events[0])], *near;
	size_t n = 0, len = strlen(err);

	for (size_t i = 0; i < sizeof(named_events) / sizeof(named_events[0]); i++) {
		names[n++] = named_events[i].name;
		if (named_events[i].alias)
			names[n++] = named_events[i].alias;
	}
	if ((near = suggest_nearest(tok, names, n)) && len < errlen)
		snprintf(err + len, errlen - len, "; did you mean '%s'?", near);
}

const char *events_type_name(__u32 type)
{
	switch (type) {
	case PERF_TYPE_HARDWARE: return "hardware";
	case PERF_TYPE_SOFTWARE: return "software";
	case PERF_TYPE_TRACEPOINT: return "tracepoint";
	case PERF_TYPE_HW_CACHE: return "hw_cache";
	case PERF_TYPE_RAW: return "raw";
	case PERF_TYPE_BREAKPOINT: return "breakpoint";
	default: return "dynamic";
	}
}

static void desc_init(struct event_desc *d, const char *name, const char *pmu, __u32 type, __u64 config)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(d->pmu, sizeof(d->pmu), "%s", pmu);
	d->attr.size = sizeof(d->attr);
	d->attr.type = type;
	d->attr.config = config;
	d->group = -1;
}

static int parse_named(const char *tok, struct event_desc *d)
{
	for (size_t i = 0; i < sizeof(named_events) / sizeof(named_events[0]); i++) {
		const struct named_event *n = &named_events[i];

		if (strcmp(tok, n->name) && (!n->alias || strcmp(tok, n->alias)))
			continue;
		desc_init(d, n->name, n->type == PERF_TYPE_SOFTWARE ? "software" : "hardware",
			  n->type, n->config);
		return 0;
	}
	return -ENOENT;
}

/* rNNN: raw hardware event, hex. */
static int parse_raw(const char *tok, struct event_desc *d, char *err, size_t errlen)
{
	char *end;
	unsigned long long v;

	if (tok[0] != 'r' || !isxdigit((unsigned char)tok[1]))
		return -ENOENT;
	errno = 0;
	v = strtoull(tok + 1, &end, 16);
	if (errno || *end) {
		err_set(err, errlen, "bad raw event '%s': expected rHEX, e.g. r01c2", tok);
		return -EINVAL;
	}
	desc_init(d, tok, "raw", PERF_TYPE_RAW, v);
	return 0;
}

/* perf's sysfs format files for the core PMU, per vendor (used when the host
 * has no cpu PMU, or when --cpu names another machine's CPU) */
struct builtin_format { const char *term, *fmt; };
static const struct builtin_format intel_formats[] = {
	{ "event", "config:0-7" }, { "umask", "config:8-15" }, { "edge", "config:18" }, { "pc", "config:19" },
	{ "any", "config:21" }, { "inv", "config:23" }, { "cmask", "config:24-31" }, { "in_tx", "config:32" },
	{ "in_tx_cp", "config:33" }, { "offcore_rsp", "config1:0-63" }, { "ldlat", "config1:0-15" },
	{ "frontend", "config1:0-23" }, { NULL, NULL },
};
static const struct builtin_format amd_formats[] = {
	{ "event", "config:0-7,32-35" }, { "umask", "config:8-15" }, { "edge", "config:18" }, { "inv", "config:23" },
	{ "cmask", "config:24-31" }, { NULL, NULL },
};
static const struct builtin_format arm_formats[] = {
	{ "event", "config:0-15" }, { "long", "config1:0" }, { NULL, NULL },
};

/* vendor of the target CPU, or of the host when it has no recipe; -1 unknown */
static int target_vendor(const struct tma_cpu *c)
{
	static int host = -2;	/* a memo of /proc/cpuinfo's vendor: a fact of the host */

	if (c)
		return (int)c->vendor;
	if (host == -2) {
		char line[256];
		FILE *f = fopen("/proc/cpuinfo", "r");
		host = -1;
		while (f && fgets(line, sizeof(line), f)) {
			if (!strncmp(line, "vendor_id", 9)) {
				host = strstr(line, "GenuineIntel") ? TMA_INTEL : strstr(line, "AuthenticAMD") ? TMA_AMD : -1;
				break;
			}
			if (!strncmp(line, "CPU implementer", 15)) {
				host = TMA_ARM;
				break;
			}
		}
		if (f)
			fclose(f);
	}
	return host;
}

static const char *builtin_format(const struct tma_cpu *c, const char *term)
{
	const struct builtin_format *t;
	int v = target_vendor(c);

	if (v < 0)
		return NULL;
	t = v == TMA_INTEL ? intel_formats : v == TMA_AMD ? amd_formats : arm_formats;
	for (; t->term; t++)
		if (!strcmp(t->term, term))
			return t->fmt;
	return NULL;
}

static bool is_core_pmu(const char *pmu)
{
	return !strcmp(pmu, "cpu") || !strcmp(pmu, "cpu_core") || !strncmp(pmu, "armv8_pmuv3", 11);
}

static bool use_builtin(const struct tma_cpu *c, const char *pmu)
{
	char path[256];

	if (!is_core_pmu(pmu))
		return false;
	if (c)	/* a recipe CPU (--cpu NAME, or the detected host's): encode for it */
		return true;
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", pmu);
	return access(path, R_OK) != 0;
}

/* A hardware event name for the target CPU: the TMA recipe's table, then libpfm4. */
static int parse_hw_name(const struct tma_cpu *c, const char *tok, struct event_desc *d, char *err, size_t errlen)
{
	char key[TMA_KEY_LEN], e2[256];
	struct pfm_enc_out o;

	if (!c)
		return -ENOENT;
	desc_init(d, tok, "cpu", PERF_TYPE_RAW, 0);
	if (!tma_event_key(tok, key, sizeof(key)) && !tma_encode_key(c, key, &d->attr, e2, sizeof(e2))) {
		for (int i = 0; i < c->nev; i++)	/* only the recipe's explicit entries; the rest via libpfm4 */
			if (!strcmp(c->ev[i].key, key))
				return 0;
	}
	if (!c->pfm_pmu)
		return -ENOENT;
	if (pfm_enc_event(c->pfm_pmu, tok, &o, NULL, 0, err, errlen))
		return -ENOENT;
	d->attr.type = o.type;
	d->attr.config = o.config;
	d->attr.config1 = o.config1;
	d->attr.config2 = o.config2;
	d->attr.exclude_guest = 1;
	return 0;
}

static int read_sysfs_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* Apply value v to the bit ranges in a format string like "config:0-7,32-35" or "config1:3". */
static int apply_format(struct perf_event_attr *a, const char *fmt, __u64 v, char *err, size_t errlen)
{
	char field[16];
	const char *p = strchr(fmt, ':');
	int shift = 0;

	if (!p || (size_t)(p - fmt) >= sizeof(field))
		goto bad;
	memcpy(field, fmt, p - fmt);
	field[p - fmt] = 0;
	__u64 *dst = !strcmp(field, "config") ? &a->config :
		     !strcmp(field, "config1") ? &a->config1 :
		     !strcmp(field, "config2") ? &a->config2 : NULL;
	if (!dst)
		goto bad;
	for (p++; *p;) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p)
			goto bad;
		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		if (lo < 0 || hi > 63 || hi < lo)
			goto bad;
		int width = (int)(hi - lo + 1);
		__u64 mask = width == 64 ? ~0ULL : ((1ULL << width) - 1);
		*dst &= ~(mask << lo);	/* a later term overrides, e.g. cpu/EV,cmask=2/ */
		*dst |= ((v >> shift) & mask) << lo;
		shift += width;
		p = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			goto bad;
	}
	return 0;
bad:
	err_set(err, errlen, "cannot use PMU format '%s'", fmt);
	return -EINVAL;
}

static int apply_term(const struct tma_cpu *c, const char *pmu, struct perf_event_attr *a, const char *term, char *err,
		      size_t errlen);

/* A sysfs alias (pmu/events/NAME) holds terms like "event=0x3c,umask=0x1". */
static int apply_terms(const struct tma_cpu *c, const char *pmu, struct perf_event_attr *a, char *terms, char *err,
		       size_t errlen)
{
	char *save = NULL;

	for (char *t = strtok_r(terms, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int r = apply_term(c, pmu, a, t, err, errlen);

		if (r)
			return r;
	}
	return 0;
}

static int apply_term(const struct tma_cpu *c, const char *pmu, struct perf_event_attr *a, const char *term, char *err,
		      size_t errlen)
{
	char path[512], fmt[128], name[64];
	const char *eq = strchr(term, '=');
	unsigned long long v = 1;
	size_t nlen = eq ? (size_t)(eq - term) : strlen(term);

	if (nlen == 0 || nlen >= sizeof(name)) {
		err_set(err, errlen, "malformed term '%s' in %s/.../", term, pmu);
		return -EINVAL;
	}
	memcpy(name, term, nlen);
	name[nlen] = 0;
	if (eq) {
		char *end;

		errno = 0;
		v = strtoull(eq + 1, &end, 0);
		if (errno || end == eq + 1 || *end) {
			err_set(err, errlen, "bad value in term '%s' of %s/.../: expected a number", term, pmu);
			return -EINVAL;
		}
	}
	if (!strcmp(name, "config")) { a->config = v; return 0; }
	if (!strcmp(name, "config1")) { a->config1 = v; return 0; }
	if (!strcmp(name, "config2")) { a->config2 = v; return 0; }
	if (use_builtin(c, pmu)) {
		const char *bf = builtin_format(c, name);
		if (bf)
			return apply_format(a, bf, v, err, errlen);
		err_set(err, errlen, "unknown term '%s' in %s/.../ for %s (terms: event, umask, cmask, edge, inv%s)",
			 name, pmu, c ? tma_cpu_name(c) : "this CPU", target_vendor(c) == TMA_INTEL ? ", any, ldlat, offcore_rsp" : "");
		return -ENOENT;
	}
	snprintf(path, sizeof(path), SYSFS_PMUS "/%s/format/%s", pmu, name);
	if (read_sysfs_line(path, fmt, sizeof(fmt)) == 0)
		return apply_format(a, fmt, v, err, errlen);
	if (!eq) { /* a named event of that PMU, e.g. msr/tsc/ */
		char terms[256];

		snprintf(path, sizeof(path), SYSFS_PMUS "/%s/events/%s", pmu, name);
		if (read_sysfs_line(path, terms, sizeof(terms)) == 0)
			return apply_terms(c, pmu, a, terms, err, errlen);
	}
	err_set(err, errlen, "PMU '%s' has no term or event '%s' (see %s/%s/format and events)",
		 pmu, name, SYSFS_PMUS, pmu);
	return -ENOENT;
}

/* pmu/term,term=val,.../ */
static int parse_pmu_spec(const struct tma_cpu *c, const char *tok, struct event_desc *d, char *err, size_t errlen)
{
	const char *slash = strchr(tok, '/');
	char pmu[32], path[256], buf[64], terms[EVENT_NAME_LEN];
	size_t len = strlen(tok);

	if (!slash)
		return -ENOENT;
	if (slash == tok || (size_t)(slash - tok) >= sizeof(pmu) || len < 2 || tok[len - 1] != '/' ||
	    tok + len - 1 == slash) {
		err_set(err, errlen, "malformed event '%s': expected pmu/term=value,.../", tok);
		return -EINVAL;
	}
	memcpy(pmu, tok, slash - tok);
	pmu[slash - tok] = 0;
	snprintf(terms, sizeof(terms), "%.*s", (int)(len - (slash - tok) - 2), slash + 1);
	if (use_builtin(c, pmu) && target_vendor(c) >= 0) {
		/* cpu/NAME[,term=v...]/ with a named event first, or cpu/event=..,umask=../ */
		char first[EVENT_NAME_LEN];
		snprintf(first, sizeof(first), "%.*s", (int)strcspn(terms, ","), terms);
		if (!strchr(first, '=') && builtin_format(c, first) == NULL) {
			int r = parse_hw_name(c, first, d, err, errlen);
			if (r) {
				err_set(err, errlen, "unknown event '%s' in '%s' for CPU %s (see tmabpf list%s)", first, tok,
					 tma_cpu_name(c), c ? "" : "; --cpu NAME");
				return -ENOENT;
			}
			snprintf(d->name, sizeof(d->name), "%s", tok);
			char *rest = strchr(terms, ',');
			return rest ? apply_terms(c, pmu, &d->attr, rest + 1, err, errlen) : 0;
		}
		desc_init(d, tok, pmu, PERF_TYPE_RAW, 0);
		d->attr.exclude_guest = 1;
		if (!terms[0]) {
			err_set(err, errlen, "malformed event '%s': no terms between the slashes", tok);
			return -EINVAL;
		}
		return apply_terms(c, pmu, &d->attr, terms, err, errlen);
	}
	snprintf(path, sizeof(path), SYSFS_PMUS "/%s/type", pmu);
	if (read_sysfs_line(path, buf, sizeof(buf))) {
		err_set(err, errlen, "unknown PMU '%s' in '%s' (no %s; list: ls %s)", pmu, tok, path, SYSFS_PMUS);
		return -ENOENT;
	}
	desc_init(d, tok, pmu, (__u32)strtoul(buf, NULL, 10), 0);
	if (!terms[0]) {
		err_set(err, errlen, "malformed event '%s': no terms between the slashes", tok);
		return -EINVAL;
	}
	return apply_terms(c, pmu, &d->attr, terms, err, errlen);
}

/*
 * perf's event modifiers: ":MODS" after a name, raw or libpfm4 event, MODS or
 * ":MODS" right after the closing slash of pmu/.../, and after a {group}.
 *   u k h   count user / kernel / hypervisor mode; naming any excludes the others
 *   G H     guest / host only (both: either); u, k or h alone also exclude the
 *           guest, as perf does on a host
 *   p pp ppp   precise_ip 1..3 (skid constraints; the PMU may refuse them)
 */
#define EVENT_MODIFIERS "ukhGHp"

/* The modifier suffix of tok ("" when none): the text after its last ':'
 * when every character is a modifier (libpfm4 NAME:UMASK keeps its colon),
 * or after the closing slash of pmu/.../ .  *base_len: the length before it. */
static const char *modifier_suffix(const char *tok, size_t *base_len)
{
	const char *colon = strrchr(tok, ':'), *slash = strrchr(tok, '/');
	size_t len = strlen(tok);

	*base_len = len;
	if (slash && strchr(tok, '/') != slash && (!colon || colon < slash)) {
		/* pmu/.../MODS */
		if (slash[1] && strspn(slash + 1, EVENT_MODIFIERS) == strlen(slash + 1)) {
			*base_len = slash + 1 - tok;
			return slash + 1;
		}
		return "";
	}
	if (colon && colon[1] && strspn(colon + 1, EVENT_MODIFIERS) == strlen(colon + 1)) {
		*base_len = colon - tok;
		return colon + 1;
	}
	return "";
}

static int apply_modifiers(struct perf_event_attr *a, const char *mods, const char *tok, char *err, size_t errlen)
{
	bool u = false, k = false, h = false, g = false, host = false;
	int p = 0;

	for (const char *m = mods; *m; m++) {
		switch (*m) {
		case 'u': u = true; break;
		case 'k': k = true; break;
		case 'h': h = true; break;
		case 'G': g = true; break;
		case 'H': host = true; break;
		case 'p': p++; break;
		default:
			err_set(err, errlen, "unknown modifier '%c' in '%s' (modifiers: u k h G H p pp ppp)", *m, tok);
			return -EINVAL;
		}
	}
	if (p > 3) {
		err_set(err, errlen, "too many 'p' in '%s': at most :ppp (precise_ip 3)", tok);
		return -EINVAL;
	}
	if (u || k || h) {
		a->exclude_user = !u;
		a->exclude_kernel = !k;
		a->exclude_hv = !h;
		if (!g && !host)
			a->exclude_guest = 1;
	}
	if (g || host) {
		a->exclude_guest = !g;
		a->exclude_host = !host;
	}
	if (p)
		a->precise_ip = p;
	return 0;
}

static int parse_base(const struct tma_cpu *c, const char *tok, struct event_desc *d, char *err, size_t errlen);

/* NAME:XYZ where NAME is an event and XYZ is no modifier string: say which
 * letter is wrong (rather than "unknown event"). */
static bool unknown_modifier(const struct tma_cpu *c, const char *tok, char *err, size_t errlen)
{
	const char *colon = strrchr(tok, ':');
	char base[EVENT_NAME_LEN], e[256];
	struct event_desc d;
	bool lower = false;
	size_t n;

	if (!colon || strchr(tok, '/') || !colon[1] || strlen(colon + 1) > 8)
		return false;
	for (const char *c = colon + 1; *c; c++) {
		if (!isalpha((unsigned char)*c))
			return false;	/* a libpfm4 umask (ANY_P), not modifiers */
		lower |= islower((unsigned char)*c) != 0;
	}
	if (!lower)
		return false;
	snprintf(base, sizeof(base), "%.*s", (int)(colon - tok), tok);
	if (parse_base(c, base, &d, e, sizeof(e)))
		return false;
	n = strspn(colon + 1, EVENT_MODIFIERS);
	err_set(err, errlen, "unknown modifier '%c' in '%s' (modifiers: u k h G H p pp ppp)", colon[1 + n], tok);
	return true;
}

static int parse_base(const struct tma_cpu *c, const char *tok, struct event_desc *d, char *err, size_t errlen)
{
	int r;

	if (strchr(tok, '/'))
		return parse_pmu_spec(c, tok, d, err, errlen);
	if (parse_named(tok, d) == 0)
		return 0;
	r = parse_raw(tok, d, err, errlen);
	if (r != -ENOENT)
		return r;
	char e2[256];
	if (parse_hw_name(c, tok, d, e2, sizeof(e2)) == 0)
		return 0;
	if (c)
		err_set(err, errlen, "unknown event '%s' for CPU %s (not a software name, rHEX, pmu/.../, "
			 "or %s event; see tmabpf list --cpu %s)", tok, tma_cpu_name(c),
			 c->pfm_pmu ? "libpfm4" : "recipe", tma_cpu_name(c));
	else
		err_set(err, errlen, "unknown event '%s' (try: page-faults, cpu-clock, task-clock, "
			 "context-switches, msr/tsc/, rHEX, pmu/event=..,umask=../; hardware names need a "
			 "known CPU: --cpu NAME)", tok);
	named_event_suggest(tok, err, errlen);
	return -ENOENT;
}

int events_parse_one(const char *tok, const struct tma_cpu *c, struct event_desc *d, char *err, size_t errlen)
{
	char base[EVENT_NAME_LEN];
	const char *mods;
	size_t blen;
	int r;

	if (!tok[0]) {
		err_set(err, errlen, "empty event name");
		return -EINVAL;
	}
	if (strlen(tok) >= EVENT_NAME_LEN) {
		err_set(err, errlen, "event name too long: '%.40s...'", tok);
		return -EINVAL;
	}
	mods = modifier_suffix(tok, &blen);
	snprintf(base, sizeof(base), "%.*s", (int)blen, tok);
	if (blen && base[blen - 1] == ':')	/* pmu/.../:MODS */
		base[--blen] = 0;
	if (!base[0]) {
		err_set(err, errlen, "no event before the modifiers in '%s'", tok);
		return -EINVAL;
	}
	r = parse_base(c, base, d, err, errlen);
	if (r == -ENOENT && !*mods && unknown_modifier(c, tok, err, errlen))
		return -EINVAL;
	if (r)
		return r;
	if (*mods) {
		r = apply_modifiers(&d->attr, mods, tok, err, errlen);
		if (r)
			return r;
		snprintf(d->name, sizeof(d->name), "%s", tok);
	}
	return 0;
}

bool events_count_ns(const struct event_desc *d)
{
	return d->attr.type == PERF_TYPE_SOFTWARE &&
	       (d->attr.config == PERF_COUNT_SW_TASK_CLOCK || d->attr.config == PERF_COUNT_SW_CPU_CLOCK);
}

int events_find(const struct event_list *l, const char *name)
{
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->ev[i].name, name))
			return i;
	return -1;
}

/* Same counter: encoding, privilege filters and precision (events that differ
 * only in their modifiers count different things). */
static bool same_attr(const struct perf_event_attr *a, const struct perf_event_attr *b)
{
	return a->type == b->type && a->config == b->config && a->config1 == b->config1 && a->config2 == b->config2 &&
	       a->exclude_user == b->exclude_user && a->exclude_kernel == b->exclude_kernel &&
	       a->exclude_hv == b->exclude_hv && a->exclude_guest == b->exclude_guest &&
	       a->exclude_host == b->exclude_host && a->precise_ip == b->precise_ip;
}

int events_add(struct event_list *l, const struct event_desc *d, char *err, size_t errlen)
{
	for (int i = 0; i < l->n; i++)
		if (same_attr(&l->ev[i].attr, &d->attr) && l->ev[i].group == d->group)
			return i;
	if (l->n >= TMABPF_MAX_EVENTS) {
		err_set(err, errlen, "too many events: at most %d (TMABPF_MAX_EVENTS)", TMABPF_MAX_EVENTS);
		return -E2BIG;
	}
	l->ev[l->n] = *d;
	return l->n++;
}

/* The next token of an -e list at *p: up to a comma outside pmu/.../ and
 * outside {group}; *p moves past the comma. */
static void next_token(const char **p, char *tok, size_t len)
{
	int slashes = 0, braces = 0;
	size_t n = 0;

	for (; **p && !(**p == ',' && slashes % 2 == 0 && braces == 0); (*p)++) {
		if (**p == '/')
			slashes++;
		else if (**p == '{')
			braces++;
		else if (**p == '}')
			braces--;
		if (n + 1 < len)
			tok[n++] = **p;
	}
	tok[n] = 0;
	if (**p == ',')
		(*p)++;
}

/* {a,b,...}[:MODS]: one group, led by its first event; the modifiers apply
 * to every member (as perf's). */
static int parse_group(const char *spec, const struct tma_cpu *c, const char *tstart, char *tok, struct event_list *l,
		       char *err, size_t errlen)
{
	char *close = strrchr(tok, '}'), mods[16] = "", e1[384];
	const char *p;
	int leader = -1, n0, r;

	if (!close || (close[1] && (close[1] != ':' || strlen(close + 2) >= sizeof(mods) ||
				    strspn(close + 2, EVENT_MODIFIERS) != strlen(close + 2)))) {
		err_set(err, errlen, "-e '%s', character %d: malformed group '%s': expected {event,event,...}[:MODS]",
			 spec, (int)(tstart - spec) + 1, tok);
		return -EINVAL;
	}
	if (close[1])
		snprintf(mods, sizeof(mods), "%s", close + 2);
	*close = 0;
	p = tok + 1;
	if (!*p) {
		err_set(err, errlen, "-e '%s', character %d: empty group {}", spec, (int)(tstart - spec) + 1);
		return -EINVAL;
	}
	while (*p) {
		char m[EVENT_NAME_LEN * 2], full[EVENT_NAME_LEN * 2 + 32];
		struct event_desc d;
		size_t blen;

		next_token(&p, m, sizeof(m));
		if (m[0] == '{') {
			err_set(err, errlen, "-e '%s': groups do not nest", spec);
			return -EINVAL;
		}
		/* the member's own modifiers and the group's, as one suffix */
		snprintf(full, sizeof(full), "%s%s%s", m,
			 !mods[0] || *modifier_suffix(m, &blen) || (m[0] && m[strlen(m) - 1] == '/') ? "" : ":", mods);
		r = events_parse_one(full, c, &d, e1, sizeof(e1));
		if (r) {
			err_set(err, errlen, "-e '%s', group at character %d: %s", spec, (int)(tstart - spec) + 1, e1);
			return r;
		}
		d.from_user = true;
		d.group = leader < 0 ? l->n : leader;
		d.leader = leader < 0;
		n0 = l->n;
		r = events_add(l, &d, err, errlen);
		if (r < 0)
			return r;
		if (l->n == n0) {
			err_set(err, errlen, "-e '%s': event '%s' is twice in its group", spec, m);
			return -EINVAL;
		}
		if (leader < 0)
			leader = r;
	}
	return 0;
}

int events_parse_list(const char *spec, const struct tma_cpu *c, struct event_list *l, char *err, size_t errlen)
{
	const char *p = spec;

	if (!spec || !*spec) {
		err_set(err, errlen, "empty event list");
		return -EINVAL;
	}
	while (*p) {
		const char *tstart = p;
		char tok[EVENT_NAME_LEN * 8];
		struct event_desc d;
		char e1[384];
		int r;

		next_token(&p, tok, sizeof(tok));
		if (tok[0] == '{') {
			r = parse_group(spec, c, tstart, tok, l, err, errlen);
			if (r)
				return r;
		} else {
			r = events_parse_one(tok, c, &d, e1, sizeof(e1));
			if (r) {
				err_set(err, errlen, "-e '%s', character %d: %s", spec, (int)(tstart - spec) + 1, e1);
				return r;
			}
			d.from_user = true;
			r = events_add(l, &d, err, errlen);
			if (r < 0)
				return r;
		}
		if (*p == 0 && p > spec && p[-1] == ',') {
			err_set(err, errlen, "empty event name after ',' in '%s'", spec);
			return -EINVAL;
		}
	}
	return 0;
}

bool events_host_has_pmu(char *why, size_t whylen)
{
	static const char *const core_pmus[] = { "cpu", "cpu_core", "cpu_atom", "armv8_pmuv3",
						 "armv8_pmuv3_0", "armv8_neoverse_v1", "armv8_neoverse_n2" };
	char path[256];

	for (size_t i = 0; i < sizeof(core_pmus) / sizeof(core_pmus[0]); i++) {
		snprintf(path, sizeof(path), SYSFS_PMUS "/%s/type", core_pmus[i]);
		if (access(path, R_OK) == 0) {
			snprintf(why, whylen, "hardware PMU '%s'", core_pmus[i]);
			return true;
		}
	}
	snprintf(why, whylen, "no core PMU under " SYSFS_PMUS " (virtualised host without a vPMU?)");
	return false;
}
