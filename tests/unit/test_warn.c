// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Unit tests for warn.c: what the report keeps of a run's warnings. */
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "lib/warn.h"

int main(void)
{
	char want[64];
	size_t n;

	if (!freopen("/dev/null", "w", stderr))	/* the lines themselves are not under test */
		return 1;
	warn_add("first %d", 1);
	warn_add("first %d", 1);
	check(warn_count() == 1 && warn_total() == 2, "a text already kept is not kept again (%zu kept, %zu said)",
	      warn_count(), warn_total());
	warn_add("a\nb");
	check(!strcmp(warn_get(1), "a?b"), "one line: control bytes become ? (%s)", warn_get(1));
	for (int i = 0; i < 1000; i++)
		warn_add("flood %d", i);
	warn_add("the summary at the end");
	n = warn_count();
	check(n == WARN_MAX, "at most WARN_MAX kept (%zu)", n);
	check(!strcmp(warn_get(0), "first 1"), "the first is kept (%s)", warn_get(0));
	check(!strcmp(warn_get(n - 1), "the summary at the end"), "the latest is kept: a flood cannot push out the "
	      "end's summaries (%s)", warn_get(n - 1));
	snprintf(want, sizeof(want), "flood %d", 999);
	check(!strcmp(warn_get(n - 2), want), "the tail is in order (%s)", warn_get(n - 2));
	check(strstr(warn_get(WARN_MAX / 2), "more warnings not kept here") != NULL,
	      "one line says how many were left out (%s)", warn_get(WARN_MAX / 2));
	snprintf(want, sizeof(want), "%d more warnings", 1003 - (WARN_MAX - 1));	/* 1,003 different texts */
	check(!strncmp(warn_get(WARN_MAX / 2), want, strlen(want)), "... and the number is right (%s; want %s)",
	      warn_get(WARN_MAX / 2), want);
	check(warn_get(n) == NULL, "past the end: NULL");
	check(warn_total() == 1004, "every one said is counted (%zu)", warn_total());
	return check_exit();
}
