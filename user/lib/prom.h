/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Prometheus text exposition format 0.0.4: families, samples, label escaping. */
#ifndef TMABPF_PROM_H
#define TMABPF_PROM_H
#include <stdio.h>

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* "# HELP" and "# TYPE" lines; type is "counter", "gauge" or "untyped". */
void prom_family(FILE *f, const char *name, const char *type, const char *help);
/* One sample: name{k1="v1",...} value.  labels: name/value pairs ending with a
 * NULL name; a pair with a NULL value is left out.  NaN and infinities are
 * written as Prometheus spells them. */
void prom_sample(FILE *f, const char *name, const char *const *labels, double v);
/* A label value, escaped (\\, \", \n) and made valid UTF-8 (bad bytes become U+FFFD); other
 * control bytes (C0, DEL, C1) become '?', as text_safe() shows them. */
void prom_label_value(FILE *f, const char *v);
/* Number as the format wants it: integers without exponent when exact. */
void prom_value(FILE *f, double v);

#endif
