/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * --trace FILE: Chrome trace-event JSON, the object form that ui.perfetto.dev
 * and chrome://tracing open, written as the run goes (one event per line,
 * nothing kept in memory):
 *
 *   {"otherData": {clock, origin, ...},
 *    "traceEvents": [ {"ph":"X","ts":..,"dur":..,"pid":..,"tid":..,"name":..}, ... ]}
 *
 * ts and dur are microseconds with three decimals (exact nanoseconds) since
 * the origin: CLOCK_MONOTONIC (= bpf_ktime_get_ns) when the file was opened,
 * so spans from BPF and counters from user space share one clock.  Every event
 * puts "ph" and "ts" first and holds no arrays, which Perfetto's streaming
 * tokenizer needs; strings are kept free of control characters for the same
 * reason.
 */
#ifndef TMABPF_TRACE_WRITER_H
#define TMABPF_TRACE_WRITER_H
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include "lib/json.h"
#include "lib/outfile.h"

struct trace_writer {
	FILE *f;			/* out.f while open */
	struct outfile out;
	struct json j;
	unsigned long long origin_ns;	/* CLOCK_MONOTONIC of ts 0 */
	unsigned long long events;	/* written so far */
	bool open;
};

/* Create path (file mode: mode; see outfile.h) and write the header.  0, or -errno with one line in err. */
int trace_writer_open(struct trace_writer *w, const char *path, mode_t mode, unsigned long long origin_ns,
		      char *err, size_t errlen);
/* Begin one event: ph, ts, pid, tid (tid < 0: none), name, cat (NULL: none).
 * The caller may add keys with json_*() (e.g. an "args" object), then ends it. */
struct json *trace_writer_event(struct trace_writer *w, char ph, unsigned long long ts_ns, unsigned int pid,
				long long tid, const char *name, const char *cat);
void trace_writer_event_end(struct trace_writer *w);
/* Complete event (ph X) from start to end; note (NULL: a normal return) goes to args.end. */
void trace_writer_span(struct trace_writer *w, unsigned int pid, unsigned int tid, const char *name,
		       unsigned long long start_ns, unsigned long long end_ns, const char *note);
/* Counter event (ph C): one track per key ("NAME KEY" in Perfetto); non-finite values are left out. */
void trace_writer_counter(struct trace_writer *w, unsigned int pid, const char *name, unsigned long long ts_ns,
			  int n, const char *const *keys, const double *vals);
/* Metadata (ph M): process_name, thread_name. */
void trace_writer_process_name(struct trace_writer *w, unsigned int pid, const char *name);
void trace_writer_thread_name(struct trace_writer *w, unsigned int pid, unsigned int tid, const char *name);
/* Push buffered events to the file (ends a line-complete prefix). */
void trace_writer_flush(struct trace_writer *w);
/* Close the array and the object.  0, or -errno with one line in err when any write failed.
 * Idempotent; a writer never opened closes as a no-op. */
int trace_writer_close(struct trace_writer *w, char *err, size_t errlen);

#endif
