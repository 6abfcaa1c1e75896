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

	fd_path(j, path, sizeof(path));
	if (j->reload && !same_file(j, path)) {
		j->refused = true;
		return;
	}
	if (!j->reload && fstat(j->fd, &st) == 0) {
		j->size = st.st_size;
		j->mtime_ns = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	}
	if (debugfile_build_id(path, j->build_id, sizeof(j->build_id)))
		j->build_id[0] = '\0';
}

static struct elfsyms *tables_read(const char *path, int *err)
{
	struct elfsyms *e = calloc(1, sizeof(*e));

	*err = e ? elfsyms_load(path, e, NULL, 0) : -ENOMEM;
	if (!*err)
		return e;
	free(e);
	return NULL;
}

void symload_read(struct symload *j)
{
	char path[64];
	int dfd;

	if (!j->refused) {
		fd_path(j, path, sizeof(path));
		j->elf = tables_read(path, &j->elf_err);
		if (j->elf && !j->elf->has_symtab &&
		    (dfd = debugfile_find(path, j->shown, j->root, j->debug_path, sizeof(j->debug_path))) >= 0) {
			char dpath[64];

			snprintf(dpath, sizeof(dpath), "/proc/self/fd/%d", dfd);
			j->debug = tables_read(dpath, &j->debug_err);
			close(dfd);
		}
	}
	close(j->fd);	/* symbols are in memory now */
	j->fd = -1;
}

/* ---- the queue: one thread, reads in the order added ---- */

struct symload_queue {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_cond_t read;		/* a read ended */
	struct symload *jobs;		/* added, not taken back: in the order added */
	bool stop;
	int refs;			/* the owner's and the thread's: the last one frees the queue */
};

static void queue_unref(struct symload_queue *q)
{
	bool last = --q->refs == 0;

	pthread_mutex_unlock(&q->lock);
	if (last) {
		pthread_cond_destroy(&q->wake);
		pthread_cond_destroy(&q->read);
		pthread_mutex_destroy(&q->lock);
		free(q);
	}
}

static void unlink_job(struct symload_queue *q, struct symload *j)
{
	for (struct symload **p = &q->jobs; *p; p = &(*p)->next)
		if (*p == j) {
			*p = j->next;
			j->next = NULL;
			return;
		}
}

static void *reader(void *arg)
{
	struct symload_queue *q = arg;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct symload *j = q->jobs;

		while (j && j->state != QUEUED)
			j = j->next;
		if (q->stop)
			break;
		if (!j) {
			pthread_cond_wait(&q->wake, &q->lock);
			continue;
		}
		j->state = READING;
		pthread_mutex_unlock(&q->lock);
		symload_identify(j);
		symload_read(j);
		pthread_mutex_lock(&q->lock);
		if (q->stop) {	/* its owner has gone: nobody takes it back */
			unlink_job(q, j);
			pthread_mutex_unlock(&q->lock);
			symload_free(j);
			pthread_mutex_lock(&q->lock);
			break;
		}
		j->state = READ;
		pthread_cond_broadcast(&q->read);
	}
	queue_unref(q);
	return NULL;
}

struct symload_queue *symload_queue_start(char *err, size_t errlen)
{
	struct symload_queue *q = calloc(1, sizeof(*q));
	pthread_condattr_t attr;
	sigset_t all, old;
	pthread_t t;
	int r;

	if (!q) {
		err_set(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->wake, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&q->read, &attr);
	pthread_condattr_destroy(&attr);
	q->refs = 2;
	/* signals (SIGINT, SIGTERM, SIGHUP) are the main thread's to take */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&t, NULL, reader, q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		err_set(err, errlen, "no thread to read symbols on: %s", strerror(r));
		pthread_cond_destroy(&q->wake);
		pthread_cond_destroy(&q->read);
		pthread_mutex_destroy(&q->lock);
		free(q);
		return NULL;
	}
	pthread_detach(t);
	return q;
}

void symload_queue_add(struct symload_queue *q, struct symload *j)
{
	struct symload **p;

	pthread_mutex_lock(&q->lock);
	j->state = QUEUED;
	j->next = NULL;
	for (p = &q->jobs; *p; p = &(*p)->next)
		;
	*p = j;
	pthread_cond_signal(&q->wake);
	pthread_mutex_unlock(&q->lock);
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
	pthread_mutex_lock(&q->lock);
	while (wait_ns && j->state != READ && pthread_cond_timedwait(&q->read, &q->lock, &until) != ETIMEDOUT)
		;
	read = j->state == READ;
	if (read)
		unlink_job(q, j);
	pthread_mutex_unlock(&q->lock);
	return read;
}

void symload_queue_stop(struct symload_queue *q)
{
	struct symload *gone = NULL, *j, *next;

	pthread_mutex_lock(&q->lock);
	q->stop = true;
	for (j = q->jobs, q->jobs = NULL; j; j = next) {
		next = j->next;
		if (j->state == READING) {	/* the thread frees it when read */
			j->next = q->jobs;
			q->jobs = j;
		} else {
			j->next = gone;
			gone = j;
		}
	}
	pthread_cond_signal(&q->wake);
	queue_unref(q);
	for (j = gone; j; j = next) {	/* big tables take a while to free: not under the lock */
		next = j->next;
		symload_free(j);
	}
}
