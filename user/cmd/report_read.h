/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Reading back a tmabpf JSON report (--json): what a program driving tmabpf needs. */
#ifndef TMABPF_REPORT_READ_H
#define TMABPF_REPORT_READ_H

/* The counters of the report's first process (the command of '-- CMD'), by
 * event name: out[i] for names[i], NaN when absent.  0, or -EINVAL when the
 * file is no tmabpf report with a process. */
int report_read_process_counts(const char *path, const char *const *names, int n, double *out);

#endif
