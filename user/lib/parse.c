// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Command-line parsing helpers.  See parse.h. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/parse.h"
#include "lib/suggest.h"
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

/* "; did you mean '--uprobe'?" for a mistyped long option ("--uprobes", "-uprobe"), else "". */
static void near_option(const char *arg, const struct option *opts, char *out, size_t len)
{
	const char *names[128], *near;
	char word[SUGGEST_MAX_LEN + 1];
	size_t n = 0;

	out[0] = 0;
	arg += strspn(arg, "-");
	snprintf(word, sizeof(word), "%.*s", (int)strcspn(arg, "="), arg);
	for (; opts && opts->name && n < sizeof(names) / sizeof(names[0]); opts++) {
		if (!strcmp(opts->name, word)) {	/* "-uprobe" */
			snprintf(out, len, "; did you mean '--%s'?", word);
			return;
		}
		names[n++] = opts->name;
	}
	if (strlen(word) > 1 && (near = suggest_nearest(word, names, n)))
		snprintf(out, len, "; did you mean '--%s'?", near);
}

int getopt_error(int c, char **argv, const char *where, const char *help, const struct option *opts)
{
	const char *arg = argv[optind - 1], *word = argv[optind];
	bool is_long = !strncmp(arg, "--", 2);
	int len = is_long ? (int)strcspn(arg, "=") : 2;
	char shrt[3] = { '-', (char)optopt, 0 }, near[SUGGEST_MAX_LEN + 32] = "";

	if (!is_long && (optopt <= 0 || optopt >= 0x100))
		shrt[1] = '?';
	/* "-uprobe": a long option with one dash; getopt stays on a word until its last letter */
	if (!is_long && (!word || word[0] != '-' || word[1] == '-' || !strchr(word + 1, optopt)))
		word = arg;
	if (c != ':' && (is_long || strlen(word) > 2))
		near_option(is_long ? arg : word, opts, near, sizeof(near));
	if (!is_long && near[0]) {
		arg = word;
		len = strlen(word);
	} else if (!is_long)
		arg = shrt;
	if (c == ':')
		err_print("%soption '%.*s' needs a value (see '%s')", where, len, arg, help);
	else if (is_long && optopt)
		err_print("%soption '%.*s' takes no value (see '%s')", where, len, arg, help);
	else
		err_print("%sunknown option '%.*s'%s (see '%s')", where, is_long ? (int)strlen(arg) : len, arg, near,
			  help);
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
