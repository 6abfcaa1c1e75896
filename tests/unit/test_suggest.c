// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Unit tests for suggest.c: edit distance and "did you mean". */
#include <string.h>
#include "check.h"
#include "lib/suggest.h"

int main(void)
{
	static const char *const events[] = { "cpu-clock", "task-clock", "page-faults", "faults", "minor-faults" };
	static const char *const libs[] = { "libopenblas.so.0", "libopenblas.so", "libomp.so.5" };
	const char *s;

	check(suggest_distance("kitten", "sitting", 5) == 3, "distance kitten/sitting = 3");
	check(suggest_distance("abc", "abcdefgh", 2) == 3, "distance beyond the limit is limit + 1");
	s = suggest_nearest("page-fault", events, 5);
	check(s && !strcmp(s, "page-faults"), "page-fault -> page-faults (%s)", s ? s : "-");
	s = suggest_nearest("task-clok", events, 5);
	check(s && !strcmp(s, "task-clock"), "task-clok -> task-clock (%s)", s ? s : "-");
	check(!suggest_nearest("instructions", events, 5), "nothing near: no suggestion");
	s = suggest_nearest("libopenbla.so", libs, 3);
	check(s && !strcmp(s, "libopenblas.so"), "libopenbla.so -> libopenblas.so (%s)", s ? s : "-");
	s = suggest_nearest("libom", libs, 3);
	check(s && !strcmp(s, "libomp.so.5"), "a prefix names its completion (%s)", s ? s : "-");
	return check_exit();
}
