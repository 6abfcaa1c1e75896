// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The daemon's sampled accounting: event estimates per thread.  See daemon_evsampled.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "daemon/daemon_evsampled.h"
#include "lib/warn.h"

int daemon_evsampled_load(struct devs *s, const struct event_list *evs, char *err, size_t errlen)
{
	struct samples_cfg cfg = { .hz = 0, .max_rows = DEVS_MAX_ROWS, .no_deltas = true };
	int r;

	memset(s, 0, sizeof(*s));
	s->evs = evs;
	s->keys = calloc(DEVS_MAX_ROWS, sizeof(*s->keys));
	s->vals = calloc(DEVS_MAX_ROWS, sizeof(*s->vals));
	if (!s->keys || !s->vals) {
		err_set(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r = samples_load(&s->rows, NULL, &cfg, err, errlen);
	s->rows_loaded = true;	/* samples_destroy cleans up a partial load */
	if (r)
		return r;
	s->ev_loaded = true;
	return evsamples_load(&s->ev, &s->rows, false, -1, err, errlen);
}

int daemon_evsampled_attach(struct devs *s, double hz, char *err, size_t errlen)
{
	int r = samples_attach(&s->rows, err, errlen);

	if (!r)
		r = evsamples_attach(&s->ev, s->evs, hz, err, errlen);
	if (r)
		return r;
	for (int e = 0; e < s->evs->n; e++)
		if (!s->ev.open[e])
			warn_add("sampled accounting: %s cannot sample: %s; it reads 0", s->evs->ev[e].name, s->ev.why[e]);
	fprintf(stderr, "tmabpf: sampled accounting: %d events at %d samples/s each per CPU (%.0f in all), each "
		"sample weighted by its period\n", s->evs->n, s->ev.freq, s->ev.hz);
	return 0;
}

void daemon_evsampled_tick(struct devs *s, unsigned long long now)
{
	if (s->ev_loaded)
		evsamples_adapt(&s->ev, now);
}

/* Every row out of the map (key by key, lookup-and-delete: a sample that lands meanwhile is in
 * the next interval, never lost). */
static size_t take_rows(struct devs *s)
{
	int fd = samples_rows_fd(&s->rows);
	struct sample_key k, next;
	size_t n = 0;
	bool first = true;
	int restarts = 0;

	while (n < DEVS_MAX_ROWS && !bpf_map_get_next_key(fd, first ? NULL : &k, &next)) {
		first = false;
		k = next;
		if (!bpf_map_lookup_and_delete_elem(fd, &k, &s->vals[n]))
			s->keys[n++] = k;
		else if (++restarts > 64)
			break;		/* a persistent error: the rest waits for the next interval */
		else
			first = true;	/* deleted meanwhile: start over (rows already taken are gone) */
	}
	return n;
}

void daemon_evsampled_drain(struct devs *s, struct agg *a)
{
	size_t n;
	char shared[256];

	if (!s->ev_loaded || !s->ev.pfds)
		return;
	samples_poll(&s->rows);
	n = take_rows(s);
	for (size_t i = 0; i < n; i++) {
		char comm[TMABPF_COMM_LEN];

		memcpy(comm, s->vals[i].comm, sizeof(comm));
		daemon_agg_thread_counts(a, s->keys[i].pid, s->keys[i].tid, comm, s->vals[i].c, s->vals[i].ev_samples);
		if (s->prof)
			daemon_sampling_profile_event_row(s->prof, -1, &s->rows, &s->keys[i], &s->vals[i]);
		for (int e = 0; e < s->evs->n; e++)
			s->samples[e] += s->vals[i].ev_samples[e];
	}
	/* overlapping profiles never let it be emptied (daemon_evsampled_profile_begin): 20 of them
	 * filled all 16384 stacks in 24 s of exec churn, and every new stack was lost */
	samples_stacks_gc(&s->rows, &s->stacks_seen, s->keys, n, DEVS_MAX_ROWS);
	if (!s->shared_said) {
		evsamples_shared(&s->ev, s->evs, shared, sizeof(shared));
		if (shared[0]) {
			warn_add("sampled accounting: more events than counters: %s share counters; their estimates are "
				 "scaled by the time each ran", shared);
			s->shared_said = true;
		}
	}
}

/* Every stored stack deleted (none of the rows left refers to one: rows with stacks are taken
 * only while a profile is, and drained before the next when none overlaps). */
static void stacks_clear(struct devs *s)
{
	int fd = samples_stacks_fd(&s->rows);
	__u64 k;

	while (!bpf_map_get_next_key(fd, NULL, &k))
		if (bpf_map_delete_elem(fd, &k))
			break;
	u64map_free(&s->stacks_seen);
}

void daemon_evsampled_profile_begin(struct devs *s, struct dsamp *prof)
{
	if (!s->ev_loaded)
		return;
	if (!s->nprof++) {
		stacks_clear(s);
		s->prof = prof;
		evsamples_set_stacks(&s->ev, true);
	}
}

void daemon_evsampled_profile_end(struct devs *s, int slot)
{
	int fd = samples_rows_fd(&s->rows);
	struct sample_key k, next;
	struct sample_stats v;
	bool first = true;

	if (!s->prof)
		return;
	if (s->nprof == 1)
		evsamples_set_stacks(&s->ev, false);
	/* read, not taken: the next drain gives their counts to the aggregation (and to the other
	 * profiles being taken) */
	while (!bpf_map_get_next_key(fd, first ? NULL : &k, &next)) {
		first = false;
		k = next;
		if (!bpf_map_lookup_elem(fd, &k, &v))
			daemon_sampling_profile_event_row(s->prof, slot, &s->rows, &k, &v);
	}
	if (!--s->nprof)
		s->prof = NULL;
}

void daemon_evsampled_run_stats(const struct devs *s, unsigned long long *ns, unsigned long long *cnt)
{
	evsamples_run_stats(&s->ev, ns, cnt);
}

void daemon_evsampled_detach(struct devs *s)
{
	if (s->ev_loaded)
		evsamples_detach(&s->ev);
	if (s->rows_loaded)
		samples_detach(&s->rows);
}

void daemon_evsampled_free(struct devs *s)
{
	if (s->ev_loaded)
		evsamples_destroy(&s->ev);
	if (s->rows_loaded)
		samples_destroy(&s->rows);
	s->ev_loaded = s->rows_loaded = false;
	free(s->keys);
	free(s->vals);
	s->keys = NULL;
	s->vals = NULL;
	u64map_free(&s->stacks_seen);
}
