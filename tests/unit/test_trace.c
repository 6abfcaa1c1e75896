// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * --trace without BPF: span reconstruction from synthetic ring-buffer records
 * (nesting, longjmp, thread exit, lost records, frames open at the end, many
 * threads), and the counter tracks of a synthetic thread table, including TMA
 * level 1 from the engine (this host has no PMU, so runs never produce it).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "tma/tma.h"
#include "trace/trace_events.h"
#include "trace/trace_tracks.h"
#include "trace/trace_writer.h"
#include "pmu/key_encode.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, n + 1);
	if (buf && fread(buf, 1, n, f) != (size_t)n)
		buf[0] = 0;
	fclose(f);
	return buf;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The JSON has one event per line: the line holding needle. */
static const char *line_with(const char *doc, const char *needle, char *out, size_t len)
{
	const char *p = strstr(doc, needle), *b, *e;

	if (!p)
		return NULL;
	for (b = p; b > doc && b[-1] != '\n'; b--)
		;
	e = strchr(p, '\n');
	if (!e)
		e = p + strlen(p);
	snprintf(out, len, "%.*s", (int)(e - b), b);
	return out;
}

static void rec(struct trace_spans *s, __u32 tid, __u32 fn, __u32 depth, __u32 kind, unsigned long long ts)
{
	struct trace_rec r = { .ts = ts, .pid = tid < 1000 ? 100 : tid, .tid = tid, .fn = fn, .depth = depth,
			       .kind = kind };

	trace_spans_record(s, &r);
}

static void test_spans(void)
{
	char path[] = "/tmp/tmabpf-test-trace-XXXXXX", err[256], line[512] = "";
	struct uprobe_func funcs[3] = { { .symbol = "f0" }, { .symbol = "f1" }, { .symbol = "f2" } };
	struct uprobe_set uset = { .nr_funcs = 3, .funcs = funcs };
	struct trace_writer w;
	struct trace_spans s;
	int fd = mkstemp(path);
	char *doc;

	close(fd);
	check(trace_writer_open(&w, path, 0600, 0, err, sizeof(err)) == 0, "writer opens %s", path);
	trace_spans_init(&s, &w, &uset);
	/* nested call */
	rec(&s, 100, 0, 0, TRACE_ENTRY, 1000);
	rec(&s, 100, 1, 1, TRACE_ENTRY, 2000);
	rec(&s, 100, 1, 1, TRACE_RETURN, 3000);
	rec(&s, 100, 0, 0, TRACE_RETURN, 4000);
	/* longjmp out of f1: the BPF side reports it unmatched when f0 returns */
	rec(&s, 100, 0, 0, TRACE_ENTRY, 5000);
	rec(&s, 100, 1, 1, TRACE_ENTRY, 6000);
	rec(&s, 100, 1, 1, TRACE_UNMATCHED, 7000);
	rec(&s, 100, 0, 0, TRACE_RETURN, 7000);
	/* f1's return record lost: it ends where the sibling f2 starts */
	rec(&s, 100, 0, 0, TRACE_ENTRY, 8000);
	rec(&s, 100, 1, 1, TRACE_ENTRY, 9000);
	rec(&s, 100, 2, 1, TRACE_ENTRY, 10000);
	rec(&s, 100, 2, 1, TRACE_RETURN, 11000);
	rec(&s, 100, 0, 0, TRACE_RETURN, 12000);
	/* a return whose entry record was lost */
	rec(&s, 100, 1, 0, TRACE_RETURN, 13000);
	/* thread exit with two frames open */
	rec(&s, 101, 0, 0, TRACE_ENTRY, 14000);
	rec(&s, 101, 1, 1, TRACE_ENTRY, 15000);
	rec(&s, 101, 1, 1, TRACE_EXIT, 16000);
	rec(&s, 101, 0, 0, TRACE_EXIT, 16000);
	/* open at the end of the run */
	rec(&s, 102, 2, 0, TRACE_ENTRY, 17000);
	/* malformed */
	rec(&s, 103, 0, TMABPF_MAX_DEPTH, TRACE_ENTRY, 17500);
	/* many threads: the table grows, and threads without open frames leave it once idle for a
	 * second (TRACE_IDLE_NS): 100 more threads 2 s later make it rebuild */
	for (__u32 t = 2000; t < 3000; t++)
		rec(&s, t, 0, 0, TRACE_ENTRY, 18000 + t);
	for (__u32 t = 2999; t >= 2000; t--)
		rec(&s, t, 0, 0, TRACE_RETURN, 19000 + t);
	for (__u32 t = 4000; t < 4100; t++) {
		rec(&s, t, 0, 0, TRACE_ENTRY, 2000000000ULL + 10 * t);
		rec(&s, t, 0, 0, TRACE_RETURN, 2000000000ULL + 10 * t + 5);
	}
	check(s.used <= 1 + 100, "threads idle for a second left the table (%zu)", s.used);
	/* a record earlier than its thread's previous one (another CPU's clock after a migration)
	 * takes that one's time: the sequential calls do not overlap */
	rec(&s, 4100, 0, 0, TRACE_ENTRY, 2000100000ULL);
	rec(&s, 4100, 0, 0, TRACE_RETURN, 2000101000ULL);
	rec(&s, 4100, 1, 0, TRACE_ENTRY, 2000100500ULL);
	rec(&s, 4100, 1, 0, TRACE_RETURN, 2000102000ULL);
	check(s.clamped == 1, "one record clamped to its thread's previous time (%llu)", s.clamped);
	trace_spans_close_all(&s, 25000);
	check(s.spans == 2 + 2 + 3 + 2 + 1 + 1000 + 100 + 2, "spans written: %llu", s.spans);
	check(s.unmatched == 1 && s.exited == 2 && s.open_at_end == 1 && s.lost_end == 1 && s.lost_entry == 1 &&
	      s.bad == 1, "unmatched %llu exited %llu open_at_end %llu lost_end %llu lost_entry %llu bad %llu",
	      s.unmatched, s.exited, s.open_at_end, s.lost_end, s.lost_entry, s.bad);
	check(trace_writer_close(&w, err, sizeof(err)) == 0, "writer closes");
	trace_spans_free(&s);
	doc = slurp(path);
	check(doc && count(doc, "\"ph\":\"X\"") == 2 + 2 + 3 + 2 + 1 + 1000 + 100 + 2, "X events in the file");
	check(doc && strstr(doc, "\"ts\":2000101.000,\"pid\":4100,\"tid\":4100,\"name\":\"f1\",\"cat\":\"uprobe\","
			     "\"dur\":1.000}"), "the clamped call starts where the previous one ended");
	check(doc && strstr(doc, "{\"ph\":\"X\",\"ts\":6.000,\"pid\":100,\"tid\":100,\"name\":\"f1\",\"cat\":\"uprobe\","
			     "\"dur\":1.000,\"args\":{\"end\":\"unmatched: skipped by longjmp or an exception\"}}"),
	      "longjmp frame: closes at its caller's return, marked unmatched");
	check(doc && strstr(doc, "\"ts\":9.000,\"pid\":100,\"tid\":100,\"name\":\"f1\",\"cat\":\"uprobe\",\"dur\":1.000,"
			     "\"args\":{\"end\":\"record lost\"}"), "lost return: ends where the next sibling starts");
	check(doc && strstr(doc, "\"ts\":5.000,\"pid\":100,\"tid\":100,\"name\":\"f0\",\"cat\":\"uprobe\",\"dur\":2.000}"),
	      "caller of the longjmp'd frame: normal span");
	check(doc && line_with(doc, "\"ts\":15.000,\"pid\":100,\"tid\":101", line, sizeof(line)) &&
	      strstr(line, "\"dur\":1.000") && strstr(line, "thread exited"), "exit: inner frame %s", line);
	check(doc && line_with(doc, "\"ts\":17.000,\"pid\":100,\"tid\":102", line, sizeof(line)) &&
	      strstr(line, "\"dur\":8.000") && strstr(line, "open at end of run"), "open at end: %s", line);
	check(doc && doc[strlen(doc) - 1] == '\n' && strstr(doc, "]}\n"), "document closed");
	free(doc);
	unlink(path);
}

static double arg_value(const char *line, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(line, k);
	return p ? strtod(p + strlen(k), NULL) : NAN;
}

static bool near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fmax(1, fabs(b));
}

static void test_tracks(void)
{
	static const struct { const char *k; double v; } icx[] = {
		{ "TOPDOWN.SLOTS_P", 5e9 }, { "IDQ_UOPS_NOT_DELIVERED.CORE", 1e9 }, { "INT_MISC.UOP_DROPPING", 5e7 },
		{ "TOPDOWN.BACKEND_BOUND_SLOTS", 2e9 }, { "INT_MISC.CLEARS_COUNT", 1e7 }, { "UOPS_RETIRED.SLOTS", 1.5e9 },
	};
	const struct tma_cpu *cpu = tma_cpu_by_name("icelakex");
	char path[] = "/tmp/tmabpf-test-tracks-XXXXXX", err[256], line[2048] = "";
	struct event_list el = {};
	struct thread_table tt;
	struct trace_writer w;
	struct trace_tracks tr;
	struct thread_stats *live;
	struct tma_env env = { 0 };
	static struct tma_plan plan;
	int fd = mkstemp(path);
	char *doc;
	double fe = (1e9 - 5e7) / 5e9, be = 2e9 / 5e9 + 5 * 1e7 / 5e9;

	close(fd);
	check(tma_plan(&plan, cpu, 1, TMABPF_MAX_EVENTS, &env, tma_encode_key, err, sizeof(err)) == 0 &&
	      tma_plan_append(&plan, &el, err, sizeof(err)) == 0, "plan icelakex L1 %s", err);
	thread_table_init(&tt, el.n);
	live = calloc(2, sizeof(*live));
	for (int i = 0; i < 2; i++) {
		live[i].pid = 200;
		live[i].tid = 200 + i;
		snprintf(live[i].comm, sizeof(live[i].comm), i ? "worker" : "app");
		live[i].oncpu_ns = 250000000;		/* 0.25 s each: 0.5 thread-seconds per second */
		live[i].offcpu_blocked_ns = 100000000;
		for (int e = 0; e < el.n; e++)
			for (size_t k = 0; k < sizeof(icx) / sizeof(icx[0]); k++)
				if (!strcmp(icx[k].k, el.ev[e].name)) {
					live[i].c[e].value = (__u64)(icx[k].v / 2);
					live[i].c[e].enabled = live[i].c[e].running = 1000;
				}
	}
	thread_table_set_live(&tt, live, 2);
	check(trace_writer_open(&w, path, 0600, 0, err, sizeof(err)) == 0, "writer opens");
	trace_tracks_init(&tr, &w, &el, &plan, 1000000000ULL);
	trace_tracks_sample(&tr, &tt, 2000000000ULL);	/* interval [1 s, 2 s] */
	trace_tracks_sample(&tr, &tt, 3000000000ULL);	/* nothing changed */
	trace_tracks_sample(&tr, &tt, 4000000000ULL);
	live = calloc(2, sizeof(*live));
	memcpy(live, tt.live, 2 * sizeof(*live));
	snprintf(live[1].comm, sizeof(live[1].comm), "renamed");
	thread_table_set_live(&tt, live, 2);
	trace_tracks_sample(&tr, &tt, 5000000000ULL);
	trace_tracks_free(&tr);
	check(trace_writer_close(&w, err, sizeof(err)) == 0, "writer closes");
	doc = slurp(path);
	check(doc && line_with(doc, "\"pid\":200,\"tid\":200,\"name\":\"sched\"", line, sizeof(line)) &&
	      strstr(line, "\"ts\":1000000.000") && near(arg_value(line, "oncpu"), 0.5) &&
	      near(arg_value(line, "offcpu_blocked"), 0.2), "sched track at the interval's start: %s", line);
	check(doc && line_with(doc, "\"pid\":200,\"tid\":200,\"name\":\"tma\"", line, sizeof(line)) &&
	      near(arg_value(line, "Frontend_Bound"), 100 * fe) && near(arg_value(line, "Backend_Bound"), 100 * be),
	      "TMA level 1 of the interval's deltas: %s", line);
	check(doc && line_with(doc, "\"pid\":200,\"tid\":200,\"name\":\"rate\"", line, sizeof(line)) &&
	      near(arg_value(line, "TOPDOWN.SLOTS_P"), 5e9), "counter rate per second: %s", line);
	check(doc && count(doc, "\"pid\":200,\"tid\":200,\"name\":\"sched\"") == 2,
	      "an idle process gets one zero sample, then none");
	check(doc && count(doc, "\"pid\":4194304,\"tid\":4194304,\"name\":\"sched\"") == 4, "the all-threads track every sample");
	check(doc && count(doc, "\"tid\":201,\"name\":\"thread_name\",\"args\":{\"name\":\"worker\"}") == 1 &&
	      count(doc, "\"tid\":201,\"name\":\"thread_name\",\"args\":{\"name\":\"renamed\"}") == 1 &&
	      count(doc, "\"pid\":200,\"name\":\"process_name\",\"args\":{\"name\":\"app\"}") == 1,
	      "thread names once, again after a rename; process named after its main thread");
	free(doc);
	unlink(path);
	thread_table_free(&tt);
}

static void test_bad_path(void)
{
	struct trace_writer w;
	char err[256];

	check(trace_writer_open(&w, "/nonexistent-dir/x.json", 0600, 0, err, sizeof(err)) < 0 &&
	      strstr(err, "--trace /nonexistent-dir/x.json") && strstr(err, "No such file"), "bad path: %s", err);
	check(trace_writer_close(&w, err, sizeof(err)) == 0, "closing a writer never opened is a no-op");
}

int main(void)
{
	test_spans();
	test_tracks();
	test_bad_path();
	return check_exit();
}
