/* SPDX-License-Identifier: MIT */
/* tmabpf's version, and the schema of its JSON report (report_json.c; read back by diff_report.c). */
#ifndef TMABPF_VERSION_H
#define TMABPF_VERSION_H

#define TMABPF_VERSION "0.1.0"
#define TMABPF_SCHEMA 1

#endif
