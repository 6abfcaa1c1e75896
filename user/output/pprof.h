/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A profile (model/profile.h) in the pprof format: the protobuf messages of
 * proto/profile.proto packed by protobuf-c, gzipped as go tool pprof writes
 * them (Pyroscope, Parca and Grafana Alloy read both forms). */
#ifndef TMABPF_PPROF_H
#define TMABPF_PPROF_H
#include <stddef.h>
#include <stdio.h>
#include "model/profile.h"

/* *out (malloc'd, *len bytes): the gzipped profile.  0, or -errno with one line in err. */
int pprof_encode(const struct profile *p, unsigned char **out, size_t *len, char *err, size_t errlen);
/* pprof_encode to f.  0, or -errno with one line in err. */
int pprof_write(const struct profile *p, FILE *f, char *err, size_t errlen);

#endif
