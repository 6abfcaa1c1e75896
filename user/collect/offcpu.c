// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The --offcpu-stacks feature: load/attach, maps of processes, named stacks, folded lines.  See offcpu.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collect/offcpu.h"
#include "lib/grow.h"
#include "lib/warn.h"

static bool pid_known(struct offcpu *o, unsigned int pid)
{
	for (size_t i = 0; i < o->npids; i++)
		if (o->pids[i] == pid)
			return true;
	return false;
}

static void pid_add(struct offcpu *o, unsigned int pid)
{
	unsigned int *v = grow(o->pids, &o->cap, o->npids, sizeof(*v), 64);

	if (!v)
		return;
	o->pids = v;
	o->pids[o->npids++] = pid;
}

/* Frames of this program's own call (tracepoint, BPF trampoline): leaf-most kernel frames, dropped. */
static bool is_tracing_frame(const char *name)
{
	static const char *const prefix[] = { "bpf_prog_", "bpf_trace_run", "__traceiter_", "__bpf_trace_",
					      "trace_sched_switch" };

	for (size_t i = 0; name && i < sizeof(prefix) / sizeof(prefix[0]); i++)
		if (!strncmp(name, prefix[i], strlen(prefix[i])))
			return true;
	return false;
}

/* Name one stack's frames (leaf first) into out[]; returns how many.  fold: the flame graph's names
 * (symbolizer_fold_label: [unknown] for a frame without a function), else the report's. */
static size_t name_frames(struct offcpu *o, unsigned int pid, int id, bool kernel, const char **out, bool fold)
{
	struct sym_info user[TMABPF_STACK_DEPTH];
	struct stack_frames f;
	char buf[1024];
	size_t n = 0, nr;

	if (offcpu_prog_stack(&o->prog, id, &f))
		return 0;
	nr = f.nr < TMABPF_STACK_DEPTH ? f.nr : TMABPF_STACK_DEPTH;
	if (!kernel)	/* ends at the first caller frame outside code: FP-walk junk is one [unknown] */
		nr = symbolizer_user_stack(o->sym, (int)pid, f.ip, nr, user);
	for (size_t i = 0; i < nr; i++) {
		struct sym_info si;
		const char *label;

		if (kernel)
			symbolizer_kernel(o->sym, f.ip[i], i > 0, &si);
		else
			si = user[i];
		label = fold ? symbolizer_fold_label(o->sym, &si) : symbolizer_label(o->sym, &si);
		if (kernel && !n && is_tracing_frame(si.name))
			continue;	/* the tracepoint's own frames, above __schedule */
		if (si.kind != SYM_USER) {
			snprintf(buf, sizeof(buf), "%s%s", label, si.kind == SYM_KERNEL ? "_[k]" : "_[j]");
			label = symbolizer_intern(o->sym, buf);
		}
		if (out)
			out[n] = label;
		n++;
	}
	return n;
}

/* A new row: read its process' maps while it lives (once, again after an
 * exec), and name its user stack now, which reads them again on a miss
 * (libraries loaded since). */
static void on_notice(void *ctx, const struct offcpu_key *key)
{
	struct offcpu *o = ctx;

	if (!key->tid) {
		symbolizer_add_pid(o->sym, (int)key->pid);
		return;
	}
	if (!pid_known(o, key->pid)) {
		pid_add(o, key->pid);
		symbolizer_add_pid(o->sym, (int)key->pid);
	}
	if (key->ustack >= 0)
		name_frames(o, key->pid, key->ustack, false, NULL, false);
}

int offcpu_load(struct offcpu *o, struct threads_prog *tp, int max_rows, char *err, size_t errlen)
{
	int r;

	memset(o, 0, sizeof(*o));
	o->sym = symbolizer_new();
	if (!o->sym) {
		err_set(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r = offcpu_prog_load(&o->prog, tp, max_rows, on_notice, o, err, errlen);
	if (r) {
		offcpu_prog_destroy(&o->prog);
		return r;
	}
	o->loaded = true;
	return 0;
}

int offcpu_attach(struct offcpu *o, char *err, size_t errlen)
{
	return offcpu_prog_attach(&o->prog, err, errlen);
}

void offcpu_poll(struct offcpu *o)
{
	if (o->loaded)
		offcpu_prog_poll(&o->prog);
}

void offcpu_detach(struct offcpu *o)
{
	if (o->loaded)
		offcpu_prog_detach(&o->prog);
}

static int cmp_ns_desc(const void *a, const void *b)
{
	const struct offcpu_stack *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* root first: [reason];comm;user frames;kernel frames, weight in microseconds */
static void add_folded(struct offcpu *o, struct folded *fold, const struct offcpu_stack *s, const char **frames,
		       size_t nk, size_t n)
{
	const char **v = calloc(n + 3, sizeof(*v));
	unsigned long long us = (s->ns + 500) / 1000;
	size_t i = 0;
	char marker[16];

	if (!v || !us) {
		free(v);
		return;
	}
	snprintf(marker, sizeof(marker), "[%s]", offcpu_reason_name(s->reason));
	v[i++] = symbolizer_intern(o->sym, marker);
	v[i++] = symbolizer_intern(o->sym, s->comm[0] ? s->comm : "[unknown]");
	for (size_t j = n; j > nk; j--)
		v[i++] = frames[j - 1];	/* user, root first */
	for (size_t j = nk; j > 0; j--)
		v[i++] = frames[j - 1];	/* kernel, root first */
	if (i == 2)
		v[i++] = symbolizer_intern(o->sym, "[no stack]");
	folded_add(fold, v, i, us);
	free(v);
}

static void warn_losses(const struct offcpu_result *r)
{
	if (r->stat[OFFCPU_STAT_ROWS_FULL])
		warn_add("--offcpu-stacks: %llu off-CPU periods not recorded: the table is full (raise --max-sample-stacks)",
			 r->stat[OFFCPU_STAT_ROWS_FULL]);
	if (r->stat[OFFCPU_STAT_STACK_ERRORS])
		warn_add("--offcpu-stacks: %llu stacks not kept (stack map full or hash collision: raise "
			 "--max-sample-stacks); their time is counted without that stack", r->stat[OFFCPU_STAT_STACK_ERRORS]);
	if (r->stat[OFFCPU_STAT_STARTS_FULL])
		warn_add("--offcpu-stacks: %llu switch-outs not remembered (raise --max-threads)",
			 r->stat[OFFCPU_STAT_STARTS_FULL]);
	if (r->stat[OFFCPU_STAT_NOTICES_LOST])
		warn_add("--offcpu-stacks: %llu new-row notices lost (ring buffer full): their processes were named at the "
			 "end", r->stat[OFFCPU_STAT_NOTICES_LOST]);
}

int offcpu_collect(struct offcpu *o, struct folded *fold)
{
	struct offcpu_result *res = &o->res;
	struct offcpu_row *rows = NULL;
	size_t n = 0;
	int r;

	if (!o->loaded)
		return 0;
	offcpu_prog_poll(&o->prog);
	offcpu_prog_stats(&o->prog, res->stat);
	r = offcpu_prog_read(&o->prog, &rows, &n);
	if (r) {
		warn_add("--offcpu-stacks: reading the off-CPU rows: %s", strerror(-r));
		free(rows);
		return r;
	}
	res->v = calloc(n ? n : 1, sizeof(*res->v));
	if (!res->v) {
		free(rows);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct offcpu_key *k = &rows[i].key;
		struct offcpu_stack *s = &res->v[res->n];
		const char *frames[2 * TMABPF_STACK_DEPTH];
		size_t nk, nu;

		if (!pid_known(o, k->pid)) {	/* its notice was lost */
			pid_add(o, k->pid);
			symbolizer_add_pid(o->sym, (int)k->pid);
		}
		nk = k->kstack >= 0 ? name_frames(o, k->pid, k->kstack, true, frames, false) : 0;
		nu = k->ustack >= 0 ? name_frames(o, k->pid, k->ustack, false, frames + nk, false) : 0;
		s->pid = k->pid;
		s->tid = k->tid;
		memcpy(s->comm, rows[i].v.comm, TMABPF_COMM_LEN);
		s->reason = (int)k->reason;
		s->ns = rows[i].v.ns;
		s->count = rows[i].v.count;
		s->nframes = nk + nu;
		s->frames = malloc((nk + nu + 1) * sizeof(*s->frames));
		if (!s->frames)
			continue;
		memcpy(s->frames, frames, (nk + nu) * sizeof(*frames));
		if (s->reason == OFFCPU_BLOCKED)
			res->blocked_ns += s->ns;
		else
			res->runqueue_ns += s->ns;
		if (fold) {	/* named again for the flame graph: the symbolizer has them at hand */
			size_t fk = k->kstack >= 0 ? name_frames(o, k->pid, k->kstack, true, frames, true) : 0;
			size_t fu = k->ustack >= 0 ? name_frames(o, k->pid, k->ustack, false, frames + fk, true) : 0;

			add_folded(o, fold, s, frames, fk, fk + fu);
		}
		res->n++;
	}
	free(rows);
	qsort(res->v, res->n, sizeof(*res->v), cmp_ns_desc);
	warn_losses(res);
	return 0;
}

void offcpu_free(struct offcpu *o)
{
	if (o->loaded)
		offcpu_prog_destroy(&o->prog);
	o->loaded = false;
	for (size_t i = 0; i < o->res.n; i++)
		free(o->res.v[i].frames);
	free(o->res.v);
	memset(&o->res, 0, sizeof(o->res));
	free(o->pids);
	o->pids = NULL;
	symbolizer_free(o->sym);
	o->sym = NULL;
}

