/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A report section (output/report_sections.h) rendered into a string for the unit programs that
 * check one: its JSON inside an object, or its text at a given width; and a number in that JSON. */
#ifndef TMABPF_TEST_SECTION_RENDER_H
#define TMABPF_TEST_SECTION_RENDER_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "output/report_sections.h"

/* The section's JSON (json != NULL) or its text (text(r, f, width)); malloc'd. */
static __attribute__((unused)) char *
section_render(const struct report *r, void (*json)(const struct report *, struct json *),
	       void (*text)(const struct report *, FILE *, int), int width)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json j;

	if (json) {
		json_init(&j, f, false);
		json_obj_begin(&j, NULL);
		json(r, &j);
		json_obj_end(&j);
		json_end(&j);
	} else {
		text(r, f, width);
	}
	fclose(f);
	return buf;
}

/* The number after "key": in the text after from (NaN when absent). */
static __attribute__((unused)) double num_after(const char *from, const char *key)
{
	char k[128];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = from ? strstr(from, k) : NULL;
	return p ? strtod(p + strlen(k), NULL) : NAN;
}

#endif
