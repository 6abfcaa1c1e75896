/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * symload: one mapped file's symbol tables read (its own, its separate debug file's, its build id),
 * or one process' perf map (perfmap.c), either where the caller stands or on a thread of their own
 * (a symload_queue), so that a loop that must not wait (the daemon's refresh) never reads a file: a
 * user's library can take seconds to read (a big C++ library, a hostile one built to be slow), a
 * user's 60 MiB perf map half a second, again each time it changes.
 *
 * A read touches nothing but its own struct symload (the fd it was given, the tables it reads), says
 * nothing (warn.c is not thread-safe: the caller says what went wrong from elf_err/debug_err once
 * it holds the result), and holds each file to ELF_READ_MEMORY_MAX (elf_read.h) as a read in place
 * does.  One thread serves every queue of the process: one file is read at a time (and held in
 * memory while read), in the order added, however many symbolizers there are.
 */
#ifndef TMABPF_SYMLOAD_H
#define TMABPF_SYMLOAD_H
#include <stdbool.h>
#include <sys/types.h>
#include <stddef.h>
#include "sym/elfsyms.h"
#include "sym/perfmap.h"

#define SYMLOAD_BUILD_ID_LEN 129

struct symload {
	/* what to read (symload_new) */
	int fd;				/* the file mapped (the inode checked); closed once read */
	char *shown;			/* its path as mapped, for messages and its debug file's directory */
	char root[32];			/* "/proc/PID/root" of a process that maps it, or "" */
	bool reload;			/* its table was dropped: read only if the file is still the one
					 * first read (build_id, or size and mtime_ns, below) */
	/* the file: in for a reload, else what was read */
	char build_id[SYMLOAD_BUILD_ID_LEN];	/* hex NT_GNU_BUILD_ID, "" when none */
	long long size, mtime_ns;
	/* what was read (the caller takes elf and debug, setting them NULL, or symload_free frees them) */
	struct elfsyms *elf;		/* the file's own symbols; NULL when unreadable */
	struct elfsyms *debug;		/* its debug file's (when it has no .symtab), NULL when none */
	int elf_err, debug_err;		/* elfsyms_load's -errno when those are NULL (0: not tried) */
	char elf_why[512], debug_why[512];	/* and its message, the file's path left out */
	char debug_path[4096 + 512];	/* the debug file found, "" when none */
	bool refused;			/* reload: another file is there now, nothing read */
	uid_t uid;			/* the file's owner ... */
	bool public;			/* ... and whether every user may read it (S_IROTH) */
	/* or a perf map (symload_new_perfmap): read into pm (the caller takes it, zeroing it) */
	bool perfmap;
	struct perfmap pm;
	int pm_err;			/* perfmap_read's -errno, with pm_why */
	char pm_why[512];
	/* the queue's */
	struct symload *next;
	int state;
	struct symload_queue *owner;
};

/* A read of fd (owned from now on: closed by the read or by symload_free) of the file mapped at
 * shown, its debug file looked for under root; NULL when out of memory (fd closed). */
struct symload *symload_new(int fd, const char *shown, const char *root);
/* A read of the perf map whose fd (owned from now on) perfmap_open gave with *m (taken: zeroed);
 * NULL when out of memory (fd closed, *m freed). */
struct symload *symload_new_perfmap(int fd, struct perfmap *m);
void symload_free(struct symload *j);
/* Who the file is: a reload's check (refused when another file is there now), else its size and
 * modification time; then its build id (a perf map: nothing, perfmap_open did it). */
void symload_identify(struct symload *j);
/* Its tables: its own, then its debug file's when it has no .symtab (a perf map: the map); the fd
 * closed. */
void symload_read(struct symload *j);

/* Reads for the process' reading thread, which runs symload_identify and symload_read on each read
 * added, in order. */
struct symload_queue;
/* A queue (the thread started with the first): NULL with err saying why. */
struct symload_queue *symload_queue_start(char *err, size_t errlen);
/* The queue holds j until it is taken back. */
void symload_queue_add(struct symload_queue *q, struct symload *j);
/* true when j is read: it is the caller's again (to free); false while it waits or is being read
 * after waiting up to wait_ns for it. */
bool symload_queue_take(struct symload_queue *q, struct symload *j, unsigned long long wait_ns);
/* j, added to q, is no longer wanted: freed now, or when its read under way ends; never waits. */
void symload_queue_drop(struct symload_queue *q, struct symload *j);
/* Its reads not taken back are freed (the one under way when it ends); never waits for a read under
 * way.  q is gone after the call. */
void symload_queue_stop(struct symload_queue *q);

#endif
