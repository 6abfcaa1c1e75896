/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What to profile: pids, tids, a launched command; knowing when they are gone. */
#ifndef TMABPF_TARGET_H
#define TMABPF_TARGET_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define TARGET_MAX_IDS 64

struct target {
	int nr_pids;
	pid_t pids[TARGET_MAX_IDS];	/* -p */
	int nr_tids;
	pid_t tids[TARGET_MAX_IDS];	/* -t */
	char **argv;			/* -- cmd args */
	pid_t child;			/* launched command, 0 if none */
	int go_fd;			/* write end: releases the child to exec */
	int exec_err_fd;		/* read end: errno of a failed exec */
	int pidfds[TARGET_MAX_IDS];	/* one per -p pid, for exit detection */
	bool child_reaped;
	int child_status;		/* wait status of the command */
};

/* The target processes whose maps are watched: -p's, and the command (exec'd once released). */
int target_watched_pids(const struct target *t, int *pids);
/* A target with nothing open (the options' defaults). */
void target_init(struct target *t);
/* Close what the target holds open (its -p pidfds); the command itself is left as it is. */
void target_free(struct target *t);
/* Parse "1,2,3" into ids. 0 or -EINVAL with err. */
int target_parse_ids(const char *s, pid_t *ids, int *n, char *err, size_t errlen);
/* Check that every -p pid and -t tid exists; open pidfds. */
int target_check(struct target *t, char *err, size_t errlen);
/* Fork the command, stopped before exec until target_release(). */
int target_spawn(struct target *t, char *err, size_t errlen);
/* Let the spawned command exec; -errno and err when exec failed. */
int target_release(struct target *t, char *err, size_t errlen);
/* True when every target is gone (no-op false for system-wide). Reaps the child. */
bool target_gone(struct target *t);
/* Exit code to return: the command's, passed through (128+signal when killed). */
int target_exit_code(struct target *t);
/* Reap the command if it ends within timeout_ms: 0, or -ETIMEDOUT (left running). */
int target_wait(struct target *t, int timeout_ms);
/* Kill and reap a command that was spawned but never released. */
void target_abort(struct target *t);
void target_describe(const struct target *t, char *buf, size_t len);

#endif
