/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Command-line parsing shared by every command: bounded integers and getopt's
 * errors, each as one line on stderr and EXIT_USAGE (warn.h). */
#ifndef TMABPF_PARSE_H
#define TMABPF_PARSE_H
#include <stdbool.h>

/* Parse an integer in [lo, hi] into *out, or print one line (prefixed by where, e.g. a config
 * file's "FILE:LINE: ") and return EXIT_USAGE. */
int parse_int_at(const char *where, const char *s, const char *what, long lo, long hi, int *out);
/* A plain decimal number ("10", "0.5", "1e3"; no hex such as "0x10", no "inf"/"nan", nothing
 * around it) into *out: true, else false with nothing printed (strtod alone takes them all). */
bool parse_decimal(const char *s, double *out);
/* After getopt_long (optstring starting "+:") returned ':' or '?': one line naming the
 * option (missing value, unknown, or a value it does not take), EXIT_USAGE. */
/* A subcommand's option with a value, --opt=V or --opt V, at argv[*i]: the value (advancing *i
 * past it; "" when --opt ends the line), or NULL when argv[*i] is not opt. */
const char *parse_opt_value(int argc, char **argv, int *i, const char *opt);
int getopt_error(int c, char **argv, const char *where, const char *help);

#endif
