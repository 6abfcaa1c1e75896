// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib/exec_path.h"
#include "lib/kernel_file.h"
#include "lib/warn.h"
#include "run/target.h"
#include "sym/procmaps.h"

int target_watched_pids(const struct target *t, int *pids)
{
	int n = 0;

	for (int i = 0; i < t->nr_pids; i++)
		pids[n++] = t->pids[i];
	if (t->child && !t->child_reaped)
		pids[n++] = t->child;	/* exec'd: target_release waited for it */
	return n;
}

void target_init(struct target *t)
{
	*t = (struct target){ .go_fd = -1, .exec_err_fd = -1 };
	for (int i = 0; i < TARGET_MAX_IDS; i++)
		t->pidfds[i] = -1;
}

void target_free(struct target *t)
{
	for (int i = 0; i < TARGET_MAX_IDS; i++) {
		if (t->pidfds[i] >= 0)
			close(t->pidfds[i]);
		t->pidfds[i] = -1;
	}
}

int target_parse_ids(const char *s, pid_t *ids, int *n, char *err, size_t errlen)
{
	const char *p = s;

	while (*p) {
		char *end;
		long v;

		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || end == p || v <= 0 || v > 0x3fffffff || (*end && *end != ',')) {
			err_set(err, errlen, "bad pid/tid list '%s': expected positive integers separated by ','", s);
			return -EINVAL;
		}
		if (*n >= TARGET_MAX_IDS) {
			err_set(err, errlen, "too many ids in '%s' (at most %d)", s, TARGET_MAX_IDS);
			return -E2BIG;
		}
		ids[(*n)++] = (pid_t)v;
		p = *end ? end + 1 : end;
		if (*end && !*p) {
			err_set(err, errlen, "bad pid/tid list '%s': trailing ','", s);
			return -EINVAL;
		}
	}
	if (*n == 0) {
		err_set(err, errlen, "empty pid/tid list");
		return -EINVAL;
	}
	return 0;
}

static bool proc_exists(pid_t id)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", id);
	return access(path, F_OK) == 0;
}

#define PF_KTHREAD 0x00200000	/* include/linux/sched.h */

/* A zombie or a kernel thread has nothing to profile: say which, instead of an empty report. */
static int check_profilable(pid_t id, const char *what, char *err, size_t errlen)
{
	char buf[1024], state;
	unsigned long flags;
	const char *p = proc_stat_fields(id, buf, sizeof(buf));	/* NULL: gone, said by the existence check */

	/* "pid (comm) S ppid pgrp session tty tpgid flags ..." */
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", &state, &flags) != 2)
		return 0;
	if (state == 'Z' || state == 'X') {
		err_set(err, errlen, "%s %d is a zombie: it has exited (its parent has not reaped it yet), nothing "
			 "is left to profile", what, id);
		return -ESRCH;
	}
	if (flags & PF_KTHREAD) {
		err_set(err, errlen, "%s %d is a kernel thread: tmabpf profiles user processes (-a counts every "
			 "thread, kernel threads included)", what, id);
		return -EINVAL;
	}
	return 0;
}

/* The process (Tgid of /proc/ID/status) that thread id belongs to; 0 when unknown (gone). */
static pid_t thread_group(pid_t id)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", id);
	return (pid_t)kernel_file_field(path, "Tgid", 10, 0);
}

/* -p of a thread that is not its process' main thread: its process, as perf -p, said in one line
 * (a process already listed is not listed twice). */
static void pids_to_processes(struct target *t)
{
	int n = 0;

	for (int i = 0; i < t->nr_pids; i++) {
		pid_t id = t->pids[i], tg = thread_group(id);
		bool dup = false;

		if (tg > 0 && tg != id) {
			warn_add("-p %d: thread %d belongs to process %d: profiling process %d, every thread (-t %d for "
				 "that thread alone)", id, id, tg, tg, id);
			id = tg;
		}
		for (int k = 0; k < n; k++)
			dup |= t->pids[k] == id;
		if (!dup)
			t->pids[n++] = id;
	}
	t->nr_pids = n;
}

int target_check(struct target *t, char *err, size_t errlen)
{
	int r;

	pids_to_processes(t);
	for (int i = 0; i < t->nr_pids; i++) {
		if (!proc_exists(t->pids[i]) || (kill(t->pids[i], 0) == -1 && errno == ESRCH)) {
			err_set(err, errlen, "no such process: %d (check with 'ps -p %d')", t->pids[i], t->pids[i]);
			return -ESRCH;
		}
		if ((r = check_profilable(t->pids[i], "process", err, errlen)))
			return r;
		t->pidfds[i] = (int)syscall(SYS_pidfd_open, t->pids[i], 0);
		if (t->pidfds[i] < 0 && errno == ESRCH) {
			err_set(err, errlen, "no such process: %d", t->pids[i]);
			return -ESRCH;
		}
	}
	for (int i = 0; i < t->nr_tids; i++) {
		if (!proc_exists(t->tids[i])) {
			err_set(err, errlen, "no such thread: %d (list threads with 'ls /proc/PID/task')", t->tids[i]);
			return -ESRCH;
		}
		if ((r = check_profilable(t->tids[i], "thread", err, errlen)))
			return r;
	}
	return 0;
}

/* execvp's own PATH search, done early so a bad command fails before any BPF is loaded. */
static int check_executable(const char *cmd, char *err, size_t errlen)
{
	char buf[4096];

	if (strchr(cmd, '/')) {
		if (access(cmd, X_OK) == 0)
			return 0;
		err_set(err, errlen, "cannot execute '%s': %s", cmd, strerror(errno));
		return -errno;
	}
	if (exec_path_find(cmd, buf, sizeof(buf)) == 0)
		return 0;
	err_set(err, errlen, "cannot execute '%s': command not found in PATH", cmd);
	return -ENOENT;
}

int target_spawn(struct target *t, char *err, size_t errlen)
{
	int go[2], ex[2], r;

	r = check_executable(t->argv[0], err, errlen);
	if (r)
		return r;
	if (pipe2(go, O_CLOEXEC) || pipe2(ex, O_CLOEXEC)) {
		err_set(err, errlen, "pipe: %s", strerror(errno));
		return -errno;
	}
	t->child = fork();
	if (t->child < 0) {
		err_set(err, errlen, "fork: %s", strerror(errno));
		return -errno;
	}
	if (t->child == 0) {
		char c;
		int e;

		close(go[1]);
		close(ex[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		if (read(go[0], &c, 1) != 1)
			_exit(127);	/* profiler went away before releasing us */
		execvp(t->argv[0], t->argv);
		e = errno;
		if (write(ex[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	t->go_fd = go[1];
	t->exec_err_fd = ex[0];
	return 0;
}

int target_release(struct target *t, char *err, size_t errlen)
{
	int e = 0;
	ssize_t n;

	if (!t->child)
		return 0;
	if (write(t->go_fd, "g", 1) != 1) {
		err_set(err, errlen, "cannot release the command: %s", strerror(errno));
		return -errno;
	}
	close(t->go_fd);
	t->go_fd = -1;
	n = read(t->exec_err_fd, &e, sizeof(e));	/* EOF: exec succeeded (CLOEXEC) */
	close(t->exec_err_fd);
	t->exec_err_fd = -1;
	if (n == (ssize_t)sizeof(e)) {
		err_set(err, errlen, "cannot execute '%s': %s", t->argv[0], strerror(e));
		waitpid(t->child, &t->child_status, 0);
		t->child_reaped = true;
		return -e;
	}
	return 0;
}

/* A process is gone once it is a zombie.  Its pidfd says so by becoming
 * readable, without reading /proc: the stat of a process with 1000 threads
 * takes ~140 us to read, and the run loop asks 20 times a second. */
static bool pid_alive(pid_t pid, int pidfd)
{
	char path[64], buf[512], *p;
	FILE *f;

	if (pidfd >= 0) {
		struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

		return poll(&pfd, 1, 0) <= 0;	/* a failed poll says nothing: alive */
	}
	/* no pidfd (kernel < 5.3): a zombie still answers kill(); its stat says Z */
	if (kill(pid, 0) != 0 && errno != EPERM)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return !(p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
}

bool target_gone(struct target *t)
{
	bool any = false, alive = false;

	if (t->child) {
		any = true;
		if (!t->child_reaped) {
			pid_t r = waitpid(t->child, &t->child_status, WNOHANG);

			if (r == t->child)
				t->child_reaped = true;
			else
				alive = true;
		}
	}
	for (int i = 0; i < t->nr_pids; i++) {
		any = true;
		if (pid_alive(t->pids[i], t->pidfds[i]))
			alive = true;
	}
	for (int i = 0; i < t->nr_tids; i++) {
		any = true;
		if (proc_exists(t->tids[i]))
			alive = true;
	}
	return any && !alive;
}

int target_exit_code(struct target *t)
{
	if (!t->child)
		return 0;
	if (!t->child_reaped) {
		waitpid(t->child, &t->child_status, 0);
		t->child_reaped = true;
	}
	if (WIFEXITED(t->child_status))
		return WEXITSTATUS(t->child_status);
	if (WIFSIGNALED(t->child_status))
		return 128 + WTERMSIG(t->child_status);
	return 1;
}

int target_wait(struct target *t, int timeout_ms)
{
	for (int waited = 0; t->child && !t->child_reaped; waited += 10) {
		if (waitpid(t->child, &t->child_status, WNOHANG) == t->child) {
			t->child_reaped = true;
			break;
		}
		if (waited >= timeout_ms)
			return -ETIMEDOUT;
		usleep(10000);
	}
	return 0;
}

void target_abort(struct target *t)
{
	if (!t->child || t->child_reaped)
		return;
	if (t->go_fd >= 0)
		close(t->go_fd);	/* child reads EOF and exits 127 */
	t->go_fd = -1;
	waitpid(t->child, &t->child_status, 0);
	t->child_reaped = true;
}

void target_describe(const struct target *t, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	if (t->child)
		off += snprintf(buf + off, len - off, "command '%s' (pid %d)", t->argv[0], t->child);
	for (int i = 0; i < t->nr_pids && off < len; i++)
		off += snprintf(buf + off, len - off, "%spid %d", off ? ", " : "", t->pids[i]);
	for (int i = 0; i < t->nr_tids && off < len; i++)
		off += snprintf(buf + off, len - off, "%stid %d", off ? ", " : "", t->tids[i]);
	if (!off)
		snprintf(buf, len, "system-wide");
}
