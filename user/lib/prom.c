// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include "lib/prom.h"
#include "lib/text_safe.h"

void prom_family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s ", name);
	for (const char *p = help; *p; p++) {	/* HELP escapes \ and newline only */
		if (*p == '\\')
			fputs("\\\\", f);
		else if (*p == '\n')
			fputs("\\n", f);
		else
			fputc(*p, f);
	}
	fprintf(f, "\n# TYPE %s %s\n", name, type);
}

void prom_label_value(FILE *f, const char *v)
{
	const unsigned char *p = (const unsigned char *)v;

	while (*p) {
		bool control;
		int n = text_safe_char(p, &control);

		if (control && !utf8_seq_len(p)) {
			fputs("\xef\xbf\xbd", f);	/* U+FFFD */
			p++;
			continue;
		}
		if (*p == '\\')
			fputs("\\\\", f);
		else if (*p == '"')
			fputs("\\\"", f);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (control)
			fputc('?', f);	/* other control characters: as text_safe() shows them */
		else
			fwrite(p, 1, n, f);
		p += n;
	}
}

void prom_value(FILE *f, double v)
{
	if (isnan(v))
		fputs("NaN", f);
	else if (isinf(v))
		fputs(v > 0 ? "+Inf" : "-Inf", f);
	else if (v == floor(v) && fabs(v) < 9007199254740992.0)	/* 2^53: exact */
		fprintf(f, "%.0f", v);
	else {
		char buf[32];

		snprintf(buf, sizeof(buf), "%.15g", v);	/* shortest that reads back exactly */
		if (strtod(buf, NULL) != v)
			snprintf(buf, sizeof(buf), "%.17g", v);
		fputs(buf, f);
	}
}

void prom_sample(FILE *f, const char *name, const char *const *labels, double v)
{
	bool any = false;

	fputs(name, f);
	for (int i = 0; labels && labels[i]; i += 2) {
		if (!labels[i + 1])
			continue;
		fputs(any ? ",": "{", f);
		fprintf(f, "%s=\"", labels[i]);
		prom_label_value(f, labels[i + 1]);
		fputc('"', f);
		any = true;
	}
	if (any)
		fputc('}', f);
	fputc(' ', f);
	prom_value(f, v);
	fputc('\n', f);
}
