/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libpfm4 event encodings for a chosen (possibly non-host) CPU. */
#ifndef TMABPF_PFM_ENC_H
#define TMABPF_PFM_ENC_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* the encoding; kept apart from struct perf_event_attr because libpfm4's
 * perfmon/perf_event.h clashes with linux/perf_event.h */
struct pfm_enc_out {
	uint32_t type;
	uint64_t config, config1, config2;
};

/* Encode libpfm4 event NAME (e.g. "INST_RETIRED:ANY_P", "core_power.lvl2_turbo_license")
 * for libpfm4 PMU pmu ("skx", "spr", "amd64_fam19h_zen4") (the caller sets the
 * exclude flags as perf does: user+kernel, exclude_guest). libpfm4 only encodes for PMUs it considers active,
 * so the PMU is forced with LIBPFM_FORCE_PMU and libpfm4 re-initialised when the
 * PMU changes. fstr (optional) gets libpfm4's canonical name. 0 or -errno. */
int pfm_enc_event(const char *pmu, const char *name, struct pfm_enc_out *out,
		  char *fstr, size_t fstrlen, char *err, size_t errlen);
/* Iterate the PMU's events: calls fn(name, desc, arg) for each; returns count or -errno. */
int pfm_enc_list(const char *pmu, void (*fn)(const char *name, const char *desc, void *arg), void *arg);

#endif
