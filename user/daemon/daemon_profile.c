// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* /debug/pprof/profile: the daemon's sampler (and sampled accounting's events) over the seconds
 * asked for, answered as a pprof profile. */
#include <stdlib.h>
#include <string.h>
#include "daemon/daemon_profile.h"
#include "lib/clock.h"
#include "lib/warn.h"
#include "output/pprof.h"

static const char nomem[] = "503 service unavailable: out of memory for the profile\n";

/* The profile of slot over (or dropped: abandoned, nothing answered): handed over by the sampler. */
static struct profile *profile_take(struct daemon *D, int slot, unsigned long long now)
{
	D->profile_end_ns[slot] = 0;
	if (D->acct.sampled)
		daemon_evsampled_profile_end(&D->devs, slot);
	return daemon_sampling_profile_end(&D->samp, &D->agg, slot, now);
}

static void profile_dispose(struct profile *p)
{
	if (p)
		profile_free(p);
	free(p);
}

/* The profile of slot answered: the pprof encoding, or 503 with one line. */
static void profile_answer(struct daemon *D, int slot, unsigned long long now)
{
	struct profile *p = profile_take(D, slot, now);
	unsigned char *buf = NULL;
	size_t len = 0;
	char err[256];

	if (p && p->nomem)
		warn_add("/debug/pprof/profile: out of memory: some stacks are missing from the profile served");
	if (!p || pprof_encode(p, &buf, &len, err, sizeof(err))) {
		if (p)
			warn_add("/debug/pprof/profile: %s", err);
		daemon_http_profile_answer(D->http, slot, 503, "text/plain; charset=utf-8", strdup(nomem), strlen(nomem));
	} else {
		daemon_http_profile_answer(D->http, slot, 200, "application/octet-stream", (char *)buf, len);
	}
	profile_dispose(p);
}

/* /debug/pprof/profile: the profiles whose clients went away dropped, those asked for started (each
 * in its slot), those whose seconds are over answered.  Each start and end at its own time, not
 * now: encoding one profile may take a while, the next one's window is as long as it says. */
void daemon_profile_poll(struct daemon *D, unsigned long long now)
{
	static const char no_sampler[] = "503 service unavailable: the daemon does not sample (--no-sample, or its "
					 "sampler could not start: see its log)\n";
	int slot, secs;

	for (int i = 0; i < HTTP_PROFILES_AT_ONCE; i++)
		if (D->profile_end_ns[i] && daemon_http_profile_abandoned(D->http, i))
			profile_dispose(profile_take(D, i, now));	/* its client went away: its slot takes the next */
	while (daemon_http_profile_wanted(D->http, &slot, &secs)) {
		/* sampled accounting: the events' estimates too, one sample type each */
		if (!D->sampler ||
		    daemon_sampling_profile_begin(&D->samp, &D->agg, D->acct.sampled ? &D->prep.evs : NULL, slot,
						  now = mono_ns())) {
			const char *msg = D->sampler ? nomem : no_sampler;

			daemon_http_profile_answer(D->http, slot, 503, "text/plain; charset=utf-8", strdup(msg), strlen(msg));
			continue;
		}
		if (D->acct.sampled)
			daemon_evsampled_profile_begin(&D->devs, &D->samp);
		D->profile_end_ns[slot] = now + (unsigned long long)secs * 1000000000ULL;
	}
	for (int i = 0; i < HTTP_PROFILES_AT_ONCE; i++)
		if (D->profile_end_ns[i] && (now = mono_ns()) >= D->profile_end_ns[i])
			profile_answer(D, i, now);
}
