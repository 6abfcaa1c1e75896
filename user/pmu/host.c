// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Host facts for the report header and for one-line capability messages. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "lib/kernel_file.h"
#include "lib/warn.h"
#include "pmu/events.h"
#include "pmu/host.h"

#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT 38
#define CAP_BPF_BIT 39

static void read_cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (colon && (!strncmp(line, "model name", 10) || !strncmp(line, "Model", 5))) {
			colon++;
			while (*colon == ' ' || *colon == '\t')
				colon++;
			colon[strcspn(colon, "\n")] = 0;
			snprintf(buf, len, "%s", colon);
			break;
		}
	}
	fclose(f);
}

void host_pmu_reason(char *buf, size_t len)
{
	/* The kernel says why at boot ("Performance Events: ... no PMU driver, software events only.");
	 * the log may not be readable, so this is a hint, not a requirement. */
	FILE *f = popen("dmesg 2>/dev/null | grep -m1 'Performance Events'", "r");
	char line[256] = "";

	buf[0] = 0;
	if (!f)
		return;
	if (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "Performance Events:");
		size_t n = strcspn(line, "\n");

		/* the sentence's own full stop: callers go on after it ("...; hardware counters ...") */
		while (n && (line[n - 1] == '.' || line[n - 1] == ' '))
			n--;
		line[n] = 0;
		snprintf(buf, len, "%s", p ? p + 20 : line);
	}
	pclose(f);
}

void host_info_read(struct host_info *h)
{
	struct utsname u;
	int n;

	memset(h, 0, sizeof(*h));
	if (uname(&u) == 0)
		snprintf(h->kernel, sizeof(h->kernel), "%s", u.release);
	read_cpu_model(h->cpu, sizeof(h->cpu));
	n = libbpf_num_possible_cpus();
	h->ncpus = n > 0 ? n : (int)sysconf(_SC_NPROCESSORS_CONF);
	h->ncpus_online = (int)sysconf(_SC_NPROCESSORS_ONLN);
	h->pmu = events_host_has_pmu(h->pmu_why, sizeof(h->pmu_why));
	if (!h->pmu) {
		char reason[200];

		host_pmu_reason(reason, sizeof(reason));
		if (reason[0]) {
			size_t l = strlen(h->pmu_why);

			snprintf(h->pmu_why + l, sizeof(h->pmu_why) - l, "; kernel: %s", reason);
		}
	}
}

static unsigned long long cap_effective(void)
{
	return kernel_file_field("/proc/self/status", "CapEff", 16, 0);
}

int host_check_privilege(char *err, size_t errlen)
{
	unsigned long long caps = cap_effective();
	bool admin = caps & (1ULL << CAP_SYS_ADMIN_BIT);
	bool bpf = admin || (caps & (1ULL << CAP_BPF_BIT));
	bool perfmon = admin || (caps & (1ULL << CAP_PERFMON_BIT));

	if (bpf && perfmon)
		return 0;
	err_set(err, errlen, "insufficient privilege: need root, or CAP_BPF and CAP_PERFMON (missing:%s%s); "
		 "run with sudo", bpf ? "" : " CAP_BPF", perfmon ? "" : " CAP_PERFMON");
	return -EPERM;
}
