/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * kallsyms: kernel text symbols from /proc/kallsyms, for naming kernel
 * stack frames.  Symbols have no size: one covers addresses up to the next
 * symbol, at most KALLSYMS_MAX_FUNC bytes past its start.
 */
#ifndef TMABPF_KALLSYMS_H
#define TMABPF_KALLSYMS_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define KALLSYMS_MAX_FUNC (1u << 20)

struct ksym {
	uint64_t addr;
	const char *name;
	const char *module;	/* "[kernel.kallsyms]" or "[MODULE]" (e.g. "[bpf]", "[nvme]") */
};

struct kallsyms {
	struct ksym *syms;	/* sorted by addr, one per address */
	size_t nr;
	char **mods;		/* module names, owned */
	size_t nr_mods;
};

/* path NULL: /proc/kallsyms.  -EPERM when addresses are hidden (kptr_restrict). */
int kallsyms_load(struct kallsyms *k, const char *path, char *err, size_t errlen);
/* Parse kallsyms text (tests). */
int kallsyms_parse(struct kallsyms *k, FILE *f, char *err, size_t errlen);
/* The symbol holding addr (offset from its start in *off), or NULL. */
const struct ksym *kallsyms_lookup(const struct kallsyms *k, uint64_t addr, uint64_t *off);
void kallsyms_free(struct kallsyms *k);

#endif
