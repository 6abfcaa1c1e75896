/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * cxx_name: a long (demangled C++) function name shortened to fit a column,
 * in the middle, keeping what tells overloads and instantiations apart at the
 * end.  Steps, each only while the name is still too wide: drop the return
 * type; elide parameter lists to "(…)"; elide template argument lists to
 * "<…>", outer scopes first (the function's own last); drop leading scopes
 * ("…::gemm<…>(…)"); finally keep the tail behind one "…".  Full names stay in
 * the JSON and the drill-down.  "…" is one column (three bytes in UTF-8).
 */
#ifndef TMABPF_CXX_NAME_H
#define TMABPF_CXX_NAME_H
#include <stddef.h>

#define CXX_ELLIPSIS "\xe2\x80\xa6"	/* U+2026, one column */

/* name shortened to at most width columns (text_columns, text_fit.h), into out (outlen bytes);
 * returns its columns. */
int cxx_name_shorten(const char *name, int width, char *out, size_t outlen);

#endif
