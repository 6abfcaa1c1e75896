// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/kernel_file.h"
#include "lib/sorted.h"
#include "lib/warn.h"
#include "sym/kallsyms.h"

#define CORE_KERNEL "[kernel.kallsyms]"

/* Why /proc/kallsyms reads zero addresses (kernel/kallsyms.c kallsyms_show_value()): kptr_restrict
 * 2 hides them from all; 1 from those without CAP_SYSLOG; 0 shows them when perf_event_paranoid
 * <= 1, else again only with CAP_SYSLOG. */
static void hidden_why(char *err, size_t errlen)
{
	int kptr = kernel_file_int("/proc/sys/kernel/kptr_restrict", -1);
	int paranoid = kernel_file_int("/proc/sys/kernel/perf_event_paranoid", 2);

	if (kptr >= 2)
		err_set(err, errlen, "kernel symbol addresses are hidden from everyone (kernel.kptr_restrict=%d): "
			"sysctl kernel.kptr_restrict=1, and CAP_SYSLOG (root has it)", kptr);
	else if (kptr == 1)
		err_set(err, errlen, "kernel symbol addresses are hidden without CAP_SYSLOG (kernel.kptr_restrict=1): "
			"run as root or give CAP_SYSLOG");
	else if (paranoid <= 1)
		err_set(err, errlen, "kernel symbol addresses are hidden though kernel.kptr_restrict=%d and "
			"kernel.perf_event_paranoid=%d allow them (a lockdown or a container's /proc?): run as root on the host",
			kptr, paranoid);
	else
		err_set(err, errlen, "kernel symbol addresses are hidden without CAP_SYSLOG: kernel.perf_event_paranoid=%d "
			"(> 1; kernel.kptr_restrict=%d shows them only when it is <= 1): give CAP_SYSLOG (root has it) "
			"or sysctl kernel.perf_event_paranoid=1", paranoid, kptr);
}

static const char *module_name(struct kallsyms *k, const char *mod)
{
	char buf[128];
	char **v;

	if (!mod || !*mod)
		return CORE_KERNEL;
	snprintf(buf, sizeof(buf), "[%s]", mod);
	for (size_t i = 0; i < k->nr_mods; i++)
		if (!strcmp(k->mods[i], buf))
			return k->mods[i];
	v = realloc(k->mods, (k->nr_mods + 1) * sizeof(*v));
	if (!v)
		return NULL;
	k->mods = v;
	k->mods[k->nr_mods] = strdup(buf);
	return k->mods[k->nr_mods] ? k->mods[k->nr_mods++] : NULL;
}

/* Among names at one address: global before local, real names before the
 * __pfx_ padding symbols and before __cfi_ stubs. */
static int rank(const char *name, char type)
{
	int r = (type == 'T' || type == 'W') ? 0 : 1;

	if (!strncmp(name, "__pfx_", 6) || !strncmp(name, "__cfi_", 6))
		r += 4;
	return r;
}

struct raw {
	struct ksym s;
	int rank;
	size_t order;
};

static int raw_cmp(const void *a, const void *b)
{
	const struct raw *x = a, *y = b;

	if (x->s.addr != y->s.addr)
		return x->s.addr < y->s.addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return x->order < y->order ? -1 : x->order > y->order;
}

static bool is_text(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

int kallsyms_parse(struct kallsyms *k, FILE *f, char *err, size_t errlen)
{
	struct raw *v = NULL;
	size_t n = 0, cap = 0, nonzero = 0, len = 0;
	char *line = NULL;

	memset(k, 0, sizeof(*k));
	while (getline(&line, &len, f) > 0) {
		unsigned long long addr;
		char type, name[512], mod[128] = "";
		int got = sscanf(line, "%llx %c %511s [%127[^]]]", &addr, &type, name, mod);

		if (got < 3 || !is_text(type))
			continue;
		if (addr)
			nonzero++;
		if (n == cap) {
			struct raw *nv = realloc(v, (cap = cap ? cap * 2 : 65536) * sizeof(*v));

			if (!nv)
				goto nomem;
			v = nv;
		}
		v[n].s.addr = addr;
		v[n].s.name = strdup(name);
		v[n].s.module = module_name(k, got == 4 ? mod : NULL);
		if (!v[n].s.name || !v[n].s.module)
			goto nomem;
		v[n].rank = rank(name, type);
		v[n].order = n;
		n++;
	}
	free(line);
	line = NULL;
	if (n && !nonzero) {
		hidden_why(err, errlen);
		for (size_t i = 0; i < n; i++)
			free((char *)v[i].s.name);
		free(v);
		kallsyms_free(k);
		return -EPERM;
	}
	if (n)	/* qsort(NULL, 0) is undefined: text with no kernel text symbol */
		qsort(v, n, sizeof(*v), raw_cmp);
	k->syms = calloc(n ? n : 1, sizeof(*k->syms));
	if (!k->syms)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		if (k->nr && k->syms[k->nr - 1].addr == v[i].s.addr) {
			free((char *)v[i].s.name);	/* alias: the better-ranked name came first */
			continue;
		}
		k->syms[k->nr++] = v[i].s;
	}
	free(v);
	return 0;
nomem:
	free(line);
	for (size_t i = 0; i < n; i++)
		free((char *)v[i].s.name);
	free(v);
	kallsyms_free(k);
	err_set(err, errlen, "out of memory reading kernel symbols");
	return -ENOMEM;
}

int kallsyms_load(struct kallsyms *k, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path ? path : "/proc/kallsyms", "re");
	int r;

	if (!f) {
		r = -errno;
		memset(k, 0, sizeof(*k));
		err_set(err, errlen, "open %s: %s", path ? path : "/proc/kallsyms", strerror(-r));
		return r;
	}
	r = kallsyms_parse(k, f, err, errlen);
	fclose(f);
	return r;
}

const struct ksym *kallsyms_lookup(const struct kallsyms *k, uint64_t addr, uint64_t *off)
{
	size_t lo = SORTED_COUNT_LE(k->syms, k->nr, addr, addr);
	const struct ksym *s;

	if (!lo)
		return NULL;
	s = &k->syms[lo - 1];
	if (addr - s->addr >= KALLSYMS_MAX_FUNC)
		return NULL;	/* in a gap no function spans */
	if (off)
		*off = addr - s->addr;
	return s;
}

void kallsyms_free(struct kallsyms *k)
{
	for (size_t i = 0; i < k->nr; i++)
		free((char *)k->syms[i].name);
	free(k->syms);
	for (size_t i = 0; i < k->nr_mods; i++)
		free(k->mods[i]);
	free(k->mods);
	memset(k, 0, sizeof(*k));
}
