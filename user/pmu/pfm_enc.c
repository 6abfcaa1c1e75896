// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <perfmon/pfmlib_perf_event.h>
#include "lib/warn.h"
#include "pmu/pfm_enc.h"

static char forced[64];
static bool inited;

static int pfm_use(const char *pmu, char *err, size_t errlen)
{
	if (inited && !strcmp(forced, pmu))
		return 0;
	if (inited)
		pfm_terminate();
	char *old = getenv("LIBPFM_FORCE_PMU");
	char saved[64] = "";
	bool had = old != NULL;
	if (had)
		snprintf(saved, sizeof(saved), "%s", old);
	setenv("LIBPFM_FORCE_PMU", pmu, 1);
	int r = pfm_initialize();
	if (had)
		setenv("LIBPFM_FORCE_PMU", saved, 1);
	else
		unsetenv("LIBPFM_FORCE_PMU");
	if (r != PFM_SUCCESS) {
		inited = false;
		forced[0] = 0;
		err_set(err, errlen, "libpfm4 cannot initialise PMU '%s': %s", pmu, pfm_strerror(r));
		return -ENODEV;
	}
	inited = true;
	snprintf(forced, sizeof(forced), "%s", pmu);
	return 0;
}

/* perf JSON spelling "A.B.C" -> libpfm4 "A:B_C"; leaves NAME:UMASK spellings alone. */
static void to_pfm_name(const char *in, char *out, size_t len)
{
	size_t n = 0;
	bool first_dot = true, has_colon = strchr(in, ':') != NULL;

	for (const char *p = in; *p && n + 1 < len; p++) {
		char c = (char)toupper((unsigned char)*p);
		if (c == '.' && !has_colon) {
			c = first_dot ? ':' : '_';
			first_dot = false;
		}
		out[n++] = c;
	}
	out[n] = 0;
}

int pfm_enc_event(const char *pmu, const char *name, struct pfm_enc_out *out,
		  char *fstr, size_t fstrlen, char *err, size_t errlen)
{
	char full[256], pname[200];
	char *fs = NULL;
	int r = pfm_use(pmu, err, errlen);

	if (r)
		return r;
	to_pfm_name(name, pname, sizeof(pname));
	snprintf(full, sizeof(full), "%s::%s", pmu, pname);
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	pfm_perf_encode_arg_t arg;
	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	arg.attr = &a;
	arg.fstr = &fs;
	r = pfm_get_os_event_encoding(full, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (r != PFM_SUCCESS) {
		err_set(err, errlen, "libpfm4 (%s) does not know event '%s': %s", pmu, name, pfm_strerror(r));
		free(fs);
		return r == PFM_ERR_NOTFOUND ? -ENOENT : -EINVAL;
	}
	if (fstr && fstrlen)
		snprintf(fstr, fstrlen, "%s", fs ? fs : full);
	free(fs);
	out->type = a.type;
	out->config = a.config;
	out->config1 = a.config1;
	out->config2 = a.config2;
	return 0;
}

int pfm_enc_list(const char *pmu, void (*fn)(const char *name, const char *desc, void *arg), void *arg)
{
	char err[256];
	pfm_pmu_t p;
	int count = 0;

	if (pfm_use(pmu, err, sizeof(err)))
		return -ENODEV;
	pfm_for_all_pmus(p) {
		pfm_pmu_info_t pi;
		memset(&pi, 0, sizeof(pi));
		pi.size = sizeof(pi);
		if (pfm_get_pmu_info(p, &pi) != PFM_SUCCESS || strcmp(pi.name, pmu))
			continue;
		for (int i = pi.first_event; i != -1; i = pfm_get_event_next(i)) {
			pfm_event_info_t ei;
			memset(&ei, 0, sizeof(ei));
			ei.size = sizeof(ei);
			if (pfm_get_event_info(i, PFM_OS_NONE, &ei) != PFM_SUCCESS)
				continue;
			if (fn)
				fn(ei.name, ei.desc, arg);
			count++;
		}
	}
	return count;
}
