/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What this build is: version, report schema, git describe, libbpf, the BPF target. */
#ifndef TMABPF_VERSION_H
#define TMABPF_VERSION_H

#define TMABPF_VERSION "0.1.0"	/* debian/changelog carries the same (tests/test_package.py) */
#define TMABPF_SCHEMA 1		/* the JSON report's schema (report_json.c; read back by diff_report.c) */

/* 'git describe --always --dirty --tags' of the source at build time, "unknown" outside git */
const char *version_git(void);
/* "1.5" (run time, libbpf_version_string() without its 'v') */
const char *version_libbpf(void);
/* The compiler of the BPF programs ("Debian clang version 19...") */
const char *version_bpf_cc(void);
/* CPU architecture the BPF programs were compiled (CO-RE) for: "x86", "arm64" */
const char *version_bpf_arch(void);

#endif
