// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The --mem-samples event per CPU vendor.  See mem_event.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "lib/kernel_file.h"
#include "pmu/events.h"
#include "pmu/mem_event.h"
#include "tma/tma_recipes.h"

#define INTEL_LDLAT 128
#define INTEL_PERIOD 1009	/* MEM_TRANS_RETIRED.LOAD_LATENCY_GT_128's SampleAfterValue */
#define IBS_PERIOD 200000
#define IBS_CNT_CTL (1ULL << 19)	/* ibs_op format cnt_ctl: config:19 */
#define IBS_L3MISSONLY (1ULL << 16)	/* ibs_op format l3missonly: config:16 (Zen 4 and later) */

bool mem_event_source_ok(const char *source)
{
	return !source || !strcmp(source, "pmu") || !strcmp(source, "page-faults");
}

static void sampling_bits(struct perf_event_attr *a, unsigned long long period)
{
	a->size = sizeof(*a);
	a->sample_period = period;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR;
}

/* Encode an Intel event the way -e does (libpfm4 for the target CPU). */
static int intel_encode(const char *spec, const struct tma_cpu *cpu, struct perf_event_attr *a, char *why, size_t whylen)
{
	struct event_list l = {};
	char err[256];
	int r = events_parse_list(spec, cpu, &l, err, sizeof(err));

	if (r) {
		snprintf(why, whylen, "cannot encode %s: %s", spec, err);
		return r;
	}
	*a = l.ev[0].attr;
	return 0;
}

static int ibs_op_type(void)
{
	return kernel_file_int("/sys/bus/event_source/devices/ibs_op/type", -1);
}

int mem_event_choose(const char *source, const struct tma_cpu *cpu, bool host, struct mem_event *ev, char *why,
		     size_t whylen)
{
	char spec[96];
	int r;

	memset(ev, 0, sizeof(*ev));
	snprintf(ev->source, sizeof(ev->source), "%s", source ? source : "pmu");
	if (!strcmp(ev->source, "page-faults")) {
		snprintf(ev->name, sizeof(ev->name), "page-faults (every fault, faulting address)");
		snprintf(ev->pmu, sizeof(ev->pmu), "software");
		ev->attr.type = PERF_TYPE_SOFTWARE;
		ev->attr.config = PERF_COUNT_SW_PAGE_FAULTS;
		sampling_bits(&ev->attr, 1);
		return 0;
	}
	if (!cpu) {
		snprintf(why, whylen, "no recipe for this CPU: no precise memory event known (name one with --cpu NAME)");
		return -ENOTSUP;
	}
	switch (cpu->vendor) {
	case TMA_INTEL:
		snprintf(spec, sizeof(spec), "MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=%d", INTEL_LDLAT);
		if ((r = intel_encode(spec, cpu, &ev->attr, why, whylen)))
			return r;
		snprintf(ev->name, sizeof(ev->name), "MEM_TRANS_RETIRED.LOAD_LATENCY_GT_%d", INTEL_LDLAT);
		snprintf(ev->pmu, sizeof(ev->pmu), "cpu");
		ev->ldlat = INTEL_LDLAT;
		ev->attr.precise_ip = 2;
		sampling_bits(&ev->attr, INTEL_PERIOD);
		ev->attr.sample_type |= PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC;
		if (cpu->mem_loads_aux) {
			/* load latency on SPR and EMR is only counted in a group led by mem-loads-aux */
			if ((r = intel_encode("cpu/event=0x03,umask=0x82/", cpu, &ev->aux_attr, why, whylen)))
				return r;
			ev->aux = true;
		}
		return 0;
	case TMA_AMD: {
		int t = ibs_op_type();

		if (t < 0 && host) {
			snprintf(why, whylen, "no ibs_op PMU (/sys/bus/event_source/devices/ibs_op/type missing): IBS is "
				 "off or not exposed to this VM");
			return -ENOENT;
		}
		snprintf(ev->name, sizeof(ev->name), "IBS op, L3 misses only");
		snprintf(ev->pmu, sizeof(ev->pmu), "ibs_op");
		ev->attr.type = t < 0 ? 0 : (unsigned)t;
		ev->attr.config = IBS_CNT_CTL | IBS_L3MISSONLY;
		sampling_bits(&ev->attr, IBS_PERIOD);
		return 0;
	}
	default:
		snprintf(why, whylen, "%s: Arm SPE is not supported by --mem-samples", cpu->desc);
		return -ENOTSUP;
	}
}

static void print_sample_type(unsigned long long t, FILE *f)
{
	static const struct { unsigned long long bit; const char *name; } names[] = {
		{ PERF_SAMPLE_IP, "IP" }, { PERF_SAMPLE_TID, "TID" }, { PERF_SAMPLE_ADDR, "ADDR" },
		{ PERF_SAMPLE_WEIGHT, "WEIGHT" }, { PERF_SAMPLE_DATA_SRC, "DATA_SRC" },
	};
	const char *sep = "";

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (t & names[i].bit) {
			fprintf(f, "%s%s", sep, names[i].name);
			sep = "|";
		}
}

static void print_attr(const struct perf_event_attr *a, const char *pmu, FILE *f)
{
	fprintf(f, "pmu=%s type=%u config=0x%" PRIx64 " config1=0x%" PRIx64 " precise_ip=%u", pmu, a->type,
		(uint64_t)a->config, (uint64_t)a->config1, a->precise_ip);
	if (a->type == PERF_TYPE_RAW)
		fprintf(f, " event=0x%x,umask=0x%x", (unsigned)(a->config & 0xff), (unsigned)((a->config >> 8) & 0xff));
}

void mem_event_print(const struct mem_event *ev, FILE *f)
{
	fprintf(f, "mem-samples: %s: ", ev->name);
	print_attr(&ev->attr, ev->pmu, f);
	if (ev->ldlat)
		fprintf(f, ",ldlat=%u", ev->ldlat);
	if (!strcmp(ev->pmu, "ibs_op"))
		fprintf(f, " cnt_ctl=%d l3missonly=%d%s", !!(ev->attr.config & IBS_CNT_CTL),
			!!(ev->attr.config & IBS_L3MISSONLY), ev->attr.type ? "" : " (type: ibs_op's in sysfs, absent here)");
	fprintf(f, " sample_period=%llu sample_type=", (unsigned long long)ev->attr.sample_period);
	print_sample_type(ev->attr.sample_type, f);
	if (ev->aux) {
		fprintf(f, " group_leader=mem-loads-aux(");
		print_attr(&ev->aux_attr, "cpu", f);
		fprintf(f, ")");
	}
	fputc('\n', f);
}
