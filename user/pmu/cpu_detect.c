// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "pmu/cpu_detect.h"
#include "tma/tma_recipes.h"

/* value of the first "key\t: value" line */
static bool field(const char *text, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, kl))
			continue;
		const char *c = p + kl, *e = strchr(p, '\n');
		while (*c == ' ' || *c == '\t')
			c++;
		if (*c != ':')
			continue;
		c++;
		while (*c == ' ' || *c == '\t')
			c++;
		size_t n = e ? (size_t)(e - c) : strlen(c);
		if (n >= len)
			n = len - 1;
		memcpy(out, c, n);
		out[n] = 0;
		return true;
	}
	return false;
}

static bool model_in(const int *models, int model)
{
	for (int i = 0; models[i] != -1; i++)
		if (models[i] == -2 || models[i] == model)
			return true;
	return false;
}

static bool is_hybrid_model(int model)
{
	static const int hybrid[] = { 0x97, 0x9a, 0xb7, 0xba, 0xbf, 0xaa, 0xac, 0xbd, 0xc5, 0xc6, -1 };
	for (int i = 0; hybrid[i] != -1; i++)
		if (hybrid[i] == model)
			return true;
	return false;
}

const struct tma_cpu *tma_cpu_detect_text(const char *text, bool hybrid, char *desc, size_t desclen,
					  char *why, size_t whylen)
{
	char vendor[64] = "", fam[32] = "", mod[32] = "", step[32] = "", impl[32] = "", part[32] = "", flags[8192] = "";

	snprintf(desc, desclen, "unknown CPU");
	snprintf(why, whylen, "no TMA recipe for this CPU");
	field(text, "vendor_id", vendor, sizeof(vendor));
	field(text, "cpu family", fam, sizeof(fam));
	field(text, "model", mod, sizeof(mod));
	field(text, "stepping", step, sizeof(step));
	field(text, "CPU implementer", impl, sizeof(impl));
	field(text, "CPU part", part, sizeof(part));
	field(text, "flags", flags, sizeof(flags));
	if (strstr(flags, " hybrid_cpu") || strstr(flags, "hybrid_cpu "))
		hybrid = true;
	if (vendor[0]) {
		int family = atoi(fam), model = atoi(mod), stepping = step[0] ? atoi(step) : -1;
		const struct tma_cpu *found = NULL;
		enum tma_vendor v = !strcmp(vendor, "GenuineIntel") ? TMA_INTEL :
				    !strcmp(vendor, "AuthenticAMD") ? TMA_AMD : (enum tma_vendor)-1;

		if (v == TMA_INTEL && is_hybrid_model(model))
			hybrid = true;
		for (int i = 0; i < tma_ncpus && !hybrid; i++) {
			const struct tma_cpu *c = tma_cpus[i];
			if (c->vendor != v || c->family != family || !model_in(c->models, model))
				continue;
			if (c->stepping_min >= 0 && (stepping < c->stepping_min || stepping > c->stepping_max))
				continue;
			found = c;
			break;
		}
		snprintf(desc, desclen, "%s family %d model %d stepping %d%s (%s)", vendor, family, model, stepping,
			 hybrid ? " hybrid cpu_core+cpu_atom" : "", found ? found->name : "no recipe");
		if (hybrid) {
			snprintf(why, whylen, "hybrid Intel CPU (cpu_core + cpu_atom PMUs, family %d model %d): "
				 "no TMA recipe for hybrid parts; use --cpu NAME to force one", family, model);
			return NULL;
		}
		if (!found)
			snprintf(why, whylen, "no TMA recipe for %s family %d model %d (recipes: %s)", vendor,
				 family, model, tma_cpu_names());
		return found;
	}
	if (impl[0] && part[0]) {
		int im = (int)strtol(impl, NULL, 0), pt = (int)strtol(part, NULL, 0);
		const struct tma_cpu *found = NULL;

		for (int i = 0; i < tma_ncpus; i++)
			if (tma_cpus[i]->vendor == TMA_ARM && tma_cpus[i]->family == im && model_in(tma_cpus[i]->models, pt))
				found = tma_cpus[i];
		snprintf(desc, desclen, "Arm implementer 0x%x part 0x%x (%s)", im, pt, found ? found->name : "no recipe");
		if (!found)
			snprintf(why, whylen, "no TMA recipe for Arm implementer 0x%x part 0x%x (recipes: %s)", im, pt,
				 tma_cpu_names());
		return found;
	}
	snprintf(why, whylen, "cannot identify the CPU from cpuinfo (no vendor_id / CPU part)");
	return NULL;
}

const struct tma_cpu *tma_cpu_detect(char *desc, size_t desclen, char *why, size_t whylen)
{
	const char *path = getenv("TMABPF_CPUINFO");
	static char buf[1 << 16];
	FILE *f = fopen(path && *path ? path : "/proc/cpuinfo", "r");
	size_t n = 0;

	if (!f) {
		snprintf(desc, desclen, "unknown CPU");
		snprintf(why, whylen, "cannot read %s", path && *path ? path : "/proc/cpuinfo");
		return NULL;
	}
	/* the first processor block is enough */
	while (n + 1 < sizeof(buf) && fgets(buf + n, (int)(sizeof(buf) - n), f)) {
		if (buf[n] == '\n' && n > 0)
			break;
		n += strlen(buf + n);
	}
	buf[n] = 0;
	fclose(f);
	bool hybrid = access("/sys/bus/event_source/devices/cpu_core", F_OK) == 0 ||
		      access("/sys/bus/event_source/devices/cpu_atom", F_OK) == 0;
	return tma_cpu_detect_text(buf, hybrid, desc, desclen, why, whylen);
}
