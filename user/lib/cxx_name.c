// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Long C++ names shortened in the middle.  See cxx_name.h. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/cxx_name.h"
#include "lib/text_fit.h"

/* Replace s[from, to) with rep. */
static void splice(char *s, size_t from, size_t to, const char *rep)
{
	size_t rl = strlen(rep), tail = strlen(s + to);

	memmove(s + from + rl, s + to, tail + 1);
	memcpy(s + from, rep, rl);
}

/* The parameter list: the last '(' at depth 0 whose group is not followed by "::" (that is a
 * scope such as "(anonymous namespace)::"), and its matching ')'.  False when there is none. */
static bool params(const char *s, size_t *open, size_t *close)
{
	int angle = 0, paren = 0;
	size_t start = 0;
	bool found = false;

	for (size_t i = 0; s[i]; i++) {
		char c = s[i];

		if (c == '<' && !paren)
			angle++;
		else if (c == '>' && !paren && angle > 0)
			angle--;
		else if (c == '(' && !angle && !paren++)
			start = i;
		else if (c == ')' && !angle && paren > 0 && !--paren && strncmp(s + i + 1, "::", 2)) {
			*open = start;
			*close = i;
			found = true;
		}
	}
	return found;
}

/* Follow c's nesting of <> and (); true when c opened or closed one. */
static bool nest(char c, int *angle, int *paren)
{
	if (c == '<')
		++*angle;
	else if (c == '>' && *angle > 0)
		--*angle;
	else if (c == '(')
		++*paren;
	else if (c == ')' && *paren > 0)
		--*paren;
	else
		return false;
	return true;
}

/* The return type's end: the last depth-0 space before the parameter list (0: none). */
static size_t return_type_end(const char *s, size_t popen)
{
	int angle = 0, paren = 0;
	size_t end = 0;

	for (size_t i = 0; i < popen; i++)
		if (!nest(s[i], &angle, &paren) && s[i] == ' ' && !angle && !paren && strncmp(s + i + 1, "const", 5))
			end = i + 1;
	/* "operator new" and the like are names, not a return type */
	if (end >= 9 && !strncmp(s + end - 9, "operator ", 9))
		return 0;
	return end;
}

/* The first depth-0 template argument list before limit that is not already "<…>". */
static bool next_template(const char *s, size_t limit, size_t *open, size_t *close)
{
	int depth = 0, paren = 0;
	size_t start = 0;

	for (size_t i = 0; i < limit && s[i]; i++) {
		char c = s[i];

		if (c == '(')
			paren++;
		else if (c == ')' && paren > 0)
			paren--;
		else if (paren)
			continue;
		else if (c == '<' && !depth++)
			start = i;
		else if (c == '>' && depth > 0 && !--depth &&
			 strncmp(s + start + 1, CXX_ELLIPSIS ">", sizeof(CXX_ELLIPSIS))) {
			*open = start;
			*close = i;
			return true;
		}
	}
	return false;
}

/* Position after the first depth-0 "::" before limit, 0 when none. */
static size_t first_scope_end(const char *s, size_t limit)
{
	int angle = 0, paren = 0;

	for (size_t i = 0; i + 1 < limit && s[i]; i++)
		if (!nest(s[i], &angle, &paren) && s[i] == ':' && s[i + 1] == ':' && !angle && !paren)
			return i + 2;
	return 0;
}

int cxx_name_shorten(const char *name, int width, char *out, size_t outlen)
{
	/* each splice puts at most 3 bytes ("…") where it took at least 1: 3 bytes a byte bound it */
	char *s = malloc(3 * strlen(name) + 64);
	size_t po, pc, to, tc;

	if (!s)
		return text_elide_middle(name, width, out, outlen);
	strcpy(s, name);
	if (width < 1)
		width = 1;
	if (text_columns(s) <= width)
		goto done;
	/* the return type */
	if (params(s, &po, &pc) && (to = return_type_end(s, po)))
		splice(s, 0, to, "");
	/* the parameter list */
	if (text_columns(s) > width && params(s, &po, &pc) && pc > po + 1)
		splice(s, po + 1, pc, CXX_ELLIPSIS);
	/* template argument lists, outer scopes first; the function's own is the last one */
	while (text_columns(s) > width) {
		size_t limit = params(s, &po, &pc) ? po : strlen(s);

		if (!next_template(s, limit, &to, &tc))
			break;
		splice(s, to + 1, tc, CXX_ELLIPSIS);
	}
	/* leading scopes: "a::b::c::f" -> "…::c::f" -> "…::f" */
	while (text_columns(s) > width) {
		size_t limit = params(s, &po, &pc) ? po : strlen(s), skip = 0, end;

		if (!strncmp(s, CXX_ELLIPSIS "::", sizeof(CXX_ELLIPSIS) + 1))
			skip = sizeof(CXX_ELLIPSIS) + 1;
		end = first_scope_end(s + skip, limit - skip);
		if (!end || !first_scope_end(s, limit))
			break;
		splice(s, 0, skip + end, CXX_ELLIPSIS "::");
	}
	/* the tail behind one "…" */
	if (text_columns(s) > width) {
		splice(s, 0, (size_t)(text_tail(s, width - 1) - s), CXX_ELLIPSIS);
	}
done:
	snprintf(out, outlen, "%s", s);
	free(s);
	return text_columns(out);
}
