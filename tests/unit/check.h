/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Minimal TAP-style harness for the C unit programs: "ok - ..." / "not ok - ...",
 * then "N passed, N failed"; check_exit() is the program's exit status. */
#ifndef TMABPF_TEST_CHECK_H
#define TMABPF_TEST_CHECK_H
#include <stdarg.h>
#include <stdio.h>

static int passed, failed;

static void check(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3), unused));

static void check(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", cond ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (cond)
		passed++;
	else
		failed++;
}

static __attribute__((unused)) void skip(const char *what, const char *why)
{
	printf("ok - %s # SKIP %s\n", what, why);
	passed++;
}

static __attribute__((unused)) int check_exit(void)
{
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

#endif
