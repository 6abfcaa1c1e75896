// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Addresses -> module, function, offset.  See symbolize.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include "lib/clock.h"
#include "lib/path.h"
#include "lib/warn.h"
#include "sym/elf_read.h"
#include "sym/elfsyms.h"
#include "sym/kallsyms.h"
#include "sym/perfmap.h"
#include "sym/procmaps.h"
#include "sym/symbolize.h"
#include "sym/symload.h"

#define MAX_MODULE_FDS 512	/* files kept open for processes that may exit; beyond: opened by path */
#define REREAD_NS 100000000LL	/* re-read a process' maps after a miss at most every 100 ms */

/* One mapped file, shared by every process that maps it. */
struct sym_module {
	uint64_t dev, inode;
	char *path;		/* as the first process that mapped it sees it */
	int pid;		/* that process */
	struct procmaps_entry map;	/* its mapping there (path: the above), to open it by (procmaps_open_mapped) */
	char root[32];		/* "/proc/PID/root" of that process */
	const char *name;	/* basename, interned */
	int fd;			/* opened when first noted; -1 when not (yet) */
	bool loaded;		/* symbols loaded (or tried) */
	struct elfsyms *elf;	/* the file's own symbols and segments; NULL when unreadable */
	struct elfsyms *debug;	/* its separate debug file's, NULL when none */
	bool owns;		/* elf/debug are this module's (else shared by build-id) */
	uid_t uid;		/* its file's owner, and whether every user may read it (share_tables) */
	bool public;
	char build_id[SYMLOAD_BUILD_ID_LEN];
	struct symload *job;	/* its tables being read on the symbolizer's queue (symbolizer_set_async) */
	bool job_waited;	/* ... waited for once already (a slow file costs the budget once) */
	size_t bytes;		/* elfsyms_bytes of elf and debug, when owned */
	unsigned long long last_use;	/* symbolizer.uses when last named from */
	size_t dropped_bytes;	/* its tables' bytes when they were dropped for the bound; 0: never dropped */
	long long size, mtime_ns;	/* the file's when first loaded (a reload checks it is the same) */
};

struct sym_proc {
	int pid;
	bool maps_ok;
	bool gone;		/* exited (or its pid reused): the last maps stay, never re-read */
	unsigned long long started;	/* its start time (procmaps_start_time) at the last read */
	long long reread_ns;	/* last re-read of the maps after a miss (CLOCK_MONOTONIC) */
	struct procmaps maps;
	int *mod;		/* per maps entry: module index, or -1 */
	int pm_state;		/* perf map: 0 not tried, 1 loaded, -1 none (looked for again after 100 ms) */
	long long pm_checked_ns;
	struct perfmap pm;
	struct symload *pm_job;	/* it being read on the symbolizer's queue (pm, if loaded, the one before) */
	bool pm_job_waited;	/* ... waited for once already, or not to be waited for */
	bool pm_warned;		/* a perf map refused (FIFO, another user's, too big): said once */
	uid_t uids[4];		/* real, effective, saved, fs: a perf map must be theirs (or root's) */
	size_t nr_uids;
	const char *pm_module;	/* "perf-PID.map" */
	char *exe;		/* /proc/PID/exe's path, NULL when unread */
};

struct symbolizer {
	struct sym_proc **procs;	/* sorted by pid */
	size_t nr_procs, cap_procs;
	struct sym_module **mods;
	size_t nr_mods, cap_mods;
	int open_fds;
	struct kallsyms ksyms;
	int ksyms_state;		/* 0 not tried, 1 loaded, -1 failed */
	struct elfsyms vdso;
	int vdso_state;
	char **strs;			/* intern table (open addressing) */
	size_t nr_strs, cap_strs;
	size_t limit;			/* symbolizer_set_limit; 0: none */
	unsigned long long uses;	/* lookups in files' tables: the clock of last_use */
	unsigned long long reload_since_ns;	/* the window of reloads after a drop ... */
	size_t reload_bytes;		/* ... and the bytes loaded again in it */
	struct symbolizer_stats stats;
	struct symload_queue *queue;	/* symbolizer_set_async: files read there, not in the lookups */
	unsigned long long wait_left_ns;	/* symbolizer_wait_budget: what the lookups may still wait */
};


/* ---- interning -------------------------------------------------------- */

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static int intern_grow(struct symbolizer *s)
{
	size_t cap = s->cap_strs ? s->cap_strs * 2 : 1024;
	char **v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap_strs; i++) {
		size_t j;

		if (!s->strs[i])
			continue;
		for (j = str_hash(s->strs[i]) & (cap - 1); v[j]; j = (j + 1) & (cap - 1))
			;
		v[j] = s->strs[i];
	}
	free(s->strs);
	s->strs = v;
	s->cap_strs = cap;
	return 0;
}

const char *symbolizer_intern(struct symbolizer *s, const char *str)
{
	size_t j;

	if (2 * (s->nr_strs + 1) > s->cap_strs && intern_grow(s))
		return "[out of memory]";
	for (j = str_hash(str) & (s->cap_strs - 1); s->strs[j]; j = (j + 1) & (s->cap_strs - 1))
		if (!strcmp(s->strs[j], str))
			return s->strs[j];
	s->strs[j] = strdup(str);
	if (!s->strs[j])
		return "[out of memory]";
	s->nr_strs++;
	return s->strs[j];
}

/* ---- lifetime --------------------------------------------------------- */

struct symbolizer *symbolizer_new(void)
{
	return calloc(1, sizeof(struct symbolizer));
}

/* Free the module's tables (when it owns them) and forget them (when shared). */
static void module_unload(struct sym_module *m)
{
	if (m->owns) {
		if (m->elf)
			elfsyms_free(m->elf);
		free(m->elf);
		if (m->debug)
			elfsyms_free(m->debug);
		free(m->debug);
	}
	m->elf = m->debug = NULL;
	m->bytes = 0;
	m->loaded = false;
}

static void module_free(struct sym_module *m)
{
	module_unload(m);
	if (m->fd >= 0)
		close(m->fd);
	free(m->path);
	free(m);
}

static void proc_free(struct symbolizer *s, struct sym_proc *p)
{
	if (p->pm_job)
		symload_queue_drop(s->queue, p->pm_job);
	procmaps_free(&p->maps);
	free(p->mod);
	perfmap_free(&p->pm);
	free(p->exe);
	free(p);
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nr_procs; i++)
		proc_free(s, s->procs[i]);	/* their perf maps' reads dropped */
	free(s->procs);
	if (s->queue)
		symload_queue_stop(s->queue);	/* frees the reads not taken back (modules' jobs) */
	for (size_t i = 0; i < s->nr_mods; i++)
		module_free(s->mods[i]);
	free(s->mods);
	kallsyms_free(&s->ksyms);
	if (s->vdso_state == 1)
		elfsyms_free(&s->vdso);
	for (size_t i = 0; i < s->cap_strs; i++)
		free(s->strs[i]);
	free(s->strs);
	free(s);
}

/* ---- modules ---------------------------------------------------------- */

/* The module of a file mapping, created (and its file opened) on first sight. */
static int module_get(struct symbolizer *s, int pid, const struct procmaps_entry *e)
{
	uint64_t dev = makedev(e->dev_major, e->dev_minor);
	struct sym_module *m;

	for (size_t i = 0; i < s->nr_mods; i++)
		if (s->mods[i]->dev == dev && s->mods[i]->inode == e->inode)
			return (int)i;
	if (s->nr_mods == s->cap_mods) {
		size_t cap = s->cap_mods ? s->cap_mods * 2 : 64;
		struct sym_module **v = realloc(s->mods, cap * sizeof(*v));

		if (!v)
			return -1;
		s->mods = v;
		s->cap_mods = cap;
	}
	m = calloc(1, sizeof(*m));
	if (!m || !(m->path = strdup(e->path))) {
		free(m);
		return -1;
	}
	m->dev = dev;
	m->inode = e->inode;
	m->fd = -1;
	m->owns = true;
	m->pid = pid;
	m->name = symbolizer_intern(s, path_base(e->path));
	if (pid > 0)
		snprintf(m->root, sizeof(m->root), "/proc/%d/root", pid);	/* pid 0: ours (a mapping record's file) */
	m->map = *e;
	m->map.path = m->path;
	if (s->open_fds < MAX_MODULE_FDS) {
		/* the mapped inode (never whatever its path holds now), readable after the process exits */
		m->fd = procmaps_open_mapped(pid, e);
		if (m->fd >= 0)
			s->open_fds++;
	}
	s->mods[s->nr_mods] = m;
	return (int)s->nr_mods++;
}

void symbolizer_set_limit(struct symbolizer *s, size_t bytes)
{
	s->limit = bytes;
}

int symbolizer_set_async(struct symbolizer *s, char *err, size_t errlen)
{
	if (!s->queue && !(s->queue = symload_queue_start(err, errlen)))
		return -EAGAIN;
	return 0;
}

void symbolizer_wait_budget(struct symbolizer *s, unsigned long long ns)
{
	s->wait_left_ns = ns;
}

void symbolizer_get_stats(const struct symbolizer *s, struct symbolizer_stats *out)
{
	*out = s->stats;
}

/* Drop the least recently used tables (not keep's) until the bound holds; modules sharing a
 * dropped table by build-id forget it too. */
static void keep_under_limit(struct symbolizer *s, const struct sym_module *keep)
{
	while (s->limit && s->stats.table_bytes > s->limit) {
		struct sym_module *lru = NULL;

		for (size_t i = 0; i < s->nr_mods; i++) {
			struct sym_module *o = s->mods[i];

			if (o != keep && o->owns && o->bytes && (!lru || o->last_use < lru->last_use))
				lru = o;
		}
		if (!lru)
			return;
		for (size_t i = 0; i < s->nr_mods; i++) {
			struct sym_module *o = s->mods[i];

			if (!o->owns && o->elf && o->elf == lru->elf) {
				module_unload(o);
				o->owns = true;	/* loads its own copy when met again */
				o->dropped_bytes = lru->bytes;
			}
		}
		s->stats.table_bytes -= lru->bytes;
		lru->dropped_bytes = lru->bytes;
		module_unload(lru);
		s->stats.dropped++;
	}
}

/* A module's file not read: why, once (a module is read once, whichever processes map it); why:
 * elfsyms_load's message (the limit it met, the file's owner and the option that raises it). */
static void load_warning(int r, const char *shown, const char *why)
{
	if (r == -EAGAIN)
		warn_add("symbols of %s: file changed while reading (its owner rewrote or truncated it); its frames "
			 "stay unnamed", shown);
	if (r == -E2BIG)
		warn_add("symbols of %s: %s; its frames stay unnamed", shown, why);
	if (r == -EFBIG)
		warn_add("debug file %s %s", shown, why);
}

/* Names past ELFSYMS_NAME_MAX dropped from e: said on the file's first read (a table dropped for
 * the bound and read again says nothing new). */
static void long_names_warning(const struct elfsyms *e, const char *shown, bool first)
{
	if (e && e->nr_long_names && first)
		warn_add("symbols of %s: %zu names longer than %u KiB (no real function's is) dropped", shown,
			 e->nr_long_names, ELFSYMS_NAME_MAX >> 10);
}

/* Another module's tables from the same file under another (device, inode), e.g. another container
 * layer: shared by build id. */
static bool share_tables(struct symbolizer *s, struct sym_module *m)
{
	if (!m->build_id[0])
		return false;
	for (size_t i = 0; i < s->nr_mods; i++) {
		struct sym_module *o = s->mods[i];

		/* a build id is only a claim: one user's file gets nothing of another user's (a root-only
		 * file's names, or names a user chose for root's frames), but every user's file may take
		 * those of a file of root's that every user may read */
		if (o != m && o->loaded && o->owns && o->elf && !strcmp(o->build_id, m->build_id) &&
		    (o->uid == m->uid || (o->uid == 0 && o->public))) {
			m->elf = o->elf;
			m->debug = o->debug;
			m->owns = false;
			return true;
		}
	}
	return false;
}

/* What j read becomes m's tables. */
static void module_install(struct symbolizer *s, struct sym_module *m, struct symload *j)
{
	m->loaded = true;
	if (j->refused) {
		s->stats.reloads_refused++;	/* another file there now: its frames stay module+0xOFF */
		return;
	}
	if (!j->reload) {
		m->size = j->size;
		m->mtime_ns = j->mtime_ns;
	}
	memcpy(m->build_id, j->build_id, sizeof(m->build_id));
	m->uid = j->uid;
	m->public = j->public;
	if (share_tables(s, m))
		return;
	load_warning(j->elf_err, m->path, j->elf_why);
	load_warning(j->debug_err, j->debug_path, j->debug_why);
	long_names_warning(j->elf, m->path, !j->reload);
	long_names_warning(j->debug, j->debug_path, !j->reload);
	m->elf = j->elf;
	m->debug = j->debug;
	j->elf = j->debug = NULL;
	m->bytes = (m->elf ? elfsyms_bytes(m->elf) : 0) + (m->debug ? elfsyms_bytes(m->debug) : 0);
	s->stats.table_bytes += m->bytes;
	m->last_use = ++s->uses;
	keep_under_limit(s, m);
}

/* j back from the queue when its read has ended, waiting for it what is left of the budget the first
 * time (*waited). */
static bool job_take(struct symbolizer *s, struct symload *j, bool *waited)
{
	unsigned long long t0 = mono_ns(), spent, wait = *waited ? 0 : s->wait_left_ns;
	bool read;

	*waited |= wait > 0;
	read = symload_queue_take(s->queue, j, wait);
	spent = mono_ns() - t0;
	s->wait_left_ns = spent < s->wait_left_ns ? s->wait_left_ns - spent : 0;
	return read;
}

/* m's read from the queue when it has ended (job_take). */
static bool module_take(struct symbolizer *s, struct sym_module *m)
{
	if (!job_take(s, m->job, &m->job_waited)) {
		s->stats.deferred++;
		return false;
	}
	module_install(s, m, m->job);
	symload_free(m->job);
	m->job = NULL;
	return true;
}

/* Load a module's symbols once: its own, and its debug file's when it has no .symtab; on the
 * symbolizer's queue when it has one (until read, its addresses stay module+0xOFF, counted). */
static void module_load(struct symbolizer *s, struct sym_module *m)
{
	struct symload *j;

	if (m->loaded)
		return;
	if (m->job) {
		module_take(s, m);
		return;
	}
	if (m->dropped_bytes) {
		unsigned long long now = mono_ns();

		if (now - s->reload_since_ns >= SYMBOLIZER_RELOAD_S * 1000000000ULL) {
			s->reload_since_ns = now;
			s->reload_bytes = 0;
		}
		if (s->reload_bytes + m->dropped_bytes > s->limit / 4) {
			s->stats.unnamed++;
			return;
		}
		s->reload_bytes += m->dropped_bytes;
	}
	if (m->fd < 0) {
		/* not kept open (or dropped since): the same inode again, through the mapping or its path */
		m->fd = procmaps_open_mapped(m->pid, &m->map);
		if (m->fd == -ESTALE && m->dropped_bytes)
			s->stats.reloads_refused++;
		else if (m->fd == -ESTALE)
			warn_add("symbols of %s: another file is at its path now (replaced, or a link planted), not the "
				 "one mapped: its frames stay unnamed", m->path);
		if (m->fd < 0) {
			m->loaded = true;
			return;
		}
		s->open_fds++;
	}
	j = symload_new(m->fd, m->path, m->root);	/* the fd is the read's now */
	m->fd = -1;
	s->open_fds--;
	if (!j) {
		m->loaded = true;
		return;
	}
	if ((j->reload = m->dropped_bytes != 0)) {
		memcpy(j->build_id, m->build_id, sizeof(j->build_id));
		j->size = m->size;
		j->mtime_ns = m->mtime_ns;
	}
	if (s->queue) {
		symload_queue_add(s->queue, j);
		m->job = j;
		m->job_waited = false;
		module_take(s, m);
		return;
	}
	symload_identify(j);
	memcpy(m->build_id, j->build_id, sizeof(m->build_id));
	m->uid = j->uid;
	m->public = j->public;
	if (!j->refused && share_tables(s, m)) {	/* not read again */
		m->loaded = true;
		symload_free(j);
		return;
	}
	symload_read(j);
	module_install(s, m, j);
	symload_free(j);
}

/* ---- processes -------------------------------------------------------- */

static struct sym_proc *proc_find(struct symbolizer *s, int pid, size_t *pos)
{
	size_t lo = 0, hi = s->nr_procs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->procs[mid]->pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (pos)
		*pos = lo;
	return lo < s->nr_procs && s->procs[lo]->pid == pid ? s->procs[lo] : NULL;
}

/* The process' uids, from /proc/PID/status (none when it is gone: only root's perf maps are read). */
static void proc_uids(struct sym_proc *p)
{
	char path[64], line[256];
	unsigned int u[4];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", p->pid);
	if (!(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %u %u %u %u", &u[0], &u[1], &u[2], &u[3]) == 4) {
			for (int i = 0; i < 4; i++)
				p->uids[i] = u[i];
			p->nr_uids = 4;
			break;
		}
	fclose(f);
}

/*
 * Read pid's maps and note its files.  exec: the process maps other files now
 * (replace the snapshot).  Else a re-read after a miss: the fresh maps plus the
 * earlier entries they do not overlap (code unmapped since still names what was
 * sampled while it was mapped); and never the maps of a process that has gone
 * (a zombie's maps read empty) or of a later one that reuses its pid: those
 * would unname every address of the process, the sampled ones included.
 */
static int proc_snapshot(struct symbolizer *s, struct sym_proc *p, bool exec)
{
	unsigned long long started = procmaps_start_time(p->pid);
	struct procmaps m;
	int *mod, r;

	if (!exec && p->maps_ok && (!started || started != p->started)) {
		p->gone = true;
		return -ESRCH;
	}
	if ((r = procmaps_load(p->pid, &m, NULL, 0))) {
		static bool said;	/* the cause, once: every process after it fails alike */

		if ((r == -EACCES || r == -EPERM) && !said) {
			said = true;
			warn_add("user functions cannot be named: /proc/%d/maps: %s (reading another user's maps needs "
				 "CAP_SYS_PTRACE, or root): their samples keep only their addresses", p->pid,
				 strerror(-r));
		}
		return r;
	}
	if ((!exec || !m.nr) && p->maps_ok && (!m.nr || procmaps_start_time(p->pid) != p->started)) {
		procmaps_free(&m);	/* exited (or its pid reused) while we read */
		p->gone = true;
		return -ESRCH;
	}
	if (!exec && p->maps_ok && procmaps_merge_stale(&m, &p->maps)) {
		procmaps_free(&m);
		return -ENOMEM;
	}
	mod = calloc(m.nr ? m.nr : 1, sizeof(*mod));
	if (!mod) {
		procmaps_free(&m);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m.nr; i++) {
		const struct procmaps_entry *e = &m.entries[i];

		mod[i] = (e->flags & PROCMAPS_F_FILE) && (e->flags & PROCMAPS_F_EXEC) && !(e->flags & PROCMAPS_F_JIT)
				 ? module_get(s, p->pid, e) : -1;
	}
	procmaps_free(&p->maps);
	free(p->mod);
	p->maps = m;
	p->mod = mod;
	p->maps_ok = true;
	p->started = started;
	p->gone = false;
	return 0;
}

/* The process' executable as its maps name it (" (deleted)" cut, as procmaps does). */
static void proc_exe(struct sym_proc *p)
{
	char path[64], buf[4096];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", p->pid);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if (n > 10 && !strcmp(buf + n - 10, " (deleted)"))
		buf[n - 10] = '\0';
	free(p->exe);
	p->exe = strdup(buf);
}

/* pid's entry, made without reading its maps (NULL when out of memory). */
static struct sym_proc *proc_new(struct symbolizer *s, int pid)
{
	struct sym_proc *p;
	size_t pos;
	char name[64];

	if ((p = proc_find(s, pid, &pos)))
		return p;
	if (s->nr_procs == s->cap_procs) {
		size_t cap = s->cap_procs ? s->cap_procs * 2 : 64;
		struct sym_proc **v = realloc(s->procs, cap * sizeof(*v));

		if (!v)
			return NULL;
		s->procs = v;
		s->cap_procs = cap;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	snprintf(name, sizeof(name), "perf-%d.map", pid);
	p->pm_module = symbolizer_intern(s, name);
	memmove(&s->procs[pos + 1], &s->procs[pos], (s->nr_procs - pos) * sizeof(*s->procs));
	s->procs[pos] = p;
	s->nr_procs++;
	proc_uids(p);
	proc_exe(p);
	return p;
}

void symbolizer_size(const struct symbolizer *s, size_t *procs, size_t *files)
{
	*procs = s->nr_procs;
	*files = s->nr_mods;
}

size_t symbolizer_forget_exited(struct symbolizer *s, bool (*keep)(void *ctx, int pid), void *ctx)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nr_procs; i++) {
		struct sym_proc *p = s->procs[i];

		if (kill(p->pid, 0) && errno == ESRCH && !keep(ctx, p->pid))
			proc_free(s, p);
		else
			s->procs[n++] = p;	/* in pid order still */
	}
	n = s->nr_procs - n;
	s->nr_procs -= n;
	return n;
}

static struct sym_proc *proc_add(struct symbolizer *s, int pid)
{
	struct sym_proc *p = proc_find(s, pid, NULL);

	if (p || !(p = proc_new(s, pid)))
		return p;
	proc_snapshot(s, p, true);
	return p;
}

int symbolizer_add_pid(struct symbolizer *s, int pid)
{
	struct sym_proc *p = proc_find(s, pid, NULL);

	if (p) {
		/* exec: new maps, and possibly a new perf map (a read under way is taken, then checked for
		 * changes as any) */
		perfmap_free(&p->pm);
		p->pm_state = 0;
		proc_exe(p);
		return proc_snapshot(s, p, true);
	}
	p = proc_add(s, pid);
	if (!p)
		return -ENOMEM;
	return p->maps_ok ? 0 : -ESRCH;
}

int symbolizer_add_mapping(struct symbolizer *s, int pid, uint64_t start, uint64_t end, uint64_t pgoff,
			   const char *path, unsigned int maj, unsigned int min, uint64_t ino)
{
	struct sym_proc *p = proc_find(s, pid, NULL);
	struct procmaps one = { .pid = pid, .nr = 1 };
	const struct procmaps_entry *e;
	bool ours, vdso = !strcmp(path, "[vdso]");
	struct stat st;
	int *mod;

	if (!vdso && (path[0] != '/' || path[1] == '/'))
		return 0;	/* anonymous executable memory ("//anon"): JIT code, named from perf maps */
	if (!p) {	/* its maps are read when one of its addresses is first named (-a: most never are) */
		if (!(p = proc_new(s, pid)))
			return -ENOMEM;
		p->started = procmaps_start_time(pid);
	}
	if (p->maps_ok && (e = procmaps_find(&p->maps, start)) && e->start == start && e->end == end &&
	    e->inode == ino)
		return 0;	/* read in its maps already */
	/* the file by its path when that is the recorded one (device, inode): a zombie's /proc/PID/root
	 * opens nothing; else through the process' root while it lives */
	ours = vdso || (!stat(path, &st) && st.st_dev == makedev(maj, min) && st.st_ino == ino);
	if (!ours && (p->gone || kill(pid, 0)))
		return -ESTALE;	/* another file there now (or another root), and the process gone */
	if (!(one.entries = calloc(1, sizeof(*one.entries))) || !(one.entries->path = strdup(path))) {
		free(one.entries);
		return -ENOMEM;
	}
	*one.entries = (struct procmaps_entry){ .start = start, .end = end, .offset = pgoff, .perms = "r-xp",
						.dev_major = maj, .dev_minor = min, .inode = ino,
						.path = one.entries->path,
						.flags = PROCMAPS_F_EXEC | (vdso ? PROCMAPS_F_SPECIAL | PROCMAPS_F_VDSO :
										   PROCMAPS_F_FILE) };
	if (p->maps_ok && procmaps_merge_stale(&one, &p->maps)) {
		procmaps_free(&one);
		return -ENOMEM;
	}
	if (!(mod = calloc(one.nr, sizeof(*mod)))) {
		procmaps_free(&one);
		return -ENOMEM;
	}
	for (size_t i = 0; i < one.nr; i++) {
		e = &one.entries[i];
		mod[i] = (e->flags & PROCMAPS_F_FILE) && (e->flags & PROCMAPS_F_EXEC) && !(e->flags & PROCMAPS_F_JIT)
				 ? module_get(s, ours ? 0 : pid, e) : -1;
	}
	procmaps_free(&p->maps);
	free(p->mod);
	p->maps = one;
	p->mod = mod;
	p->maps_ok = true;
	return 0;
}

/* ---- perf maps -------------------------------------------------------- */

/* What a read of p's perf map gave (r: 0, or perfmap_open's or perfmap_read's -errno with err)
 * becomes p's, in place of the one before; a refusal or a truncation said once. */
static void perfmap_install(struct sym_proc *p, int r, struct perfmap *m, const char *err)
{
	perfmap_free(&p->pm);
	p->pm_state = r ? -1 : 1;
	if (!r) {
		p->pm = *m;
		memset(m, 0, sizeof(*m));
	}
	if (r && r != -ENOENT && r != -ESRCH && !p->pm_warned) {
		warn_add("perf map of pid %d ignored: %s", p->pid, err);
		p->pm_warned = true;
	} else if (!r && p->pm.truncated && !p->pm_warned) {
		warn_add("perf map %s: only its first %u regions (or %lld MiB) are used", p->pm.path, PERFMAP_MAX_SYMS,
			 PERFMAP_MAX_BYTES >> 20);
		p->pm_warned = true;
	}
}

/* p's read from the queue when it has ended (job_take). */
static void perfmap_take(struct symbolizer *s, struct sym_proc *p)
{
	struct symload *j = p->pm_job;

	if (!job_take(s, j, &p->pm_job_waited))
		return;
	p->pm_job = NULL;
	perfmap_install(p, j->pm_err, &j->pm, j->pm_why);
	symload_free(j);
}

/* Read p's perf map: opened here (quick), read on the symbolizer's queue when it has one (the map
 * before, if any, names the lookups until then), else here. */
static void perfmap_start(struct symbolizer *s, struct sym_proc *p)
{
	struct perfmap m;
	char path[128], err[512];
	int fd;

	p->pm_checked_ns = mono_ns();
	/* the process' own /tmp first (containers), then ours (after it exited) */
	snprintf(path, sizeof(path), "/proc/%d/root/tmp/perf-%d.map", p->pid, p->pid);
	fd = perfmap_open(&m, path, p->uids, p->nr_uids, err, sizeof(err));
	if (fd == -ENOENT || fd == -ESRCH) {
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", p->pid);
		fd = perfmap_open(&m, path, p->uids, p->nr_uids, err, sizeof(err));
	}
	if (fd < 0 || !s->queue) {
		perfmap_install(p, fd < 0 ? fd : perfmap_read(&m, fd, err, sizeof(err)), &m, err);
		return;
	}
	if (!(p->pm_job = symload_new_perfmap(fd, &m))) {
		perfmap_install(p, -ENOMEM, &m, "out of memory");
		return;
	}
	symload_queue_add(s->queue, p->pm_job);
	p->pm_job_waited = p->pm_state == 1;	/* the map before names the lookups meanwhile */
	perfmap_take(s, p);
}

/* The perf map's region holding addr: the map read again when it has changed, looked for again every
 * REREAD_NS while there is none (JIT engines create the file when they first compile). */
static const struct perfmap_sym *jit_lookup(struct symbolizer *s, struct sym_proc *p, uint64_t addr)
{
	if (p->pm_job)
		perfmap_take(s, p);
	else if (p->pm_state == 0 || (p->pm_state == 1 && perfmap_changed(&p->pm)) ||
		 (p->pm_state == -1 && mono_ns() - p->pm_checked_ns > REREAD_NS))
		perfmap_start(s, p);
	if (p->pm_job && p->pm_state != 1)
		s->stats.deferred++;	/* named once read: until then, as with no perf map */
	return p->pm_state == 1 ? perfmap_lookup(&p->pm, addr) : NULL;
}

/* ---- vDSO ------------------------------------------------------------- */

/* The vDSO is the same image in every process: name it from our own copy. */
static const struct elfsyms *vdso_syms(struct symbolizer *s)
{
	struct procmaps self;
	char path[64];
	int fd;

	if (s->vdso_state)
		return s->vdso_state == 1 ? &s->vdso : NULL;
	s->vdso_state = -1;
	if (procmaps_load(0, &self, NULL, 0))
		return NULL;
	for (size_t i = 0; i < self.nr; i++) {
		const struct procmaps_entry *e = &self.entries[i];

		if (!(e->flags & PROCMAPS_F_VDSO) || strcmp(e->path, "[vdso]"))
			continue;
		fd = memfd_create("tmabpf-vdso", MFD_CLOEXEC);
		if (fd < 0)
			break;
		if (write(fd, (void *)(uintptr_t)e->start, e->end - e->start) == (ssize_t)(e->end - e->start)) {
			snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
			if (elfsyms_load(path, &s->vdso, NULL, 0) == 0)
				s->vdso_state = 1;
		}
		close(fd);
		break;
	}
	procmaps_free(&self);
	return s->vdso_state == 1 ? &s->vdso : NULL;
}

/* ---- lookups ---------------------------------------------------------- */

static void set_unknown(struct sym_info *out, const char *module, uint64_t off, enum sym_kind kind)
{
	out->module = module;
	out->name = NULL;
	out->offset = off;
	out->kind = kind;
	out->unmapped = false;
	out->code = kind != SYM_USER;
}

static bool elf_name(struct symbolizer *s, const struct elfsyms *syms, const struct elfsyms *debug, uint64_t vaddr,
		     uint64_t at, struct sym_info *out)
{
	/* the file's PLT stubs first: its debug file has no .rela.plt, and its _init (size 0) covers them */
	const struct elfsym *e = syms ? elfsyms_lookup_plt(syms, vaddr) : NULL;

	if (!e && debug)
		e = elfsyms_lookup(debug, vaddr);

	if (!e && syms)
		e = elfsyms_lookup(syms, vaddr);
	if (!e)
		return false;
	out->name = symbolizer_intern(s, elfsyms_display_name(e));
	out->offset = at - e->addr;
	return true;
}

static void file_lookup(struct symbolizer *s, struct sym_module *m, const struct procmaps_entry *e, uint64_t addr,
			uint64_t look, struct sym_info *out)
{
	uint64_t off = procmaps_file_offset(e, addr), vaddr, vlook;

	set_unknown(out, m->name, off, SYM_USER);
	module_load(s, m);
	m->last_use = ++s->uses;
	for (size_t i = 0; !m->owns && m->elf && i < s->nr_mods; i++)	/* the table's owner is in use too */
		if (s->mods[i]->owns && s->mods[i]->elf == m->elf)
			s->mods[i]->last_use = s->uses;
	if (m->build_id[0])
		out->map.build_id = symbolizer_intern(s, m->build_id);
	if (!m->elf || elfsyms_offset_to_vaddr(m->elf, procmaps_file_offset(e, look), &vlook))
		return;
	vaddr = vlook + (addr - look);
	elf_name(s, m->elf, m->debug, vlook, vaddr, out);
}

static const char *anon_module(struct symbolizer *s, const struct procmaps_entry *e)
{
	if (e->path[0] == '[')
		return symbolizer_intern(s, e->path);
	if (e->path[0])
		return symbolizer_intern(s, path_base(e->path));	/* memfd: and the like */
	return symbolizer_intern(s, "[anon]");
}

/* Below vm.mmap_min_addr's default (64 KiB) or above the largest user address space (57-bit
 * virtual addresses): nothing is ever mapped there, so no re-read of the maps can name it. */
static bool user_addr_possible(uint64_t addr)
{
	return addr >= 0x10000 && addr < (1ULL << 56);
}

/* One module per anonymous executable mapping: "[jit] 0xSTART-0xEND r-x 12 MB" ("[jit memfd:NAME] ..."
 * for a memfd double mapping). */
static const char *jit_module(struct symbolizer *s, const struct procmaps_entry *e)
{
	double mb = (e->end - e->start) / 1048576.0;
	char buf[256], size[32];

	if (mb >= 1)
		snprintf(size, sizeof(size), "%.0f MB", mb);
	else
		snprintf(size, sizeof(size), "%llu KB", (unsigned long long)(e->end - e->start) / 1024);
	snprintf(buf, sizeof(buf), "[jit%s%s] 0x%llx-0x%llx %.3s %s", e->path[0] ? " " : "",
		 e->path[0] == '/' ? e->path + 1 : e->path, (unsigned long long)e->start, (unsigned long long)e->end,
		 e->perms, size);
	return symbolizer_intern(s, buf);
}

/* The mapping at addr in our copy of pid's maps. A sampled leaf (not a caller) ran there, so it was
 * executable then: where the copy says otherwise it predates the change (a JIT writes its code,
 * then makes it executable) and is no answer. A caller frame may be junk from a frame-pointer walk
 * through code without frame pointers, so data memory is a fair name for it. */
static const struct procmaps_entry *code_entry(const struct sym_proc *p, uint64_t addr, bool caller)
{
	const struct procmaps_entry *e = procmaps_find(&p->maps, addr);

	return e && !caller && !(e->flags & PROCMAPS_F_EXEC) ? NULL : e;
}

void symbolizer_user(struct symbolizer *s, int pid, uint64_t addr, bool caller, struct sym_info *out)
{
	uint64_t look = caller && addr ? addr - 1 : addr;
	struct sym_proc *p = proc_add(s, pid);
	const struct procmaps_entry *e = NULL;
	const struct perfmap_sym *j;

	set_unknown(out, symbolizer_intern(s, "[unknown]"), addr, SYM_USER);
	out->map = (struct sym_map){};
	out->unmapped = true;
	if (!p)
		return;
	if (!user_addr_possible(look)) {
		out->unmapped = false;	/* a frame-pointer walk through code without frame pointers: no retry helps */
		return;
	}
	if (p->maps_ok)
		e = code_entry(p, look, caller);
	if (!e && !p->gone && mono_ns() - p->reread_ns > REREAD_NS) {
		/* mapped after the snapshot (ld.so at start, dlopen), or made executable since (a JIT's
		 * mprotect): read the maps again while the process lives */
		p->reread_ns = mono_ns();
		if (proc_snapshot(s, p, false) == 0)
			e = code_entry(p, look, caller);
	}
	out->unmapped = !e;
	if (e)
		out->map = (struct sym_map){ .start = e->start, .end = e->end, .pgoff = e->offset,
					     .path = e->path[0] ? symbolizer_intern(s, e->path) : NULL,
					     .exe = p->exe && !strcmp(e->path, p->exe) };
	if (e && p->mod[e - p->maps.entries] >= 0) {
		file_lookup(s, s->mods[p->mod[e - p->maps.entries]], e, addr, look, out);
		out->code = true;
		return;
	}
	if (e && (e->flags & PROCMAPS_F_VDSO)) {
		const struct elfsyms *v = vdso_syms(s);

		set_unknown(out, symbolizer_intern(s, e->path), addr - e->start, SYM_USER);
		out->code = true;
		if (v)
			elf_name(s, v, NULL, look - e->start, addr - e->start, out);
		return;
	}
	/* anonymous executable memory, or memory unmapped since: JIT code */
	if ((j = jit_lookup(s, p, look))) {
		out->unmapped = false;
		out->module = p->pm_module;
		out->name = symbolizer_intern(s, j->name);
		out->offset = addr - j->start;
		out->kind = SYM_JIT;
		out->code = true;
		return;
	}
	if (e && (e->flags & PROCMAPS_F_JIT)) {
		set_unknown(out, jit_module(s, e), addr - e->start, SYM_JIT_ANON);
		out->unmapped = true;	/* not in the perf map (yet): worth naming again later */
	} else if (e) {
		set_unknown(out, anon_module(s, e), addr - e->start, SYM_USER);
		out->code = e->flags & PROCMAPS_F_EXEC;
	} else {
		out->unmapped = true;
	}
}

size_t symbolizer_user_stack(struct symbolizer *s, int pid, const unsigned long long *ip, size_t n, struct sym_info *out)
{
	for (size_t i = 0; i < n; i++) {
		symbolizer_user(s, pid, ip[i], i > 0, &out[i]);
		if (i && !out[i].code) {
			bool retry = out[i].unmapped;

			set_unknown(&out[i], symbolizer_intern(s, "[unknown]"), 0, SYM_USER);
			out[i].map = (struct sym_map){};
			out[i].unmapped = retry;	/* in no mapping yet: maybe mapped since, named again later */
			return i + 1;
		}
	}
	return n;
}

bool symbolizer_pid_maps(struct symbolizer *s, int pid, const char *prefix)
{
	struct sym_proc *p = proc_find(s, pid, NULL);

	for (size_t i = 0; p && i < p->maps.nr; i++)
		if (p->mod[i] >= 0 && !strncmp(s->mods[p->mod[i]]->name, prefix, strlen(prefix)))
			return true;
	return false;
}

void symbolizer_kernel(struct symbolizer *s, uint64_t addr, bool caller, struct sym_info *out)
{
	uint64_t look = caller && addr ? addr - 1 : addr, off;
	const struct ksym *k;
	char err[256];

	set_unknown(out, symbolizer_intern(s, "[kernel.kallsyms]"), addr, SYM_KERNEL);
	out->map = (struct sym_map){};
	if (!s->ksyms_state) {
		s->ksyms_state = kallsyms_load(&s->ksyms, NULL, err, sizeof(err)) == 0 ? 1 : -1;
		if (s->ksyms_state < 0)
			warn_add("kernel frames not named: %s", err);
	}
	if (s->ksyms_state < 0 || !(k = kallsyms_lookup(&s->ksyms, look, &off)))
		return;
	out->module = symbolizer_intern(s, k->module);
	out->name = symbolizer_intern(s, k->name);
	out->offset = off + (addr - look);
}

const char *symbolizer_label(struct symbolizer *s, const struct sym_info *si)
{
	char buf[512];

	if (si->name)
		return si->name;
	if (si->kind == SYM_JIT_ANON)
		return si->module;
	if (!strcmp(si->module, "[unknown]"))
		return si->module;
	snprintf(buf, sizeof(buf), "%s+0x%llx", si->module, (unsigned long long)si->offset);
	return symbolizer_intern(s, buf);
}

const char *symbolizer_fold_label(struct symbolizer *s, const struct sym_info *si)
{
	if (si->name)
		return si->name;
	if (si->kind == SYM_JIT_ANON)
		return si->module;
	return symbolizer_intern(s, "[unknown]");
}
