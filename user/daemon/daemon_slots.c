// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The sampler's function slots: routing, eviction, memory of the evicted.  See daemon_slots.h. */
#include <stdlib.h>
#include <string.h>
#include "daemon/daemon_slots.h"

int daemon_slots_init(struct dsamp_slots *s, int n, unsigned long long expire_ns)
{
	memset(s, 0, sizeof(*s));
	s->n = n;
	s->expire_ns = expire_ns;
	if (n > 0 && !(s->fns = calloc(n, sizeof(*s->fns))))
		return -1;
	return 0;
}

static int cand_cmp(const void *x, const void *y)
{
	const struct dsamp_cand *a = x, *b = y;

	return a->count < b->count ? 1 : a->count > b->count ? -1 : 0;
}

static bool fn_is(const struct dsamp_fn *f, const struct dsamp_cand *c)
{
	return f->used && f->hash == c->hash && f->kind == c->kind && f->id == c->id && f->owner == c->owner &&
	       !strcmp(f->symbol, c->symbol) && !strcmp(f->module, c->module);
}

static void fn_free(struct dsamp_fn *f)
{
	free(f->module);
	free(f->symbol);
	memset(f, 0, sizeof(*f));
}

/* The coldest slot, a candidate for eviction: one not sampled this interval. */
static struct dsamp_fn *coldest(struct dsamp_slots *s, unsigned long long now)
{
	struct dsamp_fn *min = NULL;

	for (int k = 0; k < s->n; k++)
		if (s->fns[k].used && s->fns[k].active_ns != now && (!min || s->fns[k].score < min->score))
			min = &s->fns[k];
	return min;
}

/* Take slot for candidate c: its sums where it was evicted before, else from 0. */
static bool take_slot(struct dsamp_slots *s, struct dsamp_fn *slot, const struct dsamp_cand *c)
{
	char *m, *sy;

	if (slot->used) {	/* evicted: remembered, the oldest remembered goes */
		if (!s->past && !(s->past = calloc(DSAMP_PAST, sizeof(*s->past)))) {
			fn_free(slot);
		} else {
			fn_free(&s->past[s->past_next]);
			s->past[s->past_next] = *slot;
			s->past_next = (s->past_next + 1) % DSAMP_PAST;
			memset(slot, 0, sizeof(*slot));
		}
	}
	for (size_t i = 0; s->past && i < DSAMP_PAST; i++)
		if (fn_is(&s->past[i], c)) {
			*slot = s->past[i];
			memset(&s->past[i], 0, sizeof(s->past[i]));
			return true;
		}
	m = strdup(c->module);
	sy = strdup(c->symbol);
	if (!m || !sy) {
		free(m);
		free(sy);
		return false;
	}
	*slot = (struct dsamp_fn){ .used = true, .kind = c->kind, .id = c->id, .owner = c->owner, .hash = c->hash,
				   .module = m, .symbol = sy };
	return true;
}

/* Slots (a few dozen) are searched linearly; heaviest candidates first take
 * free slots, then those of functions sampled less than half as often. */
void daemon_slots_route(struct dsamp_slots *s, struct dsamp_cand *c, size_t n, double w, unsigned long long now)
{
	for (int k = 0; k < s->n; k++)
		s->fns[k].score *= DSAMP_DECAY;
	if (n)	/* qsort(NULL, 0) is undefined: a refresh with no sampled function */
		qsort(c, n, sizeof(*c), cand_cmp);
	for (size_t i = 0; i < n; i++) {
		struct dsamp_fn *slot = NULL, *free_slot = NULL;

		for (int k = 0; k < s->n && !slot; k++) {
			if (fn_is(&s->fns[k], &c[i]))
				slot = &s->fns[k];
			else if (!s->fns[k].used && !free_slot)
				free_slot = &s->fns[k];
		}
		if (!slot && !free_slot && c[i].count >= 2) {
			struct dsamp_fn *cold = coldest(s, now);

			if (cold && c[i].count > 2 * cold->score)
				free_slot = cold;
		}
		if (!slot && free_slot && take_slot(s, free_slot, &c[i]))
			slot = free_slot;
		if (!slot) {
			s->other.samples += c[i].count;
			s->other.cpu_ns += c[i].count * w;
			continue;
		}
		slot->s.samples += c[i].count;
		slot->s.cpu_ns += c[i].count * w;
		slot->score += c[i].count;
		slot->active_ns = now;
	}
}

void daemon_slots_expire(struct dsamp_slots *s, dsamp_alive_fn alive, void *ctx, unsigned long long now)
{
	for (int k = 0; k < s->n; k++) {
		struct dsamp_fn *f = &s->fns[k];

		if (f->used && (!alive(ctx, f->kind, f->id, f->owner) || now - f->active_ns > s->expire_ns))
			fn_free(f);
	}
	for (size_t i = 0; s->past && i < DSAMP_PAST; i++)
		if (s->past[i].used && !alive(ctx, s->past[i].kind, s->past[i].id, s->past[i].owner))
			fn_free(&s->past[i]);
}

void daemon_slots_free(struct dsamp_slots *s)
{
	for (int k = 0; k < s->n && s->fns; k++)
		fn_free(&s->fns[k]);
	free(s->fns);
	s->fns = NULL;
	for (size_t i = 0; s->past && i < DSAMP_PAST; i++)
		fn_free(&s->past[i]);
	free(s->past);
	s->past = NULL;
}
