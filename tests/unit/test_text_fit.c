// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Text that fits (lib/text_fit.h) and perf stat's units (lib/units.h): names elided in the middle,
 * never cut; prose wrapped at spaces within the width, fields kept whole, a list wider than a line broken
 * after a comma; tables (lib/text_table.h) that drop columns by priority and say so once; times in
 * ns/us/ms/s.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"
#include "lib/cxx_name.h"
#include "lib/text_fit.h"
#include "lib/text_table.h"
#include "lib/units.h"

static char *wrapped(int width, int indent, const char *s)
{
	static char buf[1024];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	text_wrap(f, width, indent, s);
	fclose(f);
	return buf;
}

/* A table of a name and three numbers at width, hid kept across calls. */
static char *table(int width, struct text_hidden *hid)
{
	static const struct text_col cols[] = {
		{ .name = "NAME", .prio = 1, .left = true, .min = 8 }, { .name = "A", .prio = 3 }, { .name = "B", .prio = 2 },
		{ .name = "C", .prio = 1, .gap = 2 },
	};
	static char buf[1024];
	const char *rows[][4] = { { "groundtruth:gt_spin", "1234", "56", "7" }, { "x", "1", "2", "3" } };
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	struct text_table t;

	text_table_init(&t, cols, 4);
	for (int i = 0; i < 2; i++)
		text_table_add(&t, rows[i]);
	text_table_print(&t, f, width, hid);
	text_table_free(&t);
	fclose(f);
	return buf;
}

/* A 2000-byte name (an "é" across bytes 1021-1022, "_TAILEND_a" its end) in a table at width, its
 * column elided by shorten (NULL: text_elide_middle); the printed text, to be freed. */
static char *long_name_table(int width, int (*shorten)(const char *, int, char *, size_t))
{
	const struct text_col cols[] = { { .name = "FUNCTION", .prio = 1, .left = true, .min = 12, .shorten = shorten },
					 { .name = "N", .prio = 1 } };
	char name[2001], *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	struct text_table t;

	memset(name, 'a', 2000);
	name[2000] = 0;
	memcpy(name + 1021, "\xc3\xa9", 2);
	memcpy(name + 1990, "_TAILEND_", 9);
	text_table_init(&t, cols, 2);
	text_table_add(&t, (const char *[]){ name, "7" });
	text_table_print(&t, f, width, NULL);
	fclose(f);
	text_table_free(&t);
	return buf;
}

/* How a child that makes a table of ncols columns and adds 40 rows ends (its wait status); what it
 * said on stderr into said. */
static int table_of(int ncols, char *said, size_t len)
{
	static struct text_col cols[TEXT_TABLE_MAX_COLS + 1];
	int st;
	pid_t pid = fork();

	if (!pid) {
		struct text_table t;
		const char *cells[TEXT_TABLE_MAX_COLS + 1] = { 0 };

		if (!freopen("/tmp/test_text_fit.stderr", "w", stderr))
			_exit(3);
		for (int i = 0; i <= TEXT_TABLE_MAX_COLS; i++)
			cols[i].name = "C";
		text_table_init(&t, cols, ncols);
		for (int i = 0; i < 40; i++)
			text_table_add(&t, cells);
		text_table_free(&t);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	{
		FILE *f = fopen("/tmp/test_text_fit.stderr", "r");
		size_t n = f ? fread(said, 1, len - 1, f) : 0;

		said[n] = 0;
		if (f)
			fclose(f);
		unlink("/tmp/test_text_fit.stderr");
	}
	return st;
}

/* text_wrap of "see " and a 2000-byte word ("HEAD_", an "é" across bytes 1022-1023 of the word, "_TAILEND_"
 * its end) and " done" at width, indent 2; the text, to be freed. */
static char *long_word_wrapped(int width)
{
	char s[2011], *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	memcpy(s, "see ", 4);
	memset(s + 4, 'a', 2000);
	memcpy(s + 4, "HEAD_", 5);
	memcpy(s + 4 + 1022, "\xc3\xa9", 2);
	memcpy(s + 4 + 1990, "_TAILEND_", 9);
	strcpy(s + 2004, " done");
	text_wrap(f, width, 2, s);
	fclose(f);
	return buf;
}

/* A table of rows like the BUDGETS BROKEN one (KIND ROW METRIC DELTA BUDGET, all shown always) at width. */
static char *budget_table(int width)
{
	static const struct text_col cols[] = {
		{ .name = "KIND", .prio = 1, .left = true }, { .name = "ROW", .prio = 1, .left = true, .min = 28 },
		{ .name = "METRIC", .prio = 1, .left = true }, { .name = "DELTA", .prio = 1 },
		{ .name = "BUDGET", .prio = 1, .left = true, .gap = 2 },
	};
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	struct text_table t;

	text_table_init(&t, cols, 5);
	text_table_add(&t, (const char *[]){ "function", "groundtruth/groundtruth:gt_spin", "wall_ns", "+60.12%",
					     "function.wall_ns>+20%" });
	text_table_add(&t, (const char *[]){ "thread", "groundtruth/gt-spin", "oncpu_ns", "+58.02%",
					     "thread.oncpu_ns>+20%" });
	text_table_print(&t, f, width, NULL);
	text_table_free(&t);
	fclose(f);
	return buf;
}

static int widest(const char *text)
{
	int w = 0;

	for (const char *l = text; *l;) {
		size_t n = strcspn(l, "\n");
		char *line = strndup(l, n);

		if (text_columns(line) > w)
			w = text_columns(line);
		free(line);
		l += n + (l[n] == '\n');
	}
	return w;
}

static const char *ns(double v)
{
	static char buf[32];

	units_ns(buf, sizeof(buf), v);
	return buf;
}

int main(void)
{
	char out[64];
	const char *w;

	check(text_elide_middle("sgemm_kernel_HASWELL", 18, out, sizeof(out)) == 18 &&
	      !strcmp(out, "sgemm_ker\xe2\x80\xa6_HASWELL"), "elided in the middle: %s", out);
	check(text_elide_middle("gt_spin", 18, out, sizeof(out)) == 7 && !strcmp(out, "gt_spin"), "a name that fits: whole");
	check(text_elide_middle("caf\xc3\xa9-caf\xc3\xa9-caf\xc3\xa9", 7, out, sizeof(out)) == 7 &&
	      !strcmp(out, "caf\xe2\x80\xa6" "af\xc3\xa9"), "UTF-8 counted in columns, never split: %s", out);
	w = wrapped(30, 2, "bpf: 1.225% of one CPU, 95533 hits/s  mux: 0.0%  drops: map-full 0, lost 0");
	check(!strcmp(w, "bpf: 1.225% of one CPU, 95533\n  hits/s  mux: 0.0%\n  drops: map-full 0, lost 0\n"),
	      "wrapped at 30, a field (after two spaces) kept on a line of its own: [%s]", w);
	check(widest(w) <= 30, "no wrapped line wider than 30");
	w = wrapped(20, 2, "short  enough");
	check(!strcmp(w, "short  enough\n"), "a line that fits is written as it is: [%s]", w);
	w = wrapped(12, 2, "a_single_word_much_wider_than_the_line");
	check(widest(w) <= 12 && strstr(w, "\xe2\x80\xa6"), "a word wider than a line is elided: [%s]", w);
	w = wrapped(24, 4, "need=tma_frontend_bound,tma_fetch_bandwidth,tma_retiring");
	check(!strcmp(w, "need=tma_frontend_bound,\n    tma_fetch_bandwidth,\n    tma_retiring\n"),
	      "a list wider than a line broken after its commas: [%s]", w);
	{
		struct text_hidden hid = {};
		char buf[512];
		FILE *f;

		w = table(40, &hid);
		check(!strcmp(w, "NAME                   A  B  C\ngroundtruth:gt_spin 1234 56  7\nx                      1  2  3\n") &&
		      !hid.n, "a table that fits: every column, padded, the name whole: [%s]", w);
		w = table(22, &hid);
		check(!strcmp(w, "NAME           A  B  C\ngroun\xe2\x80\xa6_spin 1234 56  7\nx              1  2  3\n") &&
		      !hid.n, "at 22: the name elided in the middle, above its minimum, before a column goes: [%s]", w);
		w = table(16, &hid);
		check(!strcmp(w, "NAME        B  C\ngroun\xe2\x80\xa6spin 56  7\nx           2  3\n") && hid.n == 1 &&
		      !strcmp(hid.names[0], "A"), "at 16: A goes first (priority 3): [%s] %s", w, hid.names[0]);
		w = table(11, &hid);
		check(!strcmp(w, "NAME      C\ngrou\xe2\x80\xa6pin  7\nx         3\n") && hid.n == 2 &&
		      !strcmp(hid.names[0], "A") && !strcmp(hid.names[1], "B"),
		      "at 11: then B; the name at its minimum; A said once: [%s]", w);
		{
			static const struct text_col ev[] = { { .name = "CPU_CLK_UNHALTED.THREAD", .prio = 1 } };
			struct text_table te;

			text_table_init(&te, ev, 1);
			text_table_add(&te, (const char *[]){ "1.23 G" });
			f = fmemopen(buf, sizeof(buf), "w");
			text_table_print(&te, f, 80, NULL);
			fclose(f);
			text_table_free(&te);
			check(!strcmp(buf, "CPU_CLK\xe2\x80\xa6THREAD\n        1.23 G\n"),
			      "a number column's long header elided to 14 columns: [%s]", buf);
		}
		f = fmemopen(buf, sizeof(buf), "w");
		text_hidden_print(&hid, f, 80);
		fclose(f);
		check(!strcmp(buf, "  (2 columns hidden: A B; widen or --width)\n") && !hid.n, "the note: [%s]", buf);
		f = fmemopen(buf, sizeof(buf), "w");
		text_wrap_lines(f, 20, "short\n  a line much wider than twenty\n");
		fclose(f);
		check(!strcmp(buf, "short\n  a line much wider\n      than twenty\n"),
		      "text_wrap_lines: a wide line wrapped, indented 4 past its own indent: [%s]", buf);
	}
	for (int i = 0; i < 2; i++) {
		int (*shorten)(const char *, int, char *, size_t) = i ? cxx_name_shorten : NULL;
		char *whole = long_name_table(10000, shorten), *cut = long_name_table(1500, shorten);
		char *row = strchr(cut, '\n') + 1;

		check(strstr(whole, "\xc3\xa9") && strstr(whole, "_TAILEND_a 7\n") && widest(whole) == 2001,
		      "%s: a 2000-byte name printed whole at width 10000 (widest line %d)", i ? "cxx_name" : "elide",
		      widest(whole));
		check(strstr(row, "\xe2\x80\xa6") && strstr(row, "_TAILEND_a 7\n") && widest(cut) == 1500,
		      "%s: at width 1500 shortened behind one \"\u2026\" to its tail, 1500 columns (widest %d)",
		      i ? "cxx_name" : "elide", widest(cut));
		free(whole);
		free(cut);
	}
	for (int i = 0; i < 3; i++) {
		char said[512], want[64];
		int n = (int[]){ 0, TEXT_TABLE_MAX_COLS + 1, -1 }[i], st = table_of(n, said, sizeof(said));

		snprintf(want, sizeof(want), "tmabpf: bug: a text table of %d columns", n);
		check(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT && strstr(said, want),
		      "a table of %d columns stopped loudly in one line (status %#x): [%s]", n, st, said);
	}
	{
		char said[512];
		int st = table_of(TEXT_TABLE_MAX_COLS, said, sizeof(said));

		check(WIFEXITED(st) && !WEXITSTATUS(st) && !*said, "a table of %d columns is made", TEXT_TABLE_MAX_COLS);
	}
	{
		struct text_hidden hid = {};
		char name[64], *buf, want[64], tail[96];
		size_t len;
		FILE *f;

		for (int i = 0; i < 24; i++) {
			snprintf(name, sizeof(name), "C%02d_%047d", i, 0);
			text_hidden_add(&hid, name);
			text_hidden_add(&hid, name);
		}
		text_hidden_add(&hid, "ms on CPU");
		text_hidden_add(&hid, "CPU");
		text_hidden_add(&hid, "on");
		text_hidden_add(&hid, "ms on CPU");
		f = open_memstream(&buf, &len);
		text_hidden_print(&hid, f, 10000);
		fclose(f);
		snprintf(tail, sizeof(tail), "C23_%047d ms on CPU CPU on;", 0);
		snprintf(want, sizeof(want), "  (27 columns hidden: C00_");
		check(!strncmp(buf, want, strlen(want)) && strstr(buf, tail) && !hid.n && !hid.names,
		      "24 hidden columns of 51 bytes and 3 named with spaces each counted once, compared whole: [%.60s]",
		      buf);
		free(buf);
	}
	{
		static const struct text_col cols[] = { { .name = "COMM", .prio = 1, .left = true, .min = 8 },
							{ .name = "MS", .prio = 1 } };
		struct text_table t;
		char buf[256], out[64];
		FILE *f = fmemopen(buf, sizeof(buf), "w");
		int n;

		text_table_init(&t, cols, 2);
		text_table_add(&t, (const char *[]){ "\xe6\x8e\xa8\xe7\x90\x86\xe7\xba\xbf\xe7\xa8\x8b\xe5\xb7\xa5\xe4\xbd\x9c", "1.0" });
		text_table_add(&t, (const char *[]){ "cafe\xcc\x81", "2.0" });
		text_table_print(&t, f, 40, NULL);
		fclose(f);
		text_table_free(&t);
		check(!strcmp(buf, "COMM          MS\n\xe6\x8e\xa8\xe7\x90\x86\xe7\xba\xbf\xe7\xa8\x8b\xe5\xb7\xa5\xe4\xbd\x9c 1.0\n"
				   "cafe\xcc\x81         2.0\n"),
		      "six CJK characters take 12 columns, a combining accent none: the columns line up: [%s]", buf);
		n = text_elide_middle("\xe6\x8e\xa8\xe7\x90\x86\xe7\xba\xbf\xe7\xa8\x8b\xe5\xb7\xa5\xe4\xbd\x9c", 6, out, sizeof(out));
		check(n == 5 && !strcmp(out, "\xe6\x8e\xa8\xe2\x80\xa6\xe4\xbd\x9c"),
		      "CJK elided to 6 columns: whole characters around the \"\u2026\", %d columns: [%s]", n, out);
		n = cxx_name_shorten("\xe6\x8e\xa8\xe7\x90\x86\xe7\xba\xbf\xe7\xa8\x8b\xe5\xb7\xa5\xe4\xbd\x9c", 6, out, sizeof(out));
		check(n <= 6 && n == text_columns(out), "a CJK name shortened by cxx_name_shorten within 6 columns: %d [%s]", n, out);
	}
	{
		char word[2001], *whole = long_word_wrapped(3000), *cut = long_word_wrapped(80), *l2, *tail;

		snprintf(word, sizeof(word), "%s", whole + 4);
		word[strcspn(word, " ")] = 0;
		check(strlen(word) == 2000 && !strncmp(word, "HEAD_", 5) && strstr(word, "\xc3\xa9") &&
		      strstr(word, "_TAILEND_a") && !strncmp(whole, "see ", 4) &&
		      !strcmp(whole + 4 + strlen(word), " done\n"),
		      "text_wrap: a 2000-byte word (1999 columns) on a line of 3000 columns whole, é and tail kept "
		      "(%zu bytes)", strlen(word));
		l2 = cut + strcspn(cut, "\n") + 1;
		tail = strstr(cut, "_TAILEND_a");
		check(widest(cut) == 80 && !strncmp(cut, "see\n  HEAD_", 11) && strstr(l2, "\xe2\x80\xa6") && tail &&
		      !strcmp(tail, "_TAILEND_a\n  done\n"),
		      "text_wrap: the 2000-byte word at 80 columns elided in the middle to its own line of 80, "
		      "its head and its true tail around one \"\u2026\" (widest %d): [%.20s...]", widest(cut), l2);
		free(whole);
		free(cut);
	}
	{
		char *t80 = budget_table(80), *t60 = budget_table(60), *t40 = budget_table(40), *t30 = budget_table(30);

		check(widest(t80) == 80 && strstr(t80, "groundtruth/groundtruth:gt_spin wall_ns  +60.12%  function.wall_ns>+20%\n"),
		      "a table of always-shown columns at 80: whole, 80 columns: [%s]", t80);
		check(widest(t60) == 60 && strstr(t60, "groun\xe2\x80\xa6_spin wall_ns  +60.12%  function.wall_ns>+20%\n"),
		      "at 60: ROW elided in the middle, 60 columns: [%s]", t60);
		check(widest(t40) == 40 && !strcmp(t40, "KIND     ROW    METRIC     DELTA  BUDGET\n"
					    "function gro\xe2\x80\xa6in wall_ns  +60.12%  fun\xe2\x80\xa6" "0%\n"
					    "thread   gro\xe2\x80\xa6in oncpu_ns +58.02%  thr\xe2\x80\xa6" "0%\n"),
		      "at 40, only always-shown columns: no row wider than 40 (widest %d), the names and the last "
		      "column (BUDGET) cut with a \"\u2026\", the numbers whole: [%s]", widest(t40), t40);
		check(widest(t30) <= 30 && !strcmp(t30, "  (table left out: it needs\n   --width 40)\n"),
		      "at 30, below what the table needs with its text cut to 6 columns: one note of the --width "
		      "it needs, no table (widest %d): [%s]", widest(t30), t30);
		free(t80);
		free(t60);
		free(t40);
		free(t30);
	}
	check(!strcmp(ns(512), "512 ns") && !strcmp(ns(12345), "12.35 us") && !strcmp(ns(684897627), "684.9 ms") &&
	      !strcmp(ns(1.21e9), "1.21 s") && !strcmp(ns(0), "0 ns"), "units_ns: 512 ns, 12.35 us, 684.9 ms, 1.21 s");
	return check_exit();
}
