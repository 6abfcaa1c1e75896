// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * libtmabpf-itt.so: an ITT collector (the "dynamic part" of Intel's ITT API) whose only work is to
 * call three tiny functions that tmabpf probes (--itt):
 *
 *   tmabpf_itt_name(id, domain, name)   once per (domain, task name) pair: its id, and the strings
 *   tmabpf_itt_begin(id, key)           a span of pair id begins on this thread
 *   tmabpf_itt_end(id, key)             ... and ends (key: the begin's, so that BPF matches them)
 *
 * An instrumented library (libdnnl, libiomp5: their "static part") loads the file named by
 * INTEL_LIBITTNOTIFY64 and calls its __itt_api_init with its table of function pointers, which we
 * point at ours by name.  What becomes a span:
 *   - __itt_task_begin / _fn / _overlapped ... __itt_task_end / _overlapped: "domain:task";
 *   - __itt_frame_begin_v3 ... __itt_frame_end_v3: "domain:frame";
 *   - __itt_sync_prepare ... __itt_sync_acquired (or _cancel): the wait on a sync object, named
 *     "sync:OBJTYPE" from its __itt_sync_create (OpenMP's barriers: "sync:OMP Join Barrier", ...).
 * Domains, string handles and pairs are created once and kept (fixed tables, a mutex on creation
 * only); an event takes no lock, allocates nothing and writes nothing but this thread's stack of
 * open spans.  Without tmabpf attached a span costs two calls of empty functions.
 *
 * No libbpf, nothing of tmabpf: this file is loaded into the profiled program.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "itt/itt_abi.h"

#define EXPORT __attribute__((visibility("default")))
/* a probe target: never inlined, merged or cloned, a frame push as its first instruction */
#define HOOK EXPORT __attribute__((noinline, noipa, used))

#define MAX_DOMAINS 256
#define MAX_STRINGS 8192
#define MAX_PAIRS 8192		/* (domain, name) pairs: span ids; power of 2 */
#define MAX_SYNCS 4096		/* sync objects named by __itt_sync_create; power of 2 */
#define MAX_OPEN 32		/* open spans per thread (tmabpf tracks 32 frames) */
#define NAME_POOL (256 * 1024)	/* the strings, copied */
#define SALT_FN 0x9e3779b97f4a7c15ULL		/* pair_key(): a task named by a function's address */
#define SALT_FRAME 0xc2b2ae3d27d4eb4fULL	/* ... a frame */
#define SALT_SYNC 0x165667b19e3779f9ULL		/* ... a sync object's type */

/* ---- the hooks tmabpf probes ---- */

HOOK void tmabpf_itt_name(uint32_t id, const char *domain, const char *name)
{
	__asm__ volatile("nop; nop; nop" : : "r"(id), "r"(domain), "r"(name) : "memory");
}

HOOK void tmabpf_itt_begin(uint32_t id, uintptr_t key)
{
	__asm__ volatile("nop" : : "r"(id), "r"(key) : "memory");
}

HOOK void tmabpf_itt_end(uint32_t id, uintptr_t key)
{
	__asm__ volatile("nop; nop" : : "r"(id), "r"(key) : "memory");
}

/* ---- tables, created once ---- */

static pthread_mutex_t create_lock = PTHREAD_MUTEX_INITIALIZER;
static struct itt_domain domains[MAX_DOMAINS];
static int ndomains;
static struct itt_string_handle strings[MAX_STRINGS];
static int nstrings;
static char pool[NAME_POOL];
static size_t pool_used;

/* The pairs, for tmabpf's -p pick-up of a process that named them before it attached:
 * tmabpf_itt_pairs[0 .. tmabpf_itt_npairs) by id. */
struct tmabpf_itt_pair {
	const char *domain, *name;
};
EXPORT struct tmabpf_itt_pair tmabpf_itt_pairs[MAX_PAIRS];
EXPORT volatile uint32_t tmabpf_itt_npairs;
/* spans not shown: the table of pairs was full, or a thread had MAX_OPEN open */
EXPORT volatile unsigned long tmabpf_itt_lost;

/* open addressing: key (domain index + 1) << 32 | name key, value id + 1; lock-free reads */
static volatile uint64_t pair_keys[MAX_PAIRS];
static volatile uint32_t pair_ids[MAX_PAIRS];

struct sync_obj {
	void *volatile addr;
	volatile uint32_t id1;	/* its pair's id + 1 */
};
static struct sync_obj syncs[MAX_SYNCS];

static const char *pool_copy(const char *s)
{
	size_t n = strnlen(s ? s : "", 255);
	char *p;

	if (pool_used + n + 1 > sizeof(pool))
		return "?";
	p = pool + pool_used;
	memcpy(p, s ? s : "", n);
	p[n] = 0;
	pool_used += n + 1;
	return p;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

/* The id of (domain, name key); created (and named to tmabpf) on first use.  -1: table full, or
 * not there and domain NULL (a look-up only). */
static int64_t pair_id(uint64_t key, const char *domain, const char *name)
{
	uint64_t h = mix(key);
	int64_t id = -1;

	for (uint32_t i = 0; i < MAX_PAIRS; i++) {
		uint32_t k = (h + i) & (MAX_PAIRS - 1);
		uint64_t cur = __atomic_load_n(&pair_keys[k], __ATOMIC_ACQUIRE);

		if (cur == key)
			return (int64_t)__atomic_load_n(&pair_ids[k], __ATOMIC_ACQUIRE) - 1;
		if (cur)
			continue;
		if (!domain)
			return -1;
		/* not there: create it under the lock (once per pair) */
		pthread_mutex_lock(&create_lock);
		for (uint32_t j = i; j < MAX_PAIRS; j++) {
			k = (h + j) & (MAX_PAIRS - 1);
			cur = pair_keys[k];
			if (cur == key) {
				id = (int64_t)pair_ids[k] - 1;
				break;
			}
			if (cur)
				continue;
			if (tmabpf_itt_npairs >= MAX_PAIRS - 1)
				break;
			id = tmabpf_itt_npairs;
			tmabpf_itt_pairs[id] = (struct tmabpf_itt_pair){ pool_copy(domain), pool_copy(name) };
			__atomic_store_n(&tmabpf_itt_npairs, (uint32_t)id + 1, __ATOMIC_RELEASE);
			tmabpf_itt_name((uint32_t)id, tmabpf_itt_pairs[id].domain, tmabpf_itt_pairs[id].name);
			__atomic_store_n(&pair_ids[k], (uint32_t)id + 1, __ATOMIC_RELEASE);
			__atomic_store_n(&pair_keys[k], key, __ATOMIC_RELEASE);
			break;
		}
		pthread_mutex_unlock(&create_lock);
		return id;
	}
	return -1;
}

static const char *domain_name(const struct itt_domain *d)
{
	return d && d->nameA ? d->nameA : "?";
}

/* ---- this thread's open spans ---- */

struct open_span {
	uint32_t id;
	uintptr_t key;
	unsigned long long task;	/* an overlapped task's id (d1) */
};

static __thread struct open_span open_spans[MAX_OPEN];
static __thread unsigned int nopen;	/* may pass MAX_OPEN: those spans are not shown */

static inline void span_begin(int64_t id, uintptr_t key, unsigned long long task)
{
	unsigned int d = nopen++;

	if (id < 0 || d >= MAX_OPEN) {
		if (d < MAX_OPEN)
			open_spans[d].id = UINT32_MAX;
		__atomic_fetch_add(&tmabpf_itt_lost, 1, __ATOMIC_RELAXED);
		return;
	}
	open_spans[d] = (struct open_span){ (uint32_t)id, key, task };
	tmabpf_itt_begin((uint32_t)id, key);
}

static inline void span_end(void)
{
	unsigned int d;

	if (!nopen)
		return;	/* begun before this library was loaded */
	d = --nopen;
	if (d < MAX_OPEN && open_spans[d].id != UINT32_MAX)
		tmabpf_itt_end(open_spans[d].id, open_spans[d].key);
}

/* the begin's frame: below every probed caller's, and what the end passes back */
#define SPAN_KEY() ((uintptr_t)__builtin_frame_address(0))

/* ---- the ITT API ---- */

static struct itt_domain *domain_create(const char *name)
{
	struct itt_domain *d = NULL;

	pthread_mutex_lock(&create_lock);
	for (int i = 0; i < ndomains; i++)
		if (!strcmp(domains[i].nameA, name ? name : ""))
			d = &domains[i];
	if (!d && ndomains < MAX_DOMAINS) {
		d = &domains[ndomains++];
		d->nameA = pool_copy(name);
		d->flags = 1;
	}
	pthread_mutex_unlock(&create_lock);
	return d;
}

static struct itt_string_handle *string_handle_create(const char *name)
{
	struct itt_string_handle *s = NULL;

	pthread_mutex_lock(&create_lock);
	for (int i = 0; i < nstrings; i++)
		if (!strcmp(strings[i].strA, name ? name : ""))
			s = &strings[i];
	if (!s && nstrings < MAX_STRINGS) {
		s = &strings[nstrings++];
		s->strA = pool_copy(name);
	}
	pthread_mutex_unlock(&create_lock);
	return s;
}

/* A pair's key: the domain's and the name's addresses (the instrumented library may have made
 * either itself, before it loaded us), salted by what names the task; never 0 (a free slot). */
static uint64_t pair_key(const void *domain, uint64_t name, uint64_t salt)
{
	return (mix((uintptr_t)domain ^ salt) ^ name) | 1;
}

static int64_t task_id(const struct itt_domain *d, const struct itt_string_handle *name)
{
	return pair_id(pair_key(d, (uintptr_t)name, 0), domain_name(d), name && name->strA ? name->strA : "?");
}

static void task_begin(const struct itt_domain *d, struct itt_id id, struct itt_id parent,
		       struct itt_string_handle *name)
{
	if (d && d->flags)
		span_begin(task_id(d, name), SPAN_KEY(), 0);
}

/* a function's address as the task's name: its symbol (dladdr, on the pair's first use only) */
static void task_begin_fn(const struct itt_domain *d, struct itt_id id, struct itt_id parent, void *fn)
{
	uint64_t key = pair_key(d, (uintptr_t)fn, SALT_FN);
	char buf[64];
	Dl_info info;
	int64_t pid;

	if (!d || !d->flags)
		return;
	pid = pair_id(key, NULL, NULL);	/* found: no name needed */
	if (pid < 0) {
		if (dladdr(fn, &info) && info.dli_sname)
			pid = pair_id(key, domain_name(d), info.dli_sname);
		else {
			snprintf(buf, sizeof(buf), "%p", fn);
			pid = pair_id(key, domain_name(d), buf);
		}
	}
	span_begin(pid, SPAN_KEY(), 0);
}

static void task_end(const struct itt_domain *d)
{
	if (d && d->flags)
		span_end();
}

static void task_begin_overlapped(const struct itt_domain *d, struct itt_id id, struct itt_id parent,
				  struct itt_string_handle *name)
{
	if (d && d->flags)
		span_begin(task_id(d, name), SPAN_KEY(), id.d1);
}

/* overlapped tasks need not nest: one that is not this thread's innermost is left open (its span
 * ends, unmatched, with its caller's) */
static void task_end_overlapped(const struct itt_domain *d, struct itt_id id)
{
	if (d && d->flags && nopen && nopen <= MAX_OPEN && open_spans[nopen - 1].task == id.d1)
		span_end();
}

static void frame_begin_v3(const struct itt_domain *d, struct itt_id *id)
{
	if (d && d->flags)
		span_begin(pair_id(pair_key(d, 0, SALT_FRAME), domain_name(d), "frame"), SPAN_KEY(), 0);
}

static void frame_end_v3(const struct itt_domain *d, struct itt_id *id)
{
	if (d && d->flags)
		span_end();
}

static struct sync_obj *sync_slot(void *addr, int create)
{
	uint64_t h = mix((uintptr_t)addr);

	for (uint32_t i = 0; i < MAX_SYNCS; i++) {
		struct sync_obj *s = &syncs[(h + i) & (MAX_SYNCS - 1)];
		void *cur = __atomic_load_n(&s->addr, __ATOMIC_ACQUIRE);

		if (cur == addr)
			return s;
		if (!cur)
			return create ? s : NULL;
	}
	return NULL;
}

static void sync_create(void *addr, const char *objtype, const char *objname, int attribute)
{
	struct itt_string_handle *h = string_handle_create(objtype && *objtype ? objtype : "object");
	int64_t id = pair_id(pair_key(NULL, (uintptr_t)h, SALT_SYNC), "sync", h ? h->strA : "object");
	struct sync_obj *s;

	pthread_mutex_lock(&create_lock);
	s = sync_slot(addr, 1);
	if (s && id >= 0) {
		__atomic_store_n(&s->id1, (uint32_t)id + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&s->addr, addr, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&create_lock);
}

static void sync_prepare(void *addr)
{
	struct sync_obj *s = sync_slot(addr, 0);
	uint32_t id1 = s ? __atomic_load_n(&s->id1, __ATOMIC_ACQUIRE) : 0;

	span_begin(id1 ? (int64_t)id1 - 1 : pair_id(pair_key(NULL, 0, SALT_SYNC), "sync", "object"), SPAN_KEY(), 0);
}

static void sync_acquired(void *addr)
{
	span_end();
}

static void sync_destroy(void *addr)
{
	struct sync_obj *s;

	pthread_mutex_lock(&create_lock);
	s = sync_slot(addr, 0);
	if (s)
		__atomic_store_n(&s->id1, 0, __ATOMIC_RELEASE);	/* kept: the slot's address stays */
	pthread_mutex_unlock(&create_lock);
}

static void noop_addr(void *addr)
{
}

/* ---- the collector's entry points ---- */

static const struct {
	const char *name;
	void *fn;
} api[] = {
	{ "__itt_domain_create", (void *)domain_create },
	{ "__itt_string_handle_create", (void *)string_handle_create },
	{ "__itt_task_begin", (void *)task_begin },
	{ "__itt_task_begin_fn", (void *)task_begin_fn },
	{ "__itt_task_end", (void *)task_end },
	{ "__itt_task_begin_overlapped", (void *)task_begin_overlapped },
	{ "__itt_task_end_overlapped", (void *)task_end_overlapped },
	{ "__itt_frame_begin_v3", (void *)frame_begin_v3 },
	{ "__itt_frame_end_v3", (void *)frame_end_v3 },
	{ "__itt_sync_create", (void *)sync_create },
	{ "__itt_sync_prepare", (void *)sync_prepare },
	{ "__itt_sync_acquired", (void *)sync_acquired },
	{ "__itt_sync_cancel", (void *)sync_acquired },
	{ "__itt_sync_releasing", (void *)noop_addr },
	{ "__itt_sync_destroy", (void *)sync_destroy },
};

static void *ours(const char *name)
{
	for (size_t i = 0; name && i < sizeof(api) / sizeof(api[0]); i++)
		if (!strcmp(api[i].name, name))
			return api[i].fn;
	return NULL;
}

static int starts_itt(const char *s)
{
	return s && !strncmp(s, "__itt_", 6);
}

/* Point the instrumented library's table at our functions. */
EXPORT void __itt_api_init(struct itt_global *g, int init_groups)
{
	struct itt_api_info *v;
	struct itt_api_info_old *o;

	if (!g || !g->api_list_ptr)
		return;
	v = g->api_list_ptr;
	o = g->api_list_ptr;
	/* the table's rows have had a null_func since 2011; the older form is told by its stride */
	if (starts_itt(v[0].name) && starts_itt(v[1].name)) {
		/* the others as without a collector (null_func: NULL, or the static part's own
		 * implementation): a library that calls what a collector offers (libomp's
		 * __itt_stack_caller_create) must see it absent, not a stub answering NULL */
		for (; v->name; v++)
			if (v->func_ptr)
				*v->func_ptr = ours(v->name) ? ours(v->name) : v->null_func;
	} else {
		for (; o->name; o++)
			if (ours(o->name) && o->func_ptr)
				*o->func_ptr = ours(o->name);
	}
}

EXPORT void __itt_api_fini(struct itt_global *g)
{
}

EXPORT const char *__itt_api_version(void)
{
	return "tmabpf ITT collector";
}
