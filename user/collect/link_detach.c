// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>
#include "collect/link_detach.h"

#define DETACH_THREADS 64

struct detach_job {
	struct bpf_link **links;	/* or */
	int *fds;
	int n, first, stride;
};

static void *detach_some(void *arg)
{
	struct detach_job *j = arg;

	for (int i = j->first; i < j->n; i += j->stride) {
		if (j->links)
			bpf_link__destroy(j->links[i]);
		else if (j->fds[i] >= 0)
			close(j->fds[i]);
	}
	return NULL;
}

static void detach_jobs(struct bpf_link **links, int *fds, int n)
{
	int nthreads = n < DETACH_THREADS ? n : DETACH_THREADS;
	struct detach_job jobs[DETACH_THREADS];
	pthread_t tids[DETACH_THREADS];
	bool started[DETACH_THREADS] = { false };

	if (n <= 0)
		return;
	/* job 0 runs in this thread; the others in their own */
	for (int t = 0; t < nthreads; t++) {
		jobs[t] = (struct detach_job){ .links = links, .fds = fds, .n = n, .first = t, .stride = nthreads };
		if (t > 0)
			started[t] = pthread_create(&tids[t], NULL, detach_some, &jobs[t]) == 0;
	}
	detach_some(&jobs[0]);
	for (int t = 1; t < nthreads; t++) {
		if (started[t])
			pthread_join(tids[t], NULL);
		else
			detach_some(&jobs[t]);
	}
}

void link_detach_all(struct bpf_link **links, int n)
{
	detach_jobs(links, NULL, n);
}

void link_fds_close_all(int *fds, int n)
{
	detach_jobs(NULL, fds, n);
	for (int i = 0; i < n; i++)
		fds[i] = -1;
}
