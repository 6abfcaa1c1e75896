// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* /debug/pprof/profile: the daemon's sampler (and sampled accounting's events) over the seconds
 * asked for, answered as a pprof profile. */
#include <stdlib.h>
#include <string.h>
#include "daemon/daemon_profile.h"
#include "lib/warn.h"
#include "output/pprof.h"

/* /debug/pprof/profile: start the one asked for, or answer it once its seconds are over. */
void daemon_profile_poll(struct daemon *D, unsigned long long now)
{
	static const char no_sampler[] = "503 service unavailable: the daemon does not sample (--no-sample, or its "
					 "sampler could not start: see its log)\n";
	static const char nomem[] = "503 service unavailable: out of memory for the profile\n";
	struct profile *p;
	unsigned char *buf = NULL;
	size_t len = 0;
	char err[256];
	int secs;

	if (D->profile_end_ns && daemon_http_profile_abandoned(D->http)) {
		D->profile_end_ns = 0;	/* its client went away: dropped, the next request is taken now */
		if (D->acct.sampled)
			daemon_evsampled_profile_end(&D->devs);
		p = daemon_sampling_profile_end(&D->samp, &D->agg, now);
		if (p)
			profile_free(p);
		free(p);
		return;
	}
	if (!D->profile_end_ns) {
		if (!daemon_http_profile_wanted(D->http, &secs))
			return;
		/* sampled accounting: the events' estimates too, one sample type each */
		if (!D->sampler || daemon_sampling_profile_begin(&D->samp, &D->agg, D->acct.sampled ? &D->prep.evs : NULL, now)) {
			const char *msg = D->sampler ? nomem : no_sampler;

			daemon_http_profile_answer(D->http, 503, "text/plain; charset=utf-8", strdup(msg), strlen(msg));
			return;
		}
		if (D->acct.sampled)
			daemon_evsampled_profile_begin(&D->devs, &D->samp);
		D->profile_end_ns = now + (unsigned long long)secs * 1000000000ULL;
		return;
	}
	if (now < D->profile_end_ns)
		return;
	D->profile_end_ns = 0;
	if (D->acct.sampled)
		daemon_evsampled_profile_end(&D->devs);
	p = daemon_sampling_profile_end(&D->samp, &D->agg, now);
	if (p && p->nomem)
		warn_add("/debug/pprof/profile: out of memory: some stacks are missing from the profile served");
	if (!p || pprof_encode(p, &buf, &len, err, sizeof(err))) {
		if (p)
			warn_add("/debug/pprof/profile: %s", err);
		daemon_http_profile_answer(D->http, 503, "text/plain; charset=utf-8", strdup(nomem), strlen(nomem));
	} else {
		daemon_http_profile_answer(D->http, 200, "application/octet-stream", (char *)buf, len);
	}
	if (p)
		profile_free(p);
	free(p);
}
