// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Fold the slices in progress at stop, close the open ones; list -p threads never seen.  See target_edges.h. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collect/target_edges.h"

static void *run_once(void *arg)
{
	return arg;	/* having run on its CPU is the point */
}

int edges_switch_every_cpu(int ncpus)
{
	pthread_t *th = calloc(ncpus, sizeof(*th));
	bool *ok = calloc(ncpus, sizeof(*ok));
	int started = 0;

	if (!th || !ok) {
		free(th);
		free(ok);
		return -ENOMEM;
	}
	for (int cpu = 0; cpu < ncpus; cpu++) {
		pthread_attr_t a;
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (pthread_attr_init(&a))
			continue;
		/* an offline CPU refuses the affinity: nothing runs there to fold */
		ok[cpu] = !pthread_attr_setaffinity_np(&a, sizeof(set), &set) &&
			  !pthread_create(&th[cpu], &a, run_once, NULL);
		started += ok[cpu];
		pthread_attr_destroy(&a);
	}
	for (int cpu = 0; cpu < ncpus; cpu++)
		if (ok[cpu])
			pthread_join(th[cpu], NULL);
	free(th);
	free(ok);
	return started ? 0 : -EAGAIN;
}

int edges_close_slices(struct thread_table *tt, unsigned long long stop_ns, unsigned long long *untraced_ns)
{
	int n = 0;

	*untraced_ns = 0;
	for (size_t i = 0; i < tt->n_live; i++) {
		unsigned long long u = thread_close_slice(&tt->live[i], stop_ns);

		*untraced_ns += u;
		n += u != 0;
	}
	return n;
}

static bool known(const struct thread_stats **all, size_t n, unsigned int tid)
{
	for (size_t i = 0; i < n; i++)
		if (all[i]->tid == tid)
			return true;
	return false;
}

int edges_add_idle_threads(struct thread_table *tt, const pid_t *pids, int npids, unsigned long long t0_ns,
			   unsigned long long duration_ns)
{
	const struct thread_stats **all = NULL;
	size_t n = thread_table_all(tt, &all);
	int added = 0;

	for (int i = 0; i < npids; i++) {
		char path[64];
		struct dirent *de;
		DIR *d;

		snprintf(path, sizeof(path), "/proc/%d/task", pids[i]);
		if (!(d = opendir(path)))
			continue;
		while ((de = readdir(d))) {
			struct thread_stats s = { .pid = pids[i], .first_seen_ns = t0_ns,
						  .offcpu_blocked_ns = duration_ns, .out_blocked = 1 };
			char cpath[96];
			FILE *f;

			s.tid = (unsigned int)strtoul(de->d_name, NULL, 10);
			if (!s.tid || known(all, n, s.tid))
				continue;
			snprintf(cpath, sizeof(cpath), "/proc/%d/task/%u/comm", pids[i], s.tid);
			if ((f = fopen(cpath, "r"))) {
				if (fgets(s.comm, sizeof(s.comm), f))
					s.comm[strcspn(s.comm, "\n")] = 0;
				fclose(f);
			}
			added += thread_table_add_exited(tt, &s) == 0;
		}
		closedir(d);
	}
	free(all);
	return added;
}
