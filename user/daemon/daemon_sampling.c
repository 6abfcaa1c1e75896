// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "daemon/daemon_cli.h"
#include "daemon/daemon_sampling.h"
#include "lib/clock.h"
#include "lib/json.h"
#include "lib/prom.h"
#include "lib/warn.h"
#include "model/counters.h"
#include "model/profile.h"
#include "pmu/host.h"
#include "pmu/perf_open.h"
#include "sym/symbolize.h"

#define OTHER "[other]"
#define UNKNOWN "[unknown]"


/* ---- naming: a user symbolizer rebuilt now and then, a kernel one kept ---- */

static void know_pid(struct dsamp *s, uint32_t pid, bool exec)
{
	void *met = (void *)(uintptr_t)(s->drains + 1);

	if (!pid)
		return;
	if (exec || !u64map_get(&s->known, pid))
		symbolizer_add_pid(s->usym, (int)pid);	/* gone already: named "[unknown]" later, nothing else */
	u64map_put(&s->known, pid, met);
}

/* An exited process the symbolizer may forget: none of its rows named in this drain or the one
 * before, nor noticed since (rows of its last moments come a drain late). */
static bool keep_exited(void *ctx, int pid)
{
	struct dsamp *s = ctx;
	uintptr_t met = (uintptr_t)u64map_get(&s->known, (uint64_t)pid);

	if (met >= s->drains) {
		s->sym_kept_exited++;
		return true;
	}
	u64map_del(&s->known, (uint64_t)pid);
	return false;
}

static void on_notice(void *ctx, const struct sample_key *key)
{
	struct dsamp *s = ctx;

	if (s->usym)
		know_pid(s, key->pid, key->tid == 0);	/* tid 0: the process exec'd, read its maps again */
}

static int sym_rebuild(struct dsamp *s, unsigned long long now)
{
	struct symbolizer *n = symbolizer_new();
	char err[256];

	if (!n)
		return -ENOMEM;
	symbolizer_set_limit(n, DSAMP_SYM_LIMIT);
	/* a user's library can take seconds to read: never in the refresh */
	if (symbolizer_set_async(n, err, sizeof(err)) && !s->sym_sync_said) {
		warn_add("sampling: %s: files' symbols are read in the refresh, which a big or hostile library "
			 "can hold up for seconds", err);
		s->sym_sync_said = true;
	}
	if (s->usym) {
		struct symbolizer_stats st;

		symbolizer_get_stats(s->usym, &st);
		s->sym_past.dropped += st.dropped;
		s->sym_past.unnamed += st.unnamed;
		s->sym_past.reloads_refused += st.reloads_refused;
		s->sym_past.deferred += st.deferred;
	}
	symbolizer_free(s->usym);
	s->usym = n;
	u64map_free(&s->known);
	s->sym_born_ns = now;
	return 0;
}

/* The leaf of a row: the first kernel frame, else the first user frame. */
static void leaf_name(struct dsamp *s, const struct sample_key *k, const char **module, const char **symbol)
{
	struct stack_frames f;
	struct sym_info si;

	if (k->kstack && !samples_stack_lookup(&s->prog, k->kstack, &f) && f.nr) {
		symbolizer_kernel(s->ksym, f.ip[0], false, &si);
		*module = si.module;
		*symbol = symbolizer_label(s->ksym, &si);
		return;
	}
	if (k->ustack && !samples_stack_lookup(&s->prog, k->ustack, &f) && f.nr) {
		know_pid(s, k->pid, false);
		symbolizer_user(s->usym, (int)k->pid, f.ip[0], false, &si);
		*module = si.module;
		*symbol = symbolizer_label(s->usym, &si);
		return;
	}
	s->unknown_leaf++;
	*module = UNKNOWN;
	*symbol = UNKNOWN;
}

/* ---- /debug/pprof/profile ---- */

/* One row, its stacks (stored in from's maps) named once, with values val into the profile of slot
 * (-1: into every profile being taken). */
static void profile_add_row(struct dsamp *s, int slot, struct samples_prog *from, const struct sample_key *k,
			    const struct sample_stats *v, const long long *val)
{
	struct profile_frame fr[PROFILE_MAX_DEPTH];
	struct stack_frames f;
	char comm[TMABPF_COMM_LEN + 1];
	const struct agg_proc *p = s->agg ? u64map_get(&s->agg->procs, k->pid) : NULL;
	struct profile_labels l = { .pid = k->pid, .tid = k->tid, .comm = comm,
				    .cgroup = p ? daemon_agg_cgroup_label(p) : NULL };
	int n = 0;

	if (k->kstack && !samples_stack_lookup(from, k->kstack, &f))
		for (unsigned int i = 0; i < f.nr && n < PROFILE_MAX_DEPTH; i++, n++) {
			fr[n].addr = f.ip[i];
			symbolizer_kernel(s->ksym, f.ip[i], i > 0, &fr[n].si);
		}
	if (k->ustack && !samples_stack_lookup(from, k->ustack, &f)) {
		struct sym_info user[TMABPF_STACK_DEPTH];
		size_t nr = f.nr < TMABPF_STACK_DEPTH ? f.nr : TMABPF_STACK_DEPTH;

		know_pid(s, k->pid, false);
		/* ends at the first caller frame outside code: FP-walk junk is one [unknown] */
		nr = symbolizer_user_stack(s->usym, (int)k->pid, f.ip, nr, user);
		for (unsigned int i = 0; i < nr && n < PROFILE_MAX_DEPTH; i++, n++) {
			fr[n].addr = f.ip[i];
			fr[n].si = user[i];
		}
	}
	memcpy(comm, v->comm, TMABPF_COMM_LEN);
	comm[TMABPF_COMM_LEN] = 0;
	for (int i = 0; i < HTTP_PROFILES_AT_ONCE; i++)
		if (s->prof[i] && (slot < 0 || slot == i))
			profile_add(s->prof[i], fr, n, val, &l);
}

/* One drained row of the sampler: its samples and CPU time. */
static void profile_row(struct dsamp *s, const struct sample_key *k, const struct sample_stats *v,
			unsigned long long cnt, double w)
{
	long long val[PROFILE_MAX_TYPES] = { (long long)cnt, (long long)(cnt * w + 0.5) };

	profile_add_row(s, -1, &s->prog, k, v, val);
}

void daemon_sampling_profile_event_row(struct dsamp *s, int slot, struct samples_prog *from,
				       const struct sample_key *k, const struct sample_stats *v)
{
	long long val[PROFILE_MAX_TYPES] = { 0 };

	if (!s->nprof || (slot >= 0 && !s->prof[slot]) || (!k->kstack && !k->ustack))
		return;
	for (int e = 0; e < s->prof_nev; e++)
		val[2 + e] = (long long)(counter_scaled(&v->c[e]) + 0.5);
	profile_add_row(s, slot, from, k, v, val);
}

int daemon_sampling_profile_begin(struct dsamp *s, const struct agg *a, const struct event_list *evs, int slot,
				  unsigned long long now)
{
	const char *type[PROFILE_MAX_TYPES] = { "samples", "cpu" }, *unit[PROFILE_MAX_TYPES] = { "count", "nanoseconds" };
	struct profile *p = calloc(1, sizeof(*p));
	double wall = unix_time_s();		/* its start: this drain */
	int n = 2;

	daemon_sampling_drain(s, a, now);		/* what was sampled before the request is not in it */
	s->prof_nev = 0;
	for (int e = 0; evs && e < evs->n && n < PROFILE_MAX_TYPES; e++, s->prof_nev++) {
		type[n] = evs->ev[e].name;
		unit[n++] = profile_event_unit(evs->ev[e].name);
	}
	if (!p || profile_init(p, n, type, unit, DSAMP_PROFILE_MAX_SAMPLES))
		goto nomem;
	profile_set_period(p, "cpu", "nanoseconds", s->hz > 0 ? (long long)(1e9 / s->hz + 0.5) : 0);
	/* --top-functions 0 holds no symbols: the profile's time only */
	if ((!s->ksym && !(s->ksym = symbolizer_new())) || (!s->usym && sym_rebuild(s, now))) {
		profile_free(p);
		goto nomem;
	}
	p->time_ns = (unsigned long long)(wall * 1e9);
	p->duration_ns = now;	/* the start, until daemon_sampling_profile_end */
	s->prof[slot] = p;
	s->nprof++;
	return 0;
nomem:
	free(p);
	return -ENOMEM;
}

struct profile *daemon_sampling_profile_end(struct dsamp *s, const struct agg *a, int slot, unsigned long long now)
{
	struct profile *p = s->prof[slot];

	if (!p)
		return NULL;
	daemon_sampling_drain(s, a, now);	/* into the others being taken too */
	s->prof[slot] = NULL;
	s->nprof--;
	p->duration_ns = now - p->duration_ns;
	if (!s->slots.n && !s->nprof) {	/* --top-functions 0: nothing held between profiles */
		symbolizer_free(s->usym);
		symbolizer_free(s->ksym);
		s->usym = s->ksym = NULL;
		u64map_free(&s->known);
	}
	return p;
}

/* ---- the sampler the budget drives ---- */

static int drain_rows(struct dsamp *s, unsigned long long now);

static int set_rate(void *ctx, double hz)
{
	struct dsamp *s = ctx;
	char err[256];
	int r;

	drain_rows(s, mono_ns());	/* what was sampled at the old rate gets the old weight */
	r = samples_set_rate(&s->prog, hz, err, sizeof(err));
	if (r < 0) {
		warn_add("sampling: changing the rate to %.1f Hz: %s", hz, err);
		return r;
	}
	if (r > 0) {
		s->rate_reopens++;
		if (s->rate_reopens == 1)
			warn_add("sampling: %s", err);
	}
	s->hz = hz;
	return 0;
}

static unsigned long long run_ns(void *ctx)
{
	struct dsamp *s = ctx;
	unsigned long long ns, cnt;

	samples_run_stats(&s->prog, &ns, &cnt);
	return ns;
}

const struct daemon_sampler *daemon_sampling_sampler(struct dsamp *s)
{
	return s->attached ? &s->iface : NULL;
}

int daemon_sampling_start(struct dsamp *s, struct threads_prog *spine, bool pmu, double hz, int top_functions,
		unsigned long long expire_ns, char *err, size_t errlen)
{
	struct samples_cfg cfg = { .hz = (int)(hz + 0.5) < 1 ? 1 : (int)(hz + 0.5), .max_rows = DSAMP_MAX_ROWS,
				   .try_cycles = pmu, .on_notice = on_notice, .ctx = s };
	int r;

	memset(s, 0, sizeof(*s));
	s->iface = (struct daemon_sampler){ .set_rate = set_rate, .run_ns = run_ns, .ctx = s };
	if (daemon_slots_init(&s->slots, top_functions, expire_ns)) {
		err_set(err, errlen, "out of memory for %d function slots", top_functions);
		return -ENOMEM;
	}
	/* --top-functions 0: no function series, nothing named (no symbols held) */
	if (top_functions > 0 && (!(s->ksym = symbolizer_new()) || sym_rebuild(s, mono_ns()))) {
		err_set(err, errlen, "out of memory for the symbolizer");
		daemon_sampling_stop(s);
		return -ENOMEM;
	}
	r = samples_load(&s->prog, spine, &cfg, err, errlen);
	s->loaded = true;	/* samples_destroy cleans up a partial load */
	if (!r)
		r = samples_attach(&s->prog, err, errlen);
	if (r) {
		daemon_sampling_stop(s);
		return r;
	}
	s->attached = true;
	s->hz = s->prog.hz;
	/* a process that exits before its rows are drained keeps its names */
	if (top_functions > 0 && mmap_events_open(&s->mev, NULL, 0, err, errlen))
		warn_add("sample: %s: a process that exits before its rows are named keeps only their addresses", err);
	return 0;
}

const struct daemon_sampler *daemon_sampling_open(struct dsamp *s, struct threads_prog *spine, bool pmu, bool uprobes,
					const struct daemon_opts *d)
{
	double hz = d->sample_hz;
	int max = samples_max_rate();
	char err[512];

	memset(s, 0, sizeof(*s));
	if (hz <= 0) {
		fprintf(stderr, "tmabpf: sampling off (--no-sample): nothing is sampled; the budget (--max-overhead %.2g%%) "
			"only monitors tmabpf's BPF time%s\n", d->max_overhead_pct,
			uprobes ? " and detaches the busiest probed function when over" : "");
		return NULL;
	}
	if (max > 0 && hz > max) {
		warn_add("--sample-hz %.0f is above kernel.perf_event_max_sample_rate (%d): sampling at %d Hz", hz, max, max);
		hz = max;
	}
	if (daemon_sampling_start(s, spine, pmu, hz, d->top_functions, (unsigned long long)(d->expire_s * 1e9), err, sizeof(err))) {
		warn_add("sampling: %s; carrying on without sampling (the budget only monitors)", err);
		fprintf(stderr, "tmabpf: sampling: %s; carrying on without it\n", err);
		return NULL;
	}
	fprintf(stderr, "tmabpf: sampling: %s at %.0f Hz per CPU (%s), weighted by the period; the budget may lower it "
		"to %.3g Hz\n", s->prog.event, s->hz, s->prog.why, d->min_sample_hz);
	return daemon_sampling_sampler(s);
}

static void on_mapping(void *ctx, const struct mmap_event *ev)
{
	struct dsamp *s = ctx;

	if (s->usym)
		symbolizer_add_mapping(s->usym, ev->pid, ev->addr, ev->addr + ev->len, ev->pgoff, ev->path, ev->maj,
				       ev->min, ev->ino);
}

void daemon_sampling_poll(struct dsamp *s)
{
	if (!s->attached)
		return;
	mmap_events_drain(&s->mev, on_mapping, s);	/* before the new rows' processes are named */
	samples_poll(&s->prog);
}

/* ---- routing into series, like the spine's (daemon_agg.c) ---- */

static struct dsamp_sums *series_of(struct dsamp *s, uint32_t pid, enum dsamp_series *kind, uint64_t *id,
				    const void **owner)
{
	const struct agg *a = s->agg;
	const struct agg_proc *p = a ? u64map_get(&a->procs, pid) : NULL;

	*owner = NULL;
	if (p && p->exported) {
		struct dsamp_proc *dp = u64map_get(&s->procs, pid);

		if (dp && dp->owner != p) {	/* the pid now names another process: a new series */
			memset(&dp->s, 0, sizeof(dp->s));
			dp->owner = p;
		}
		if (!dp) {
			if (!(dp = calloc(1, sizeof(*dp))) || u64map_put(&s->procs, pid, dp)) {
				free(dp);
				goto overflow;
			}
			dp->owner = p;
		}
		*kind = DS_PROC;
		*id = pid;
		*owner = p;
		return &dp->s;
	}
	if (p && p->cg && p->cg != &a->overflow) {
		struct dsamp_sums *c = u64map_get(&s->cgroups, p->cg->id);

		if (!c && (!(c = calloc(1, sizeof(*c))) || u64map_put(&s->cgroups, p->cg->id, c))) {
			free(c);
			goto overflow;
		}
		*kind = DS_CGROUP;
		*id = p->cg->id;
		return c;
	}
overflow:
	*kind = DS_OVERFLOW;
	*id = 0;
	return &s->overflow;
}

static uint64_t str_hash(uint64_t h, const char *str)
{
	for (; *str; str++)
		h = (h ^ (unsigned char)*str) * 0x100000001b3ULL;
	return h;
}

/* Does the spine still hold the series these sums belong to? */
static bool series_alive(const struct agg *a, enum dsamp_series kind, uint64_t id, const void *owner)
{
	const struct agg_proc *p;

	switch (kind) {
	case DS_PROC:
		p = u64map_get(&a->procs, id);
		return p && p == owner;
	case DS_CGROUP:
		return u64map_get(&a->cgroups, id) != NULL;
	default:
		return true;
	}
}

static bool slot_alive(void *ctx, enum dsamp_series kind, uint64_t id, const void *owner)
{
	return series_alive(ctx, kind, id, owner);
}

/* Sums of series the spine dropped go with them; idle function slots free up. */
static void expire(struct dsamp *s, unsigned long long now)
{
	const struct agg *a = s->agg;
	uint64_t gone[64];
	size_t n;

	if (!a)
		return;
	do {	/* collect, then delete (no deletes while iterating) */
		n = 0;
		for (size_t i = 0; i < s->procs.cap && n < 64; i++) {
			struct dsamp_proc *dp = s->procs.vals[i];

			if (dp && !series_alive(a, DS_PROC, s->procs.keys[i], dp->owner))
				gone[n++] = s->procs.keys[i];
		}
		for (size_t i = 0; i < n; i++)
			free(u64map_del(&s->procs, gone[i]));
	} while (n == 64);
	do {
		n = 0;
		for (size_t i = 0; i < s->cgroups.cap && n < 64; i++)
			if (s->cgroups.vals[i] && !series_alive(a, DS_CGROUP, s->cgroups.keys[i], NULL))
				gone[n++] = s->cgroups.keys[i];
		for (size_t i = 0; i < n; i++)
			free(u64map_del(&s->cgroups, gone[i]));
	} while (n == 64);
	daemon_slots_expire(&s->slots, slot_alive, (void *)a, now);
}

/* Room for cap rows in the drain buffers (kept between intervals, shrunk after a burst). */
static int rows_reserve(struct dsamp *s, size_t cap)
{
	struct sample_key *k;
	struct sample_stats *v;

	if (cap == s->rows_cap)
		return 0;
	/* a failed realloc leaves the old block: after a shrink both are still >= cap,
	 * after a failed growth both are still >= the old cap */
	k = realloc(s->keys, cap * sizeof(*k));
	if (k)
		s->keys = k;
	v = k ? realloc(s->vals, cap * sizeof(*v)) : NULL;
	if (v)
		s->vals = v;
	if (cap < s->rows_cap || (k && v)) {
		s->rows_cap = cap;
		return 0;
	}
	return -ENOMEM;
}

/* Take every row out of the map: lookup-and-delete in batches, the rows map
 * holding only what came since the last drain. */
static int take_rows(struct dsamp *s, size_t *n)
{
	int fd = samples_rows_fd(&s->prog);
	__u64 batch;
	void *in = NULL;
	int r = 0;

	*n = 0;
	if (!s->rows_cap && rows_reserve(s, 256))
		return -ENOMEM;
	for (;;) {
		__u32 count;

		if (*n == s->rows_cap && (s->rows_cap >= DSAMP_MAX_ROWS || rows_reserve(s, 2 * s->rows_cap)))
			break;
		count = (__u32)(s->rows_cap - *n);
		r = bpf_map_lookup_and_delete_batch(fd, in, &batch, s->keys + *n, s->vals + *n, &count, NULL);
		*n += count;
		if (r && errno == ENOSPC && s->rows_cap < DSAMP_MAX_ROWS && !rows_reserve(s, 2 * s->rows_cap))
			continue;	/* a bucket holds more than the room left */
		if (r) {
			r = errno == ENOENT ? 0 : -errno;
			break;
		}
		in = &batch;
	}
	if (r && (r == -EINVAL || r == -ENOTSUP || r == -EOPNOTSUPP)) {
		/* no batch ops: key by key */
		struct sample_key k;

		r = 0;
		*n = 0;
		while (bpf_map_get_next_key(fd, NULL, &k) == 0) {
			if (*n == s->rows_cap && (s->rows_cap >= DSAMP_MAX_ROWS || rows_reserve(s, 2 * s->rows_cap)))
				break;
			if (bpf_map_lookup_and_delete_elem(fd, &k, s->vals + *n) == 0 ||
			    (bpf_map_lookup_elem(fd, &k, s->vals + *n) == 0 && bpf_map_delete_elem(fd, &k) == 0))
				s->keys[(*n)++] = k;
			else
				break;
		}
	}
	return r;
}

static bool same_cand(const struct dsamp_cand *a, const struct dsamp_cand *b)
{
	return a->hash == b->hash && a->kind == b->kind && a->id == b->id && a->owner == b->owner &&
	       a->module == b->module && a->symbol == b->symbol;
}

static int drain_rows(struct dsamp *s, unsigned long long now)
{
	struct dsamp_cand *c = NULL;
	struct u64map idx = {};		/* candidate hash -> index + 1 */
	size_t n = 0, nc = 0;
	double w = s->prog.period_ns;	/* ns of CPU one sample stands for, at the rate in force */
	int r;

	if (!s->attached)
		return 0;
	samples_poll(&s->prog);		/* new rows' processes named first */
	r = take_rows(s, &n);
	if (r)
		return r;
	if (n && !(c = calloc(n, sizeof(*c))))
		n = 0;	/* out of memory: this interval's rows are lost (counted in samples nowhere) */
	for (size_t i = 0; i < n; i++) {
		const struct sample_key *k = &s->keys[i];
		unsigned long long cnt = s->vals[i].count;
		enum dsamp_series kind;
		uint64_t id;
		const void *owner;
		struct dsamp_sums *sum = series_of(s, k->pid, &kind, &id, &owner);
		const char *module, *symbol;
		struct dsamp_cand key;
		size_t j;

		if (!cnt)
			continue;
		if (s->nprof)
			profile_row(s, k, &s->vals[i], cnt, w);
		sum->samples += cnt;
		sum->cpu_ns += cnt * w;
		s->total.samples += cnt;
		s->total.cpu_ns += cnt * w;
		if (!s->slots.n) {
			s->slots.other.samples += cnt;
			s->slots.other.cpu_ns += cnt * w;
			continue;
		}
		leaf_name(s, k, &module, &symbol);
		key = (struct dsamp_cand){ .kind = kind, .id = id, .owner = owner, .module = module, .symbol = symbol,
				     .count = cnt };
		key.hash = str_hash(str_hash(0xcbf29ce484222325ULL ^ (id * 31 + kind), module), symbol);
		/* interned names: equal strings of one symbolizer are one pointer */
		j = (size_t)(uintptr_t)u64map_get(&idx, key.hash);
		if (j && !same_cand(&c[j - 1], &key))	/* a hash collision: look through them all */
			for (j = 0; j < nc && !same_cand(&c[j], &key); j++)
				;
		else
			j = j ? j - 1 : nc;
		if (j < nc) {
			c[j].count += cnt;
			continue;
		}
		c[nc++] = key;
		u64map_put(&idx, key.hash, (void *)(uintptr_t)nc);
	}
	if (s->slots.n > 0 || nc)
		daemon_slots_route(&s->slots, c, nc, w, now);
	u64map_free(&idx);
	s->stacks_gced += samples_stacks_gc(&s->prog, &s->stacks_seen, s->keys, n, DSAMP_MAX_ROWS);
	if (s->rows_cap > 256 && n < s->rows_cap / 4)
		rows_reserve(s, s->rows_cap / 2);	/* after a burst */
	free(c);
	return 0;
}

static double rss_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long size, res = 0;

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &res) != 2)
			res = 0;
		fclose(f);
	}
	return (double)res * sysconf(_SC_PAGESIZE);
}

/* The symbolizer bounded: the exited processes forgotten once it holds DSAMP_MAX_PIDS, rebuilt when
 * the live ones alone are that many (or too many files, too old, the daemon too big). */
static void sym_bound(struct dsamp *s, unsigned long long now)
{
	size_t procs, files;

	bool full = false;

	symbolizer_size(s->usym, &procs, &files);
	if (procs > DSAMP_MAX_PIDS) {
		s->sym_kept_exited = 0;
		s->sym_forgotten += symbolizer_forget_exited(s->usym, keep_exited, s);
		symbolizer_size(s->usym, &procs, &files);
		/* live ones: forgetting again soon would not help (the exited kept go at the next time) */
		full = procs - s->sym_kept_exited > DSAMP_MAX_PIDS * 3 / 4;
	}
	if (full || files > DSAMP_MAX_FILES ||
	    now - s->sym_born_ns > DSAMP_SYM_MAX_AGE_S * 1000000000ULL ||
	    (now - s->sym_born_ns > DSAMP_RSS_MIN_AGE_S * 1000000000ULL && rss_bytes() > DSAMP_RSS_REBUILD)) {
		if (!sym_rebuild(s, now))
			s->sym_rebuilds++;
	}
}

void daemon_sampling_drain(struct dsamp *s, const struct agg *a, unsigned long long now)
{
	if (!s->attached)
		return;
	s->agg = a;
	s->drains++;
	if (s->usym)	/* a file's first read waits this long at most, the rest is left to its thread */
		symbolizer_wait_budget(s->usym, DSAMP_SYM_WAIT_NS);
	expire(s, now);
	if (drain_rows(s, now))
		warn_add("sampling: reading the sample rows failed: %s", strerror(errno));
	if (s->usym)
		sym_bound(s, now);
}

/* ---- the series, labelled as the exporters show them ---- */

static void copy_comm(char *dst, const char *comm)
{
	memcpy(dst, comm, TMABPF_COMM_LEN);
	dst[TMABPF_COMM_LEN] = 0;
}

/* Labels of a series like daemon_metrics.c's: {cgroup, comm, pid} or {cgroup, comm="[other]"};
 * false when the spine no longer shows it. */
static bool series_labels(const struct agg *a, enum dsamp_series kind, uint64_t id, const void *owner,
			  char *comm, char *pid, const char **labels)
{
	const struct agg_proc *p;
	const struct agg_cgroup *cg;

	switch (kind) {
	case DS_PROC:
		p = u64map_get(&a->procs, id);
		if (!p || p != owner || !p->exported)
			return false;
		copy_comm(comm, p->comm);
		snprintf(pid, 16, "%u", p->pid);
		labels[0] = "cgroup", labels[1] = daemon_agg_cgroup_label(p);
		labels[2] = "comm", labels[3] = comm;
		labels[4] = "pid", labels[5] = pid;
		labels[6] = NULL;
		return true;
	case DS_CGROUP:
		if (!(cg = u64map_get(&a->cgroups, id)))
			return false;
		labels[0] = "cgroup", labels[1] = cg->label;
		break;
	default:
		labels[0] = "cgroup", labels[1] = a->overflow.label;
		break;
	}
	labels[2] = "comm", labels[3] = OTHER;
	labels[4] = NULL;
	return true;
}

void daemon_sampling_for_each_series(const struct dsamp *s, const struct agg *a, dsamp_sums_fn fn, void *arg)
{
	char comm[TMABPF_COMM_LEN + 1], pid[16];
	const char *labels[8];

	for (size_t i = 0; i < s->procs.cap; i++) {
		const struct dsamp_proc *dp = s->procs.vals[i];

		if (dp && series_labels(a, DS_PROC, s->procs.keys[i], dp->owner, comm, pid, labels))
			fn(arg, labels, &dp->s);
	}
	for (size_t i = 0; i < s->cgroups.cap; i++)
		if (s->cgroups.vals[i] && series_labels(a, DS_CGROUP, s->cgroups.keys[i], NULL, comm, pid, labels))
			fn(arg, labels, s->cgroups.vals[i]);
	if (s->overflow.samples && series_labels(a, DS_OVERFLOW, 0, NULL, comm, pid, labels))
		fn(arg, labels, &s->overflow);
}

void daemon_sampling_for_each_function(const struct dsamp *s, const struct agg *a, dsamp_sums_fn fn, void *arg)
{
	char comm[TMABPF_COMM_LEN + 1], pid[16];
	const char *labels[12];

	for (int k = 0; k < s->slots.n; k++) {
		const struct dsamp_fn *f = &s->slots.fns[k];
		int n = 0;

		if (!f->used || !series_labels(a, f->kind, f->id, f->owner, comm, pid, labels))
			continue;
		while (labels[n])
			n++;
		labels[n] = "module", labels[n + 1] = f->module;
		labels[n + 2] = "symbol", labels[n + 3] = f->symbol;
		labels[n + 4] = NULL;
		fn(arg, labels, &f->s);
	}
	if (s->slots.other.samples) {
		const char *other[] = { "module", OTHER, "symbol", OTHER, NULL };

		fn(arg, other, &s->slots.other);
	}
}

void daemon_sampling_stop(struct dsamp *s)
{
	if (s->loaded)
		samples_destroy(&s->prog);
	s->loaded = s->attached = false;
	mmap_events_close(&s->mev);
	symbolizer_free(s->usym);
	symbolizer_free(s->ksym);
	s->usym = s->ksym = NULL;
	u64map_free(&s->known);
	for (size_t i = 0; i < s->procs.cap; i++)
		free(s->procs.vals[i]);
	u64map_free(&s->procs);
	for (size_t i = 0; i < s->cgroups.cap; i++)
		free(s->cgroups.vals[i]);
	u64map_free(&s->cgroups);
	daemon_slots_free(&s->slots);
	free(s->keys);
	free(s->vals);
	s->keys = NULL;
	s->vals = NULL;
	s->rows_cap = 0;
	u64map_free(&s->stacks_seen);
	for (int i = 0; i < HTTP_PROFILES_AT_ONCE; i++) {
		if (s->prof[i])
			profile_free(s->prof[i]);
		free(s->prof[i]);
		s->prof[i] = NULL;
	}
	s->nprof = 0;
}
