/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The ITT collector ABI's structures, as Intel's ittnotify.h and ittnotify_config.h lay them out:
 * what an instrumented library hands its collector (itt/tmabpf_itt.c; bench/itt_cost.c plays the
 * library).  Only their layout matters. */
#ifndef TMABPF_ITT_ABI_H
#define TMABPF_ITT_ABI_H
#include <pthread.h>

struct itt_domain {
	volatile int flags;
	const char *nameA;
	void *nameW;
	int extra1;
	void *extra2;
	struct itt_domain *next;
};

struct itt_string_handle {
	const char *strA;
	void *strW;
	int extra1;
	void *extra2;
	struct itt_string_handle *next;
};

struct itt_id {
	unsigned long long d1, d2, d3;
};

/* ittnotify_config.h's __itt_global, up to the table; __itt_api_info with and without null_func */
struct itt_api_info {
	const char *name;
	void **func_ptr;
	void *init_func;
	void *null_func;
	int group;
};

struct itt_api_info_old {
	const char *name;
	void **func_ptr;
	void *init_func;
	int group;
};

struct itt_global {
	unsigned char magic[8];
	unsigned long version_major, version_minor, version_build;
	volatile long api_initialized, mutex_initialized, atomic_counter;
	pthread_mutex_t mutex;
	void *lib;
	void *error_handler;
	const char **dll_path_ptr;
	void *api_list_ptr;
};

#endif
