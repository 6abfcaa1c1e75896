// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The build facts tmabpf --version, the JSON report and /metrics carry.
 * build/version_build.h (made by the Makefile, rewritten only when it changes)
 * says what git describe and the BPF compiler were. */
#include <bpf/libbpf.h>
#include "lib/version.h"
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

const char *version_bpf_cc(void)
{
	return TMABPF_BPF_CC;
}
