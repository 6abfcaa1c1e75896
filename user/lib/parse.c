// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Command-line parsing helpers.  See parse.h. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "lib/parse.h"
#include "lib/warn.h"

int parse_int_at(const char *where, const char *s, const char *what, long lo, long hi, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		err_print("%sbad %s '%s': expected an integer in [%ld, %ld]", where, what, s, lo, hi);
		return EXIT_USAGE;
	}
	*out = (int)v;
	return 0;
}

bool parse_decimal(const char *s, double *out)
{
	char *end;
	double v;

	if (!*s || strspn(s, "0123456789.eE+-") != strlen(s))
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end)
		return false;
	*out = v;
	return true;
}

int getopt_error(int c, char **argv, const char *where, const char *help)
{
	const char *arg = argv[optind - 1];
	bool is_long = !strncmp(arg, "--", 2);
	int len = is_long ? (int)strcspn(arg, "=") : 2;
	char shrt[3] = { '-', (char)optopt, 0 };

	if (!is_long && (optopt <= 0 || optopt >= 0x100))
		shrt[1] = '?';
	if (!is_long)
		arg = shrt;
	if (c == ':')
		err_print("%soption '%.*s' needs a value (see '%s')", where, len, arg, help);
	else if (is_long && optopt)
		err_print("%soption '%.*s' takes no value (see '%s')", where, len, arg, help);
	else
		err_print("%sunknown option '%.*s' (see '%s')", where, is_long ? (int)strlen(arg) : len, arg, help);
	return EXIT_USAGE;
}

const char *parse_opt_value(int argc, char **argv, int *i, const char *opt)
{
	size_t l = strlen(opt);

	if (!strncmp(argv[*i], opt, l) && argv[*i][l] == '=')
		return argv[*i] + l + 1;
	if (strcmp(argv[*i], opt))
		return NULL;
	return *i + 1 < argc ? argv[++*i] : "";
}
