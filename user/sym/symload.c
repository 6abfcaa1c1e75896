// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* A mapped file's symbol tables read, in place or on a thread of their own.  See symload.h. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "lib/warn.h"
#include "sym/debugfile.h"
#include "sym/symload.h"

enum { QUEUED, READING, READ };

struct symload *symload_new(int fd, const char *shown, const char *root)
{
	struct symload *j = calloc(1, sizeof(*j));

	if (!j || !(j->shown = strdup(shown))) {
		free(j);
		close(fd);
		return NULL;
	}
	j->fd = fd;
	snprintf(j->root, sizeof(j->root), "%s", root);
	return j;
}

struct symload *symload_new_perfmap(int fd, struct perfmap *m)
{
	struct symload *j = symload_new(fd, m->path, "");

	if (j) {
		j->perfmap = true;
		j->pm = *m;
		memset(m, 0, sizeof(*m));
	} else {
		perfmap_free(m);
	}
	return j;
}

static void tables_free(struct elfsyms *e)
{
	if (e)
		elfsyms_free(e);
	free(e);
}

void symload_free(struct symload *j)
{
	if (!j)
		return;
	if (j->fd >= 0)
		close(j->fd);
	tables_free(j->elf);
	tables_free(j->debug);
	perfmap_free(&j->pm);
	free(j->shown);
	free(j);
}

static void fd_path(const struct symload *j, char *path, size_t len)
{
	snprintf(path, len, "/proc/self/fd/%d", j->fd);
}

/* The file at path is the one first read: the same build id (which holds under overlayfs, where the
 * maps' device and inode are not stat's), or with none, the same size and modification time.  A
 * dropped table is read again by path, where another file may be now (the library replaced on disk,
 * or the pid reused). */
static bool same_file(const struct symload *j, const char *path)
{
	char now[SYMLOAD_BUILD_ID_LEN];
	struct stat st;

	if (j->build_id[0])
		return debugfile_build_id(path, now, sizeof(now)) == 0 && !strcmp(now, j->build_id);
	return stat(path, &st) == 0 && st.st_size == j->size &&
	       st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec == j->mtime_ns;
}

void symload_identify(struct symload *j)
{
	char path[64];
	struct stat st;

	if (j->perfmap)
		return;
	fd_path(j, path, sizeof(path));
	if (j->reload && !same_file(j, path)) {
		j->refused = true;
		return;
	}
	if (fstat(j->fd, &st) == 0) {
		j->uid = st.st_uid;
		j->public = st.st_mode & S_IROTH;
		if (!j->reload) {
			j->size = st.st_size;
			j->mtime_ns = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
		}
	}
	if (debugfile_build_id(path, j->build_id, sizeof(j->build_id)))
		j->build_id[0] = '\0';
}

/* The tables of the file at path; NULL with *err (-errno) and why (elfsyms_load's message without
 * the leading "PATH: ") when not read. */
static struct elfsyms *tables_read(const char *path, int *err, char *why, size_t whylen)
{
	struct elfsyms *e = calloc(1, sizeof(*e));
	size_t n = strlen(path);
	char msg[512] = "";

	*err = e ? elfsyms_load(path, e, msg, sizeof(msg)) : -ENOMEM;
	if (!*err)
		return e;
	snprintf(why, whylen, "%s", strncmp(msg, path, n) || strncmp(msg + n, ": ", 2) ? msg : msg + n + 2);
	free(e);
	return NULL;
}

void symload_read(struct symload *j)
{
	char path[64];
	int dfd;

	if (j->perfmap) {
		j->pm_err = perfmap_read(&j->pm, j->fd, j->pm_why, sizeof(j->pm_why));	/* closes it */
		j->fd = -1;
		return;
	}
	if (!j->refused) {
		fd_path(j, path, sizeof(path));
		j->elf = tables_read(path, &j->elf_err, j->elf_why, sizeof(j->elf_why));
		dfd = j->elf && !j->elf->has_symtab ?
		      debugfile_find(path, j->shown, j->root, j->debug_path, sizeof(j->debug_path)) : -ENOENT;
		if (dfd == -EFBIG) {
			j->debug_err = dfd;
			snprintf(j->debug_why, sizeof(j->debug_why), "(of %s): over %llu GiB, another user's file, with no "
				 "build id to check it by: not read whole for its CRC (the library's own symbols name "
				 "its frames)", j->shown, DEBUGFILE_CRC_MAX >> 30);
		} else if (dfd >= 0) {
			char dpath[64];

			snprintf(dpath, sizeof(dpath), "/proc/self/fd/%d", dfd);
			j->debug = tables_read(dpath, &j->debug_err, j->debug_why, sizeof(j->debug_why));
			close(dfd);
		}
	}
	close(j->fd);	/* symbols are in memory now */
	j->fd = -1;
}

/* ---- the queues: one thread for the process, reads in the order added ---- */

/* One reader for every queue, so that one file at a time is read (and held in memory while read),
 * however many symbolizers there are (the daemon's is rebuilt now and then). */
static struct {
	pthread_once_t once;
	pthread_mutex_t lock;
	pthread_cond_t wake;		/* a read added */
	pthread_cond_t read;		/* a read ended */
	struct symload *jobs;		/* added, not taken back, in the order added */
	int started;			/* 0, or the errno of pthread_create */
} R = { .once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER };

struct symload_queue {
	int unused;			/* a handle: its reads are those whose owner it is */
};

static void unlink_job(struct symload *j)
{
	for (struct symload **p = &R.jobs; *p; p = &(*p)->next)
		if (*p == j) {
			*p = j->next;
			j->next = NULL;
			return;
		}
}

static void *reader(void *arg)
{
	pthread_mutex_lock(&R.lock);
	for (;;) {
		struct symload *j = R.jobs;

		while (j && j->state != QUEUED)
			j = j->next;
		if (!j) {
			pthread_cond_wait(&R.wake, &R.lock);
			continue;
		}
		j->state = READING;
		pthread_mutex_unlock(&R.lock);
		symload_identify(j);
		symload_read(j);
		pthread_mutex_lock(&R.lock);
		if (!j->owner) {	/* its queue has stopped: nobody takes it back */
			unlink_job(j);
			pthread_mutex_unlock(&R.lock);
			symload_free(j);
			pthread_mutex_lock(&R.lock);
			continue;
		}
		j->state = READ;
		pthread_cond_broadcast(&R.read);
	}
	return NULL;
}

static void reader_start(void)
{
	pthread_condattr_t attr;
	sigset_t all, old;
	pthread_t t;

	pthread_cond_init(&R.wake, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&R.read, &attr);
	pthread_condattr_destroy(&attr);
	/* signals (SIGINT, SIGTERM, SIGHUP) are the main thread's to take */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	R.started = pthread_create(&t, NULL, reader, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!R.started)
		pthread_detach(t);
}

struct symload_queue *symload_queue_start(char *err, size_t errlen)
{
	struct symload_queue *q;

	pthread_once(&R.once, reader_start);
	if (R.started) {
		err_set(err, errlen, "no thread to read symbols on: %s", strerror(R.started));
		return NULL;
	}
	if (!(q = calloc(1, sizeof(*q))))
		err_set(err, errlen, "out of memory");
	return q;
}

void symload_queue_add(struct symload_queue *q, struct symload *j)
{
	struct symload **p;

	pthread_mutex_lock(&R.lock);
	j->state = QUEUED;
	j->owner = q;
	j->next = NULL;
	for (p = &R.jobs; *p; p = &(*p)->next)
		;
	*p = j;
	pthread_cond_signal(&R.wake);
	pthread_mutex_unlock(&R.lock);
}

bool symload_queue_take(struct symload_queue *q, struct symload *j, unsigned long long wait_ns)
{
	struct timespec until;
	unsigned long long ns;
	bool read;

	clock_gettime(CLOCK_MONOTONIC, &until);
	ns = (unsigned long long)until.tv_nsec + wait_ns;
	until.tv_sec += (time_t)(ns / 1000000000ULL);
	until.tv_nsec = (long)(ns % 1000000000ULL);
	pthread_mutex_lock(&R.lock);
	while (wait_ns && j->state != READ && pthread_cond_timedwait(&R.read, &R.lock, &until) != ETIMEDOUT)
		;
	read = j->state == READ && j->owner == q;
	if (read)
		unlink_job(j);
	pthread_mutex_unlock(&R.lock);
	return read;
}

void symload_queue_drop(struct symload_queue *q, struct symload *j)
{
	pthread_mutex_lock(&R.lock);
	if (j->state == READING) {
		j->owner = NULL;	/* the thread frees it when read */
		j = NULL;
	} else {
		unlink_job(j);
	}
	pthread_mutex_unlock(&R.lock);
	symload_free(j);
}

void symload_queue_stop(struct symload_queue *q)
{
	struct symload *gone = NULL, *j, *next, **p;

	pthread_mutex_lock(&R.lock);
	for (p = &R.jobs; (j = *p);) {
		if (j->owner != q) {
			p = &j->next;
		} else if (j->state == READING) {
			j->owner = NULL;	/* the thread frees it when read */
			p = &j->next;
		} else {
			*p = j->next;
			j->next = gone;
			gone = j;
		}
	}
	pthread_mutex_unlock(&R.lock);
	for (j = gone; j; j = next) {	/* big tables take a while to free: not under the lock */
		next = j->next;
		symload_free(j);
	}
	free(q);
}
