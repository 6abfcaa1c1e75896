// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The names of --itt's spans.  See itt_names.h. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "sym/itt_names.h"

/* The collector's file as one more library of the set: the spans' module (never attached through
 * the set: its functions are marked itt). */
static int add_lib(struct uprobe_set *s, struct itt_names *n)
{
	struct uprobe_lib *l;
	struct stat st;

	if (n->lib >= 0)
		return n->lib;
	if (s->nr_libs >= UPROBE_MAX_LIBS)
		return -1;
	l = &s->libs[s->nr_libs];
	*l = (struct uprobe_lib){ .fd = -1, .attach_path = strdup(n->collector), .module = strdup(n->collector),
				  .note = strdup("ITT spans (--itt)"), .glob = strdup("") };
	if (!stat(n->collector, &st)) {
		l->dev = st.st_dev;
		l->ino = st.st_ino;
	}
	return n->lib = s->nr_libs++;
}

int itt_names_add(struct uprobe_set *s, struct itt_names *n, unsigned int pid, unsigned int id, const char *domain,
		  const char *task)
{
	char full[512];
	struct uprobe_func *f;
	uintptr_t fn1;
	int lib;

	snprintf(full, sizeof(full), "%s:%s", domain, task);
	fn1 = (uintptr_t)strmap_get(&n->by_name, full);
	if (!fn1) {
		if ((lib = add_lib(s, n)) < 0 || s->nr_funcs >= UPROBE_MAX_FUNCS)
			return -1;
		f = realloc(s->funcs, sizeof(*f) * (s->nr_funcs + 1));
		if (!f)
			return -1;
		s->funcs = f;
		f[s->nr_funcs] = (struct uprobe_func){ .symbol = strdup(full), .lib = lib, .itt = true };
		if (!f[s->nr_funcs].symbol)
			return -1;
		fn1 = (uintptr_t)++s->nr_funcs;
		if (strmap_put(&n->by_name, full, (void *)fn1, NULL))
			return -1;
	}
	if (!u64map_get(&n->ids, (uint64_t)pid << 32 | id)) {
		uintptr_t pairs = (uintptr_t)u64map_get(&n->pids, pid) + 1;

		if (u64map_put(&n->pids, pid, (void *)pairs))
			return -1;
	}
	if (u64map_put(&n->ids, (uint64_t)pid << 32 | id, (void *)fn1))
		return -1;
	return (int)fn1 - 1;
}

int itt_names_fn(struct itt_names *n, unsigned int pid, unsigned int id)
{
	uintptr_t fn1 = n ? (uintptr_t)u64map_get(&n->ids, (uint64_t)pid << 32 | id) : 0;

	if (!fn1 && n && n->drain) {
		n->drain(n->drain_ctx);
		fn1 = (uintptr_t)u64map_get(&n->ids, (uint64_t)pid << 32 | id);
	}
	return fn1 ? (int)fn1 - 1 : -1;
}

void itt_names_forget_pid(struct itt_names *n, unsigned int pid)
{
	size_t left = (uintptr_t)u64map_del(&n->pids, pid), k = 0;
	uint64_t *keys = left ? malloc(left * sizeof(*keys)) : NULL;

	if (!keys)
		return;
	for (size_t i = 0; i < n->ids.cap && k < left; i++)	/* collected first: no delete while iterating */
		if (n->ids.vals[i] && n->ids.keys[i] >> 32 == pid)
			keys[k++] = n->ids.keys[i];
	while (k)
		u64map_del(&n->ids, keys[--k]);
	free(keys);
}

void itt_names_free(struct itt_names *n)
{
	u64map_free(&n->pids);
	u64map_free(&n->ids);
	strmap_free(&n->by_name);
	n->lib = -1;
}
