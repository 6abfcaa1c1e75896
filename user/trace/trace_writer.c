// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Chrome trace-event JSON for --trace, streamed (see trace_writer.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "lib/version.h"
#include "lib/warn.h"
#include "trace/trace_writer.h"

static unsigned long long rel_ns(const struct trace_writer *w, unsigned long long ns)
{
	return ns > w->origin_ns ? ns - w->origin_ns : 0;
}

/* Perfetto's tokenizer refuses control characters and \u escapes in strings:
 * replace them (comms and symbols practically never hold any). */
static bool needs_clean(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return true;
	return false;
}

static void put_str(struct json *j, const char *key, const char *s)
{
	char *c;

	if (!s || !needs_clean(s)) {
		json_str(j, key, s);
		return;
	}
	c = strdup(s);
	if (!c) {
		json_str(j, key, "?");
		return;
	}
	for (unsigned char *p = (unsigned char *)c; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			*p = '?';
	json_str(j, key, c);
	free(c);
}

int trace_writer_open(struct trace_writer *w, const char *path, mode_t mode, unsigned long long origin_ns,
		      char *err, size_t errlen)
{
	int r;

	memset(w, 0, sizeof(*w));
	w->origin_ns = origin_ns;
	r = outfile_open(&w->out, "--trace", path, OUTFILE_STREAM, mode, err, errlen);
	if (r)
		return r;
	w->f = w->out.f;
	w->open = true;
	json_init(&w->j, w->f, false);
	json_obj_begin(&w->j, NULL);
	json_obj_begin(&w->j, "otherData");
	json_str(&w->j, "producer", "tmabpf " TMABPF_VERSION);
	json_str(&w->j, "clock", "CLOCK_MONOTONIC (bpf_ktime_get_ns)");
	json_str(&w->j, "ts", "microseconds since origin_monotonic_ns");
	json_u64(&w->j, "origin_monotonic_ns", origin_ns);
	json_obj_end(&w->j);
	json_arr_begin(&w->j, "traceEvents");
	fputc('\n', w->f);
	return 0;
}

struct json *trace_writer_event(struct trace_writer *w, char ph, unsigned long long ts_ns, unsigned int pid,
				long long tid, const char *name, const char *cat)
{
	char phs[2] = { ph, 0 };
	struct json *j = &w->j;

	json_obj_begin(j, NULL);
	json_str(j, "ph", phs);
	json_fixed3(j, "ts", rel_ns(w, ts_ns));
	json_u64(j, "pid", pid);
	if (tid >= 0)
		json_i64(j, "tid", tid);
	put_str(j, "name", name);
	if (cat)
		json_str(j, "cat", cat);
	return j;
}

void trace_writer_event_end(struct trace_writer *w)
{
	json_obj_end(&w->j);
	fputc('\n', w->f);
	w->events++;
}

void trace_writer_span(struct trace_writer *w, unsigned int pid, unsigned int tid, const char *name,
		       unsigned long long start_ns, unsigned long long end_ns, const char *note)
{
	struct json *j;

	if (!w->open)
		return;
	j = trace_writer_event(w, 'X', start_ns, pid, tid, name, "uprobe");
	json_fixed3(j, "dur", end_ns > start_ns ? end_ns - start_ns : 0);
	if (note) {
		json_obj_begin(j, "args");
		json_str(j, "end", note);
		json_obj_end(j);
	}
	trace_writer_event_end(w);
}

void trace_writer_counter(struct trace_writer *w, unsigned int pid, const char *name, unsigned long long ts_ns,
			  int n, const char *const *keys, const double *vals)
{
	struct json *j;
	int finite = 0;

	for (int i = 0; i < n; i++)
		finite += isfinite(vals[i]);
	if (!w->open || !finite)
		return;
	j = trace_writer_event(w, 'C', ts_ns, pid, pid, name, "tmabpf");
	json_obj_begin(j, "args");
	for (int i = 0; i < n; i++)
		if (isfinite(vals[i]))
			json_double(j, keys[i], vals[i]);
	json_obj_end(j);
	trace_writer_event_end(w);
}

static void name_event(struct trace_writer *w, const char *what, unsigned int pid, long long tid, const char *name)
{
	struct json *j;

	if (!w->open)
		return;
	j = trace_writer_event(w, 'M', w->origin_ns, pid, tid, what, NULL);
	json_obj_begin(j, "args");
	put_str(j, "name", name);
	json_obj_end(j);
	trace_writer_event_end(w);
}

void trace_writer_process_name(struct trace_writer *w, unsigned int pid, const char *name)
{
	name_event(w, "process_name", pid, -1, name);
}

void trace_writer_thread_name(struct trace_writer *w, unsigned int pid, unsigned int tid, const char *name)
{
	name_event(w, "thread_name", pid, tid, name);
}

void trace_writer_flush(struct trace_writer *w)
{
	if (w->open)
		outfile_flush(&w->out, NULL, 0);	/* a failure is kept and said at close */
}

int trace_writer_close(struct trace_writer *w, char *err, size_t errlen)
{
	if (!w->open)
		return 0;
	json_arr_end(&w->j);
	json_obj_end(&w->j);
	json_end(&w->j);
	w->f = NULL;
	w->open = false;
	return outfile_commit(&w->out, err, errlen);
}
