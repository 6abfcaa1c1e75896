// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Unit tests for user/collect/mmap_events.c and user/sym/libdirs.c: an executable mapping made by
 * this process, by a thread started after the events were opened, and by a child that exits at once,
 * each arrives as a record with the file's path, (dev, inode), protection and offset (checked
 * against stat); a data-only mapping does not; past MMAP_EVENTS_MAX_RINGS rings, one event per CPU
 * and this process' records picked by pid; LD_LIBRARY_PATH entries, $ORIGIN and a directory's
 * files of a bare library name (libfoo.so: libfoo.so.1.2, not libfoobar.so).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "collect/mmap_events.h"
#include "sym/libdirs.h"

#define FILE_X "/bin/true"
#define FILE_DATA "/etc/hostname"

struct seen {
	int n, child, thread, data, exact;
	int self_pid, child_pid;
	struct stat st;
};

static void on_event(void *ctx, const struct mmap_event *ev)
{
	struct seen *s = ctx;
	char real[4096];

	if (!realpath(FILE_X, real) || strcmp(ev->path, real)) {
		if (strstr(ev->path, "hostname"))
			s->data++;
		return;
	}
	s->n++;
	if (ev->pid == s->child_pid)
		s->child++;
	if (ev->pid == s->self_pid && ev->tid != s->self_pid)
		s->thread++;
	if (ev->ino == s->st.st_ino && makedev(ev->maj, ev->min) == s->st.st_dev && (ev->prot & PROT_EXEC) &&
	    ev->pgoff == 0 && ev->len == 4096 && ev->time_ns)
		s->exact++;
}

static void map_exec(void)
{
	int fd = open(FILE_X, O_RDONLY);
	void *p = fd >= 0 ? mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) : MAP_FAILED;

	if (p != MAP_FAILED)
		munmap(p, 4096);	/* gone again at once: the record stays */
	if (fd >= 0)
		close(fd);
}

static void *thread_main(void *arg)
{
	(void)arg;
	map_exec();
	return NULL;
}

static void test_mmap_events(void)
{
	struct mmap_events m;
	struct seen s = { .self_pid = getpid() };
	char err[512];
	pthread_t t;
	int pid = getpid(), fd;

	if (geteuid() != 0) {
		skip("mmap records", "not root");
		return;
	}
	stat(FILE_X, &s.st);
	check(mmap_events_open(&m, &pid, 1, err, sizeof(err)) == 0, "mmap events open for this process (%s)", err);
	if (!mmap_events_on(&m))
		return;
	map_exec();
	pthread_create(&t, NULL, thread_main, NULL);
	pthread_join(t, NULL);
	s.child_pid = fork();
	if (s.child_pid == 0) {
		map_exec();
		_exit(0);
	}
	waitpid(s.child_pid, NULL, 0);
	fd = open(FILE_DATA, O_RDONLY);
	if (fd >= 0) {
		void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);

		if (p != MAP_FAILED)
			munmap(p, 4096);
		close(fd);
	}
	mmap_events_drain(&m, on_event, &s);
	check(s.n == 3, "3 executable mappings of %s recorded (%d)", FILE_X, s.n);
	check(s.exact == 3, "each with its inode, device, PROT_EXEC, offset 0, length and time (%d of 3)", s.exact);
	check(s.thread == 1, "one by a thread started after the open (%d)", s.thread);
	check(s.child == 1, "one by a child that exited at once (%d)", s.child);
	check(s.data == 0, "a data-only mapping is not recorded (%d)", s.data);
	check(m.lost == 0, "no record lost (%llu)", m.lost);
	mmap_events_close(&m);
}

static void *park(void *arg)
{
	pthread_barrier_wait(arg);
	return NULL;
}

/* A target with more threads x CPUs than MMAP_EVENTS_MAX_RINGS: one event per CPU, its records kept,
 * another process' dropped. */
static void test_many_threads(void)
{
	enum { N = MMAP_EVENTS_MAX_RINGS };
	static pthread_t t[N];
	pthread_barrier_t b;
	struct mmap_events m;
	struct seen s = { .self_pid = getpid() };
	char err[512];
	int pid = getpid(), other = 0;

	if (geteuid() != 0) {
		skip("mmap records past the ring bound", "not root");
		return;
	}
	stat(FILE_X, &s.st);
	pthread_barrier_init(&b, NULL, N + 1);
	for (int i = 0; i < N; i++)
		pthread_create(&t[i], NULL, park, &b);
	check(mmap_events_open(&m, &pid, 1, err, sizeof(err)) == 0 && m.nonly == 1,
	      "%d threads: one event per CPU, this process' records picked (%d rings, %s)", N + 1, m.nrings, err);
	pthread_barrier_wait(&b);
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	map_exec();
	if ((other = fork()) == 0) {
		map_exec();
		_exit(0);
	}
	s.child_pid = other;
	waitpid(other, NULL, 0);
	mmap_events_drain(&m, on_event, &s);
	check(s.n == 1 && s.child == 0, "its mapping kept, another process' not (%d, %d)", s.n, s.child);
	mmap_events_close(&m);
	pthread_barrier_destroy(&b);
}

static int files;

static void count_file(void *ctx, const char *path)
{
	(void)ctx;
	files += !!strstr(path, "/libfoo.so.1.2");
	files += 100 * !!strstr(path, "libfoobar");
}

static void test_libdirs(void)
{
	char dir[] = "/tmp/tmabpf-libdirs-XXXXXX", path[128], exe[4096], exe_dir[4096];
	struct libdirs d = { 0 };
	ssize_t n;
	int found;

	check(mkdtemp(dir) != NULL, "temporary directory");
	snprintf(path, sizeof(path), "%s/libfoo.so.1.2", dir);
	close(open(path, O_CREAT | O_WRONLY, 0644));
	snprintf(path, sizeof(path), "%s/libfoobar.so", dir);
	close(open(path, O_CREAT | O_WRONLY, 0644));
	snprintf(path, sizeof(path), "%s:relative:$ORIGIN/x:$LIB:/opt/tmabpf-none/", dir);
	setenv("LD_LIBRARY_PATH", path, 1);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	snprintf(exe_dir, sizeof(exe_dir), "%s", exe);
	*strrchr(exe_dir, '/') = 0;
	libdirs_of_command(&d, "/proc/self/exe");
	check(d.n == 3 && !strcmp(d.dirs[0], dir) && !strcmp(d.dirs[1], "/opt/tmabpf-none") &&
	      !strcmp(d.dirs[2], exe_dir),
	      "LD_LIBRARY_PATH's absolute entries (a trailing / dropped; relative, $ORIGIN and $LIB ones "
	      "left out), then the executable's directory: %zu", d.n);
	check(libdirs_add_object(&d, exe) == 0, "a directory is listed once");
	files = 0;
	found = libdirs_find(&d, 0, "libfoo.so", count_file, NULL);
	check(found == 1 && files == 1, "libfoo.so names libfoo.so.1.2, not libfoobar.so (%d, %d)", found, files);
	check(libdirs_find(&d, 1, "libfoo.so", count_file, NULL) == 0, "only the directories from 'from' on");
	libdirs_free(&d);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	check(system(path) == 0, "cleanup");
}

int main(void)
{
	test_mmap_events();
	test_many_threads();
	test_libdirs();
	return check_exit();
}
