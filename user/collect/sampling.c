// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The --sample feature: load/attach, maps snapshots, per-function table, folded stacks.  See sampling.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collect/bpf_util.h"
#include "collect/sampling.h"
#include "lib/clock.h"
#include "lib/warn.h"
#include "model/counters.h"
#include "model/thread_table.h"

static void on_notice(void *ctx, const struct sample_key *key);

int sampling_load(struct sampling *s, struct threads_prog *tp, const struct sampling_cfg *cfg, char *err,
		  size_t errlen)
{
	struct samples_cfg scfg = { .hz = cfg->hz, .max_rows = cfg->max_rows, .try_cycles = cfg->pmu,
				    .spin = cfg->spin, .no_deltas = cfg->events_hz > 0,
				    .on_notice = on_notice, .ctx = s,
				    .percall_ring = cfg->percall ? ringbuf_bytes(4u << 20) : 0 };
	int r;

	memset(s, 0, sizeof(*s));
	folded_init(&s->folded);
	s->sym = symbolizer_new();
	if (!s->sym) {
		err_set(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r = samples_load(&s->prog, tp, &scfg, err, errlen);
	if (r) {
		samples_destroy(&s->prog);
		return r;
	}
	s->loaded = true;
	s->want_profile = cfg->profile;
	if (cfg->events_hz > 0) {
		s->evs = cfg->evs;
		s->events_hz = cfg->events_hz;
		s->ev_loaded = true;	/* evsamples_destroy cleans up a partial load */
		return evsamples_load(&s->evp, &s->prog, true, cfg->thread_est_fd, err, errlen);
	}
	return 0;
}

int sampling_attach(struct sampling *s, char *err, size_t errlen)
{
	int r = samples_attach(&s->prog, err, errlen);

	s->start_mono_ns = mono_ns();
	s->start_unix_s = unix_time_s();
	if (!r && s->prog.hz > 0)
		note_print("sample: %s at %d Hz on every CPU (%s)", s->prog.event, s->prog.hz,
			s->prog.why);
	if (r || !s->ev_loaded)
		return r;
	if ((r = evsamples_attach(&s->evp, s->evs, s->events_hz, err, errlen)))
		return r;
	for (int e = 0; e < s->evs->n; e++)
		if (!s->evp.open[e])
			warn_add("--sample-events: %s cannot sample: %s; it has no estimate", s->evs->ev[e].name,
				 s->evp.why[e]);
	note_print("sample-events: %d events at %d samples/s each per CPU (%.0f in all), each sample "
		"weighted by its period", s->evs->n, s->evp.freq, s->evp.hz);
	return 0;
}

void sampling_watch_mappings(struct sampling *s, const int *pids, int npids)
{
	char err[512];

	if (s->loaded && mmap_events_open(&s->mev, pids, npids, err, sizeof(err)))
		warn_add("sample: %s: a process that exits before its stacks are named keeps only their addresses", err);
}

static void on_mapping(void *ctx, const struct mmap_event *ev)
{
	struct sampling *s = ctx;

	symbolizer_add_mapping(s->sym, ev->pid, ev->addr, ev->addr + ev->len, ev->pgoff, ev->path, ev->maj, ev->min,
			       ev->ino);
}

void sampling_poll(struct sampling *s)
{
	if (!s->loaded)
		return;
	mmap_events_drain(&s->mev, on_mapping, s);	/* before the stacks that may need them are named */
	samples_poll(&s->prog);
}

void sampling_tick(struct sampling *s, unsigned long long now_ns)
{
	if (s->ev_loaded)
		evsamples_adapt(&s->evp, now_ns);
}

void sampling_detach(struct sampling *s)
{
	if (s->ev_loaded)
		evsamples_detach(&s->evp);
	if (s->loaded)
		samples_detach(&s->prog);
}

/* ---- naming stacks ---------------------------------------------------- */

/* One stack, named: leaf first. */
struct named_stack {
	unsigned int pid;	/* 0 for kernel stacks */
	__u64 id;		/* 0: empty slot */
	int n;
	const char **labels;	/* for the table: "func" or "module+0xOFF" */
	const char **fold;	/* for --folded: kernel frames "_[k]", JIT frames "_[j]" */
	struct sym_info leaf;
	struct profile_frame *frames;	/* every frame's address and names (--pprof); NULL otherwise */
	bool incomplete;	/* a frame was in no mapping (mapped since? named again, up to MAX_TRIES) */
	int tries;
};

#define MAX_TRIES 3

static __u64 memo_hash(unsigned int pid, __u64 id)
{
	__u64 h = (id ^ ((__u64)pid * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL;

	return h ^ (h >> 29);
}

static struct named_stack *memo_slot(struct stack_memo *m, unsigned int pid, __u64 id)
{
	size_t j;

	for (j = memo_hash(pid, id) & (m->cap - 1); m->v[j].id; j = (j + 1) & (m->cap - 1))
		if (m->v[j].id == id && m->v[j].pid == pid)
			break;
	return &m->v[j];
}

static int memo_grow(struct stack_memo *m)
{
	struct stack_memo n = { .cap = m->cap ? m->cap * 2 : 1024, .n = m->n };

	n.v = calloc(n.cap, sizeof(*n.v));
	if (!n.v)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++)
		if (m->v[i].id)
			*memo_slot(&n, m->v[i].pid, m->v[i].id) = m->v[i];
	free(m->v);
	*m = n;
	return 0;
}

static void memo_free(struct stack_memo *m)
{
	for (size_t i = 0; i < m->cap; i++) {
		free(m->v[i].labels);
		free(m->v[i].fold);
		free(m->v[i].frames);
	}
	free(m->v);
	memset(m, 0, sizeof(*m));
}

static const char *decorate(struct symbolizer *sym, const char *label, const char *suffix)
{
	char buf[1024];

	snprintf(buf, sizeof(buf), "%s%s", label, suffix);
	return symbolizer_intern(sym, buf);
}

/* A named stack that is final: complete, or tried often enough. */
static const struct named_stack *memo_find(struct stack_memo *m, unsigned int pid, __u64 id, bool kernel)
{
	struct named_stack *ns;

	if (!id || !m->cap)
		return NULL;
	ns = memo_slot(m, kernel ? 0 : pid, id);
	return ns->id && (!ns->incomplete || ns->tries >= MAX_TRIES) ? ns : NULL;
}

/* Name stack f (id) of pid once; later calls return the same names. */
static const struct named_stack *name_stack(struct sampling *s, unsigned int pid, __u64 id, bool kernel,
					    const struct stack_frames *f)
{
	struct stack_memo *m = &s->memo;
	const struct named_stack *done = memo_find(m, pid, id, kernel);
	struct sym_info user[TMABPF_STACK_DEPTH];
	const char **labels, **fold;
	struct named_stack *ns;

	if (done)
		return done;
	if (!id || !f || !f->nr)
		return NULL;
	if (2 * (m->n + 1) > m->cap && memo_grow(m))
		return NULL;
	ns = memo_slot(m, kernel ? 0 : pid, id);
	labels = calloc(f->nr, sizeof(*labels));
	fold = calloc(f->nr, sizeof(*fold));
	if (!labels || !fold) {
		free(labels);
		free(fold);
		return ns->id ? ns : NULL;
	}
	if (ns->id) {
		/* named before with a frame in no mapping: maybe mapped since (ld.so, dlopen) */
		free(ns->labels);
		free(ns->fold);
		free(ns->frames);
		ns->frames = NULL;
	} else {
		m->n++;
	}
	ns->labels = labels;
	ns->fold = fold;
	ns->pid = kernel ? 0 : pid;
	ns->id = id;
	ns->n = (int)f->nr;
	ns->incomplete = false;
	ns->tries++;
	if (s->want_profile)
		ns->frames = calloc(f->nr, sizeof(*ns->frames));	/* NULL: the profile lacks this stack's frames */
	if (!kernel)	/* ends at the first caller frame outside code: FP-walk junk is one [unknown] */
		ns->n = (int)symbolizer_user_stack(s->sym, (int)pid, f->ip,
						   f->nr < TMABPF_STACK_DEPTH ? f->nr : TMABPF_STACK_DEPTH, user);
	for (int i = 0; i < ns->n; i++) {
		struct sym_info si;

		if (kernel)
			symbolizer_kernel(s->sym, f->ip[i], i > 0, &si);
		else
			si = user[i];
		if (ns->frames)
			ns->frames[i] = (struct profile_frame){ .addr = f->ip[i], .si = si };
		ns->labels[i] = symbolizer_label(s->sym, &si);
		ns->incomplete |= si.unmapped;
		ns->fold[i] = symbolizer_fold_label(s->sym, &si);
		if (si.kind != SYM_USER)
			ns->fold[i] = decorate(s->sym, ns->fold[i], si.kind == SYM_KERNEL ? "_[k]" : "_[j]");
		if (i == 0)
			ns->leaf = si;
	}
	return ns;
}

/* A new row: name its user stack now, while the process lives and maps what
 * it mapped when sampled; {pid, tid 0}: the process exec'd. */
static void on_notice(void *ctx, const struct sample_key *key)
{
	struct sampling *s = ctx;
	struct stack_frames f;

	if (!key->tid) {
		symbolizer_add_pid(s->sym, (int)key->pid);
		return;
	}
	if (!key->ustack || memo_find(&s->memo, key->pid, key->ustack, false))
		return;
	if (samples_stack_lookup(&s->prog, key->ustack, &f) == 0)
		name_stack(s, key->pid, key->ustack, false, &f);
}

static void add_folded(struct sampling *s, const struct sample_row *row, const struct named_stack *u,
		       const struct named_stack *k)
{
	size_t n = 1 + (u ? u->n : 0) + (k ? k->n : 0), i = 0;
	const char **frames = calloc(n + 1, sizeof(*frames));
	char comm[TMABPF_COMM_LEN + 1];

	if (!frames)
		return;
	memcpy(comm, row->s.comm, TMABPF_COMM_LEN);
	comm[TMABPF_COMM_LEN] = 0;
	frames[i++] = symbolizer_intern(s->sym, comm[0] ? comm : "[unknown]");
	for (int j = u ? u->n - 1 : -1; j >= 0; j--)
		frames[i++] = u->fold[j];
	for (int j = k ? k->n - 1 : -1; j >= 0; j--)
		frames[i++] = k->fold[j];
	if (i == 1)
		frames[i++] = symbolizer_intern(s->sym, "[no stack]");
	folded_add(&s->folded, frames, i, row->s.count);
	free(frames);
}

static void warn_losses(const struct sample_result *r)
{
	if (r->rows_full)
		warn_add("--sample: %llu samples not recorded: the sample table is full (raise --max-sample-stacks)",
			 r->rows_full);
	if (r->stacks_full)
		warn_add("--sample: %llu stacks not kept: the stack store is full (raise --max-sample-stacks); their "
			 "samples are counted without that stack", r->stacks_full);
	if (r->stack_errors)
		warn_add("--sample: %llu stacks could not be read (bpf_get_stack failed); their samples are counted "
			 "without that stack", r->stack_errors);
	if (r->notices_lost)
		warn_add("--sample: %llu new-stack notices lost (ring buffer full): those stacks were named at the end, "
			 "from maps read then", r->notices_lost);
	/* statistical: a slice of t ns holds t x rate samples on average; warn past 5 % and 3 sigma */
	if (r->expected > r->target && (r->expected - r->target) * 20 > r->expected &&
	    (double)(r->expected - r->target) > 3.0 * sqrt((double)r->expected) + 10)
		warn_add("--sample: %llu samples of tracked threads, %llu expected from their on-CPU time: samples "
			 "were lost (the kernel throttled sampling, see kernel.perf_event_max_sample_rate, or another "
			 "tracing program held the CPU)", r->target, r->expected);
}

/* --pprof: the types of the profile's values: samples, the stack sampler's (cpu-clock: time,
 * cycles: its periods), and --sample-events' estimates, one per event. */
static int profile_start(struct sampling *s)
{
	const char *type[PROFILE_MAX_TYPES], *unit[PROFILE_MAX_TYPES];
	int n = 0;

	type[n] = "samples", unit[n++] = "count";
	if (s->prog.hz > 0) {
		type[n] = s->prog.cpu_clock ? "cpu" : s->prog.event;
		unit[n++] = s->prog.cpu_clock ? "nanoseconds" : "count";
	}
	for (int e = 0; s->ev_loaded && e < s->evs->n && n < PROFILE_MAX_TYPES; e++) {
		type[n] = s->evs->ev[e].name;
		unit[n++] = profile_event_unit(s->evs->ev[e].name);
	}
	if (profile_init(&s->profile, n, type, unit, SIZE_MAX))
		return -ENOMEM;
	/* cpu-clock: one sample per 1e9/hz ns on a CPU; a hardware event samples at a frequency, its
	 * period varies (the kernel adjusts it), so only its type is said */
	if (s->prog.hz > 0)
		profile_set_period(&s->profile, type[1], unit[1], s->prog.cpu_clock ? 1000000000LL / s->prog.hz : 0);
	s->profile.time_ns = (unsigned long long)(s->start_unix_s * 1e9);
	s->profile.duration_ns = mono_ns() - s->start_mono_ns;
	s->profile_ok = true;
	return 0;
}

static void add_profile(struct sampling *s, const struct sample_row *row, const struct named_stack *u,
			const struct named_stack *k, int nev)
{
	struct profile_frame fr[PROFILE_MAX_DEPTH];
	long long v[PROFILE_MAX_TYPES];
	char comm[TMABPF_COMM_LEN + 1];
	struct profile_labels l = { .pid = row->key.pid, .tid = row->key.tid, .comm = comm };
	int n = 0, t = 0;

	for (int i = 0; k && k->frames && i < k->n && n < PROFILE_MAX_DEPTH; i++)
		fr[n++] = k->frames[i];
	for (int i = 0; u && u->frames && i < u->n && n < PROFILE_MAX_DEPTH; i++)
		fr[n++] = u->frames[i];
	memcpy(comm, row->s.comm, TMABPF_COMM_LEN);
	comm[TMABPF_COMM_LEN] = 0;
	v[t++] = (long long)row->s.count;
	if (s->prog.hz > 0)
		v[t++] = (long long)row->s.period;
	for (int e = 0; s->ev_loaded && e < nev && t < PROFILE_MAX_TYPES; e++)
		v[t++] = (long long)(counter_scaled(&row->s.c[e]) + 0.5);
	profile_add(&s->profile, fr, n, v, &l);
}

/* A sample whose leaf has no function name: why (sample_result's unknown_leaf parts). */
static void count_unnamed(struct sampling *s, struct sample_result *res, const struct sym_info *leaf, unsigned int pid,
			  unsigned long long n)
{
	res->unknown_leaf += n;
	if (leaf->kind == SYM_JIT_ANON) {
		res->jit_leaf += n;
		res->jit_onednn |= symbolizer_pid_maps(s->sym, (int)pid, "libdnnl") ||
				   symbolizer_pid_maps(s->sym, (int)pid, "libmkldnn");
		res->jit_v8 |= symbolizer_pid_maps(s->sym, (int)pid, "node") ||
			       symbolizer_pid_maps(s->sym, (int)pid, "libnode");
	} else if (leaf->unmapped || !strcmp(leaf->module, "[unknown]")) {
		res->unmapped_leaf += n;
	} else if (leaf->kind == SYM_USER && leaf->module[0] != '[') {
		res->nosym_leaf += n;
	}
}

/* More than 1 % of the samples without a function name: one line, how many and why. */
static void warn_unnamed(const struct sample_result *r)
{
	struct { const char *module; unsigned long long n; } top[3] = {};
	char why[768], mods[256] = "";
	size_t len = 0;

	if (!r->samples || r->unknown_leaf * 100 <= r->samples)
		return;
	/* the files with the most samples where they have no symbol */
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct sample_func *f = &r->funcs[i];
		unsigned long long n = f->count;

		if (f->symbol == f->module || f->module[0] == '[' || !strstr(f->symbol, "+0x"))
			continue;
		for (int t = 0; t < 3 && n; t++) {
			if (top[t].module == f->module) {
				top[t].n += n;
				n = 0;
			}
		}
		for (int t = 0; t < 3 && n; t++)
			if (!top[t].module) {
				top[t].module = f->module;
				top[t].n = n;
				n = 0;
			}
	}
	for (int t = 0; t < 3 && top[t].module; t++)
		len += snprintf(mods + len, len < sizeof(mods) ? sizeof(mods) - len : 0, "%s%s", t ? ", " : "",
				top[t].module);
	len = 0;
#define WHY(cond, ...) \
	if (cond && len < sizeof(why)) \
		len += snprintf(why + len, sizeof(why) - len, __VA_ARGS__)
	WHY(r->nosym_leaf, "%s%llu in files with no symbol there (%s; stripped: their debug symbols would name them)",
	    len ? "; " : "", r->nosym_leaf, mods);
	WHY(r->jit_leaf, "%s%llu in JIT code that no perf map names (one [jit] row per mapping%s)", len ? "; " : "",
	    r->jit_leaf, r->jit_onednn ? ": run with DNNL_JIT_PROFILE=2 (oneDNN 3: ONEDNN_JIT_PROFILE=2) to name "
	    "oneDNN's kernels" : r->jit_v8 ? ": run node with --perf-basic-prof to name V8's code" :
	    ": the runtime's perf map switch names it (oneDNN: DNNL_JIT_PROFILE=2, node: --perf-basic-prof)");
	WHY(r->unmapped_leaf, "%s%llu in no executable mapping of the process when its maps were read", len ? "; " : "",
	    r->unmapped_leaf);
	WHY(r->no_stack, "%s%llu without a stack", len ? "; " : "", r->no_stack);
	WHY(r->unknown_leaf > r->nosym_leaf + r->jit_leaf + r->unmapped_leaf + r->no_stack,
	    "%s%llu in other anonymous memory", len ? "; " : "",
	    r->unknown_leaf - r->nosym_leaf - r->jit_leaf - r->unmapped_leaf - r->no_stack);
#undef WHY
	warn_add("--sample: %llu of %llu samples (%.1f %%) have no function name: %s", r->unknown_leaf, r->samples,
		 100.0 * r->unknown_leaf / r->samples, why);
}

/* A row's stack: named before, else read now (one lookup) and named, or from
 * the stacks read in one go (st, the final collect). */
static const struct named_stack *row_stack(struct sampling *s, const struct stack_entry *st, size_t nst,
					   unsigned int pid, __u64 id, bool kernel)
{
	const struct named_stack *ns = memo_find(&s->memo, pid, id, kernel);
	struct stack_frames f;

	if (ns || !id)
		return ns;
	if (st)
		return name_stack(s, pid, id, kernel, samples_stack_find(st, nst, id));
	return name_stack(s, pid, id, kernel, samples_stack_lookup(&s->prog, id, &f) ? NULL : &f);
}

const char *sampling_leaf(struct sampling *s, const struct sample_key *k, const char **module)
{
	const struct named_stack *ns = row_stack(s, NULL, 0, k->pid, k->kstack, true);

	if (!ns)
		ns = row_stack(s, NULL, 0, k->pid, k->ustack, false);
	if (!ns || ns->n < 1)
		return NULL;
	*module = ns->leaf.module;
	return ns->labels[0];
}

int sampling_percall_fd(const struct sampling *s)
{
	return s->loaded ? samples_percall_fd(&s->prog) : -1;
}

/*
 * Read the rows, name their leaves and add them up per (thread, function):
 * *out (malloc'd) sorted by sample_func_cmp; res gets the sample totals.
 * all_stacks: read every stored stack in one go and add the rows' stacks to
 * the folded output (the final collect); else look up only stacks not named
 * yet (the live view's snapshots).
 */
static int read_rows(struct sampling *s, int nev, bool all_stacks, struct sample_result *res,
		     struct sample_func **out, size_t *nout)
{
	struct stack_entry *st = NULL;
	struct sample_row *rows = NULL;
	struct sample_func *thr = NULL;
	struct sample_caller *callers = NULL;
	size_t n = 0, nst = 0, ncallers = 0;
	int r;

	*out = NULL;
	*nout = 0;
	samples_poll(&s->prog);	/* processes first sampled since the last poll */
	if ((r = samples_read(&s->prog, &rows, &n)) || (all_stacks && (r = samples_read_stacks(&s->prog, &st, &nst)))) {
		free(rows);
		return r;
	}
	res->nr_rows = n;
	res->nr_stacks = all_stacks ? nst : res->nr_stacks;
	/* room for every row's two stacks up front: a rehash would move the entries the loop holds */
	while (2 * (s->memo.n + 2 * n + 2) > s->memo.cap)
		if (memo_grow(&s->memo)) {
			r = -ENOMEM;
			goto out;
		}
	thr = calloc(n ? n : 1, sizeof(*thr));
	if (!all_stacks)	/* the live view's: each function's callers so far */
		callers = calloc(n ? n : 1, sizeof(*callers));
	if (!thr || (!all_stacks && !callers)) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct sample_key *k = &rows[i].key;
		const struct named_stack *u = row_stack(s, st, nst, k->pid, k->ustack, false);
		const struct named_stack *ks = row_stack(s, st, nst, k->pid, k->kstack, true);
		const struct named_stack *leaf = ks ? ks : u;
		struct sample_func *f = &thr[i];

		f->pid = k->pid;
		f->tid = k->tid;
		memcpy(f->comm, rows[i].s.comm, sizeof(f->comm));
		f->count = rows[i].s.count;
		f->period = rows[i].s.period;
		memcpy(f->c, rows[i].s.c, sizeof(f->c));
		memcpy(f->ev_samples, rows[i].s.ev_samples, sizeof(f->ev_samples));
		if (leaf) {
			f->module = leaf->leaf.module;
			f->symbol = leaf->labels[0];
			if (!leaf->leaf.name)
				count_unnamed(s, res, &leaf->leaf, k->pid, f->count);
			if (callers)	/* the frame above the leaf: in its stack, else the user stack's leaf */
				callers[ncallers++] = (struct sample_caller){
					.pid = k->pid, .module = f->module, .symbol = f->symbol, .count = f->count,
					.caller = leaf->n > 1 ? leaf->labels[1] : leaf == ks && u && u->n ? u->labels[0] :
						  symbolizer_intern(s->sym, "[stack top]") };
		} else {
			f->module = symbolizer_intern(s->sym, "[unknown]");
			f->symbol = symbolizer_intern(s->sym, "[no stack]");
			res->no_stack += f->count;
			res->unknown_leaf += f->count;
		}
		res->samples += f->count;
		if (all_stacks)
			add_folded(s, &rows[i], u, ks);
		if (all_stacks && s->profile_ok)
			add_profile(s, &rows[i], u, ks, nev);
	}
	*nout = sample_funcs_merge(thr, n, nev);
	*out = thr;
	thr = NULL;
	res->ncallers = callers ? sample_callers_merge(callers, ncallers) : 0;
	res->callers = callers;
	callers = NULL;
	r = 0;
out:
	free(thr);
	free(callers);
	free(rows);
	free(st);
	return r;
}

static void result_reset(const struct sampling *s, struct sample_result *res)
{
	free(res->funcs);
	free(res->callers);
	*res = (struct sample_result){ .event = s->prog.hz > 0 ? s->prog.event : "none", .hz = s->prog.hz,
				       .cpu_clock = s->prog.cpu_clock, .events = s->ev_loaded };
}

/* --sample-events: per event, whether it sampled, its samples and its share of the time on a counter. */
static void events_info(struct sampling *s, struct sample_result *res, const struct sample_func *thr, size_t n)
{
	res->events_hz = s->evp.hz;
	res->events_freq = s->evp.freq;
	for (int e = 0; e < s->evs->n; e++) {
		struct sample_event_info *x = &res->ev[e];
		struct evsample_times t;

		x->open = s->evp.open[e];
		snprintf(x->why, sizeof(x->why), "%s", s->evp.why[e]);
		for (size_t i = 0; i < n; i++)
			x->samples += thr[i].ev_samples[e];
		evsamples_times(&s->evp, e, &t);
		x->running_pct = t.enabled ? 100.0 * t.running / t.enabled : 100.0;
	}
	evsamples_shared(&s->evp, s->evs, res->shared, sizeof(res->shared));
	if (res->shared[0])
		warn_add("--sample-events: more events than counters: %s share counters; their estimates are scaled by "
			 "the time each ran", res->shared);
}

int sampling_collect(struct sampling *s, const struct event_list *evs, const struct self_stats *self,
		     unsigned long long oncpu_ns)
{
	struct sample_result *res = &s->res;
	struct sample_func *thr;
	size_t nthr;
	int r;

	if (!s->loaded)
		return 0;
	mmap_events_drain(&s->mev, on_mapping, s);
	result_reset(s, res);
	res->seen = self->stat[STAT_SAMPLES_SEEN];
	res->target = self->stat[STAT_SAMPLES_TARGET];
	res->rows_full = self->stat[STAT_SAMPLE_ROWS_FULL];
	res->stacks_full = self->stat[STAT_SAMPLE_STACKS_FULL];
	res->stack_errors = self->stat[STAT_SAMPLE_STACK_ERRORS];
	res->notices_lost = self->stat[STAT_SAMPLE_NOTICES_LOST];
	res->folds_interrupted = self->stat[STAT_FOLD_INTERRUPTED];
	res->expected = s->prog.cpu_clock ? (unsigned long long)(oncpu_ns / 1e9 * s->prog.hz) : 0;
	samples_run_stats(&s->prog, &res->bpf_run_ns, &res->bpf_run_cnt);
	if (s->ev_loaded) {
		unsigned long long ns, cnt;

		evsamples_run_stats(&s->evp, &ns, &cnt);
		res->bpf_run_ns += ns;
		res->bpf_run_cnt += cnt;
	}
	if (s->want_profile && profile_start(s))
		warn_add("--pprof: out of memory for the profile");
	if ((r = read_rows(s, evs->n, true, res, &thr, &nthr))) {
		warn_add("--sample: reading the sample maps: %s", strerror(-r));
		return r;
	}
	if (s->ev_loaded)
		events_info(s, res, thr, nthr);
	r = sample_result_fill(res, thr, nthr, evs->n);
	free(thr);
	if (!r) {
		warn_losses(res);
		warn_unnamed(res);
	}
	return r;
}

const struct sample_result *sampling_snapshot(struct sampling *s, const struct event_list *evs)
{
	struct sample_result *res = &s->live;
	struct sample_func *thr;
	size_t nthr;

	if (!s->loaded)
		return NULL;
	result_reset(s, res);
	if (read_rows(s, evs->n, false, res, &thr, &nthr))
		return NULL;
	res->funcs = thr;
	res->nfuncs = nthr;
	return res;
}

void sampling_free(struct sampling *s)
{
	if (s->ev_loaded)
		evsamples_destroy(&s->evp);
	s->ev_loaded = false;
	if (s->loaded)
		samples_destroy(&s->prog);
	s->loaded = false;
	memo_free(&s->memo);
	mmap_events_close(&s->mev);
	symbolizer_free(s->sym);
	s->sym = NULL;
	folded_free(&s->folded);
	if (s->profile_ok)
		profile_free(&s->profile);
	s->profile_ok = false;
	free(s->res.funcs);
	s->res.funcs = NULL;
	free(s->live.funcs);
	s->live.funcs = NULL;
	free(s->live.callers);
	s->live.callers = NULL;
}
