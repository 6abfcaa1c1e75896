// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The --itt feature for one run.  See itt_run.h. */
#include <bpf/libbpf.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bpf/uprobes.h"
#include "collect/bpf_util.h"
#include "collect/itt_run.h"
#include "collect/link_detach.h"
#include "lib/warn.h"
#include "sym/proc_environ.h"
#include "sym/procmaps.h"
#include "uprobes.skel.h"

static const char *const env_names[] = { "INTEL_LIBITTNOTIFY64", "INTEL_LIBITTNOTIFY32" };

/* Where the collector keeps its pairs, as offsets from its load address: read from our own load of
 * the file (its code runs nothing on load), for the processes that named pairs before we attached. */
static void table_offsets(struct itt_run *r)
{
	void *h = dlopen(r->path, RTLD_LAZY | RTLD_LOCAL), *pairs, *npairs;
	struct stat st;
	Dl_info info;

	if (!stat(r->path, &st)) {
		r->ino = st.st_ino;
		r->dev = st.st_dev;
	}
	if (!h)
		return;
	pairs = dlsym(h, "tmabpf_itt_pairs");
	npairs = dlsym(h, "tmabpf_itt_npairs");
	if (pairs && npairs && dladdr(pairs, &info) && info.dli_fbase) {
		r->pairs_off = (uintptr_t)pairs - (uintptr_t)info.dli_fbase;
		r->npairs_off = (uintptr_t)npairs - (uintptr_t)info.dli_fbase;
	}
	dlclose(h);
}

/* Where process pid loaded the collector (its mapping at file offset 0), or 0. */
static uint64_t loaded_at(const struct itt_run *r, int pid)
{
	struct procmaps m;
	uint64_t base = 0;
	char err[256];

	if (procmaps_load(pid, &m, err, sizeof(err)))
		return 0;
	for (size_t i = 0; i < m.nr && !base; i++)
		if (m.entries[i].inode == r->ino && m.entries[i].offset == 0 && !strcmp(m.entries[i].path, r->path))
			base = m.entries[i].start;
	procmaps_free(&m);
	return base;
}

/* Still a process with an address space (not gone, not a zombie, whose environment reads empty). */
static bool alive(int pid)
{
	struct procmaps m;
	bool yes;

	if (procmaps_load(pid, &m, NULL, 0))
		return false;
	yes = m.nr > 0;
	procmaps_free(&m);
	return yes;
}

static bool peek(int pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len;
}

/* The pairs process pid named, read from its collector (those named before we attached). */
static void read_table(struct itt_run *r, unsigned int pid)
{
	uint64_t base = r->pairs_off ? loaded_at(r, (int)pid) : 0;
	uint32_t n = 0;

	if (!base || !peek((int)pid, base + r->npairs_off, &n, sizeof(n)))
		return;
	for (uint32_t id = 0; id < n && id < ITT_TABLE_MAX; id++) {
		uint64_t p[2];
		char domain[ITT_NAME_LEN] = "", name[ITT_NAME_LEN] = "";

		if (!peek((int)pid, base + r->pairs_off + id * sizeof(p), p, sizeof(p)))
			break;
		/* a string near the end of a mapping: read shorter */
		for (size_t len = ITT_NAME_LEN - 1; len >= 16 && !peek((int)pid, p[0], domain, len); len /= 2)
			;
		for (size_t len = ITT_NAME_LEN - 1; len >= 16 && !peek((int)pid, p[1], name, len); len /= 2)
			;
		domain[ITT_NAME_LEN - 1] = name[ITT_NAME_LEN - 1] = 0;
		itt_names_add(r->set, &r->names, pid, id, domain, name);
	}
}

void itt_run_check_pids(struct itt_run *r, const int *pids, int npids)
{
	for (int i = 0; i < npids; i++) {
		char env[PATH_MAX], real[PATH_MAX];

		if (loaded_at(r, pids[i]))
			continue;
		/* named in its environment: loaded at its first ITT call */
		if (!proc_environ_get(pids[i], "INTEL_LIBITTNOTIFY64", env, sizeof(env)) && env[0]) {
			if (realpath(env, real) && !strcmp(real, r->path))
				continue;
			r->unloaded++;
			warn_add("--itt: pid %d was started with INTEL_LIBITTNOTIFY64=%s, another ITT collector, so its "
				 "ITT spans are not seen: start it with INTEL_LIBITTNOTIFY64=%s", pids[i], env, r->path);
			continue;
		}
		if (!alive(pids[i]))
			continue;	/* gone before it was read (host-wide: a short process): nothing known */
		r->unloaded++;
		warn_add("--itt: pid %d has not loaded the ITT collector, so its ITT spans are not seen: start it "
			 "with INTEL_LIBITTNOTIFY64=%s in its environment (a service: Environment= in its unit)", pids[i],
			 r->path);
	}
}

int itt_run_find(struct itt_run *r, char *err, size_t errlen)
{
	char exe[PATH_MAX], up[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *where[3], *dir;

	r->names.lib = -1;
	exe[n > 0 ? n : 0] = 0;
	dir = n > 0 ? dirname(exe) : ".";
	snprintf(up, sizeof(up), "%s/../lib/tmabpf", dir);
	where[0] = dir;	/* the build tree: build/tmabpf beside build/libtmabpf-itt.so */
	where[1] = up;	/* PREFIX/bin/tmabpf, PREFIX/lib/tmabpf */
	where[2] = ITT_SYSTEM_DIR;
	for (int i = 0; i < 3; i++) {
		char p[PATH_MAX + 64];

		snprintf(p, sizeof(p), "%s/" ITT_COLLECTOR, where[i]);
		if (!access(p, R_OK) && realpath(p, r->path)) {
			r->names.collector = r->path;
			table_offsets(r);
			return 0;
		}
	}
	err_set(err, errlen, "--itt: the ITT collector " ITT_COLLECTOR " is neither beside tmabpf (%s) nor in %s: "
		"build it (make) or install it (make install, or the tmabpf package)", dir, ITT_SYSTEM_DIR);
	return -ENOENT;
}

void itt_run_env(struct itt_run *r)
{
	for (int i = 0; i < 2; i++) {
		const char *cur = getenv(env_names[i]);
		char real[PATH_MAX];

		if (cur && *cur && (!realpath(cur, real) || strcmp(real, r->path))) {
			if (i == 0) {
				r->other_collector = true;
				warn_add("--itt: %s names another ITT collector (%s): the command loads that one and "
					 "tmabpf sees no ITT spans; unset it to see them", env_names[i], cur);
			}
			continue;
		}
		setenv(env_names[i], r->path, 1);
	}
}

/* One name record: its pair becomes a function of the set. */
static int on_name(void *ctx, void *data, size_t size)
{
	struct itt_run *r = ctx;
	struct itt_name_rec rec;

	if (size < sizeof(rec))
		return 0;
	memcpy(&rec, data, sizeof(rec));	/* the ring is mapped read-only */
	rec.domain[ITT_NAME_LEN - 1] = rec.name[ITT_NAME_LEN - 1] = 0;
	itt_names_add(r->set, &r->names, rec.pid, rec.id, rec.domain, rec.name);
	return 0;
}

static void drain(void *ctx)
{
	itt_run_poll(ctx);
}

int itt_run_attach(struct itt_run *r, struct uprobes_prog *p, struct uprobe_set *set, char *err, size_t errlen)
{
	/* the end first: a begin probed before its end would leave a frame no end pops, and every span
	 * of that thread after it nested in a call that began outside the window: none counted */
	struct bpf_program *progs[3] = { p->skel->progs.tmabpf_itt_end, p->skel->progs.tmabpf_itt_name,
					  p->skel->progs.tmabpf_itt_begin };
	static const char *const hooks[3] = { "tmabpf_itt_end", "tmabpf_itt_name", "tmabpf_itt_begin" };

	r->set = set;
	set->itt = &r->names;
	r->names.drain = drain;
	r->names.drain_ctx = r;
	r->rb = ringbuf_open(bpf_map__fd(p->skel->maps.itt_rb), on_name, r, "ITT names", err, errlen);
	if (!r->rb)
		return -ENOMEM;
	for (int i = 0; i < 3; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, o, .func_name = hooks[i]);

		r->links[i] = bpf_program__attach_uprobe_opts(progs[i], -1, r->path, 0, &o);
		if (!r->links[i]) {
			int e = -errno;

			err_set(err, errlen, "--itt: attaching to %s in %s: %s", hooks[i], r->path, strerror(-e));
			return e;
		}
	}
	if (r->host)
		itt_watch_start(&r->watch, r);
	return 0;
}

void itt_run_poll(struct itt_run *r)
{
	if (r->rb)
		ring_buffer__consume(r->rb);
	if (r->host)
		itt_watch_poll(&r->watch);
}

unsigned int itt_run_fn(struct itt_run *r, unsigned int pid, unsigned int fn)
{
	char name[32];
	int f;

	if (!(fn & ITT_FN))
		return fn;
	if ((f = itt_names_fn(&r->names, pid, fn & ~ITT_FN)) >= 0)
		return (unsigned int)f;
	read_table(r, pid);	/* named before we attached (-p, the daemon) */
	if ((f = itt_names_fn(&r->names, pid, fn & ~ITT_FN)) >= 0)
		return (unsigned int)f;
	/* its name record was lost (a full ring buffer) and its process is gone: still counted, by number */
	snprintf(name, sizeof(name), "#%u", fn & ~ITT_FN);
	r->unnamed++;
	f = itt_names_add(r->set, &r->names, pid, fn & ~ITT_FN, "?", name);
	return f >= 0 ? (unsigned int)f : fn;
}

void itt_run_rows(struct itt_run *r, struct func_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		rows[i].key.fn = itt_run_fn(r, rows[i].s.pid, rows[i].key.fn);
}

void itt_run_forget_pid(struct itt_run *r, unsigned int pid)
{
	itt_names_forget_pid(&r->names, pid);
	if (r->host)
		u64map_del(&r->watch.pids, pid);
}

void itt_run_finish(struct itt_run *r, const struct func_row *rows, size_t n)
{
	unsigned long long spans = 0;

	for (size_t i = 0; i < n; i++)
		if (r->set && (int)rows[i].key.fn < r->set->nr_funcs && r->set->funcs[rows[i].key.fn].itt)
			spans += rows[i].s.calls;
	if (r->unnamed)
		warn_add("--itt: %llu span names were lost (their ring buffer was full): shown as '?:#ID'", r->unnamed);
	if (spans || r->other_collector || r->unloaded)
		return;	/* said already */
	warn_add("--itt: no ITT events: the program's libraries do not carry ITT (oneDNN, Intel's OpenMP and "
		 "the libraries built with ittapi do: see tmabpf(8)), or it was started without "
		 "INTEL_LIBITTNOTIFY64=%s", r->path);
}

void itt_run_detach(struct itt_run *r)
{
	link_detach_all(r->links, 3);
	memset(r->links, 0, sizeof(r->links));
	itt_watch_stop(&r->watch);
}

void itt_run_free(struct itt_run *r)
{
	itt_run_detach(r);
	if (r->rb)
		ring_buffer__free(r->rb);
	r->rb = NULL;
	if (r->set)
		r->set->itt = NULL;
	itt_names_free(&r->names);
}
