// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* tmabpf --version and the build facts the JSON report and /metrics carry.
 * build/version.h (made by the Makefile, rewritten only when it changes) says
 * what git describe and the BPF compiler were. */
#include <bpf/libbpf.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "host.h"
#include "version.h"
#include "version_build.h"

const char *version_git(void)
{
	return TMABPF_GIT;
}

const char *version_libbpf(void)
{
	const char *v = libbpf_version_string();

	return v[0] == 'v' ? v + 1 : v;
}

const char *version_bpf_arch(void)
{
	return TMABPF_BPF_ARCH;
}

static const char *yes_no(int r)
{
	return r > 0 ? "yes" : r == 0 ? "no" : "error";
}

void version_print(FILE *f)
{
	struct utsname u = {};
	char why[200];

	uname(&u);
	fprintf(f, "tmabpf %s (git %s)\n", TMABPF_VERSION, version_git());
	fprintf(f, "  built with:  gcc %s; BPF: %s, CO-RE objects for %s\n", __VERSION__, TMABPF_BPF_CC,
		version_bpf_arch());
	fprintf(f, "  libbpf:      %s (built against %d.%d)\n", version_libbpf(), LIBBPF_MAJOR_VERSION,
		LIBBPF_MINOR_VERSION);
	fprintf(f, "  kernel:      %s %s, BTF %s\n", u.release, u.machine,
		access("/sys/kernel/btf/vmlinux", R_OK) ? "missing (/sys/kernel/btf/vmlinux: CONFIG_DEBUG_INFO_BTF=y needed)"
							: "yes");
	if (host_check_privilege(why, sizeof(why)))
		fprintf(f, "  BPF probes:  not run (they need CAP_BPF: run as root)\n");
	else
		fprintf(f, "  BPF probes:  perf_event %s, raw_tracepoint (tp_btf) %s, kprobe (uprobes) %s, ringbuf %s\n",
			yes_no(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_PERF_EVENT, NULL)),
			yes_no(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_RAW_TRACEPOINT, NULL)),
			yes_no(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_KPROBE, NULL)),
			yes_no(libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL)));
	fprintf(f, "  needs:       kernel BTF and tp_btf (5.5); --uprobe: uprobe_multi links (6.6, else classic\n"
		   "               uprobes), uprobe sessions (6.13, else entry and return probes)\n");
}
