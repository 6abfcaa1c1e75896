/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The daemon's HTTP endpoint (libmicrohttpd, run by one thread of ours): GET /metrics
 * serves the last published exposition, GET / a pointer to it; other paths 404,
 * other methods 405; malformed requests are libmicrohttpd's 400s.
 *
 * Slow or idle clients cannot keep a scrape out: a request must be answered within
 * HTTP_REQUEST_DEADLINE_MS of its connection opening (or of the previous answer on it),
 * else the connection is cut; and past HTTP_MAX_CONNECTIONS open connections the oldest
 * is cut for each new one, so a short request always gets a slot.  Both are counted.
 *
 * GET /debug/pprof/profile?seconds=N (1 <= N <= HTTP_PROFILE_MAX_S; anything else: 400 with
 * one line) is the exception: its connection is suspended, exempt from the deadline, until the
 * daemon's loop answers it (daemon_http_profile_wanted(), then daemon_http_profile_answer() once N seconds
 * of samples are in: bounded by N plus one refresh).  Up to HTTP_PROFILES_AT_ONCE profiles are taken
 * at once, each in its own slot (its own window, its own answer); a request while every slot is
 * taken gets 429 with Retry-After, the seconds until the first of them ends.  A client gone
 * meanwhile (its end of the connection closed, seen within one turn of the server, ~100 ms) is
 * noticed: its connection closes, the loop drops the profile (daemon_http_profile_abandoned()) and
 * its slot takes the next request; at daemon_http_stop() the pending ones are answered 503. */
#ifndef TMABPF_DAEMON_HTTP_H
#define TMABPF_DAEMON_HTTP_H
#include <stddef.h>
#include <stdint.h>

#include <stdbool.h>

#define HTTP_DEFAULT_LISTEN "127.0.0.1:9464"
#define HTTP_REQUEST_DEADLINE_MS 5000
#define HTTP_MAX_CONNECTIONS 512
#define HTTP_PROFILE_MAX_S 300	/* one profile holds its slot for this long at most */
#define HTTP_PROFILES_AT_ONCE 4	/* profiles taken at once (slots); past them, 429 */
#define HTTP_PROFILE_PATH "/debug/pprof/profile"

struct daemon_http_counts {
	uint64_t ok, not_found, bad_method;
	uint64_t cut_deadline, cut_limit;	/* connections cut: request too slow, too many open */
	uint64_t profiles, profiles_refused;	/* /debug/pprof/profile answered 200, refused (400, 429, 503) */
	uint64_t profiles_abandoned;		/* ... whose client went away before its answer */
};

/* The answer to one request: code, content type and body (metrics: the published
 * exposition, which the server copies under its lock). */
struct http_answer {
	unsigned int code;
	const char *type;
	const char *body;
	size_t len;
	bool metrics;
	bool profile;		/* GET /debug/pprof/profile: the caller checks seconds= (daemon_http_profile_seconds) */
};

/* The handler's logic (no server: the fuzzer drives it too). */
void daemon_http_route(const char *method, const char *url, struct http_answer *a);

/* seconds= of a profile request (NULL: absent): 0 and *secs, or the 400 body (one line). */
const char *daemon_http_profile_seconds(const char *value, int *secs);

struct daemon_http;

/* Parse "HOST:PORT" / "[V6]:PORT": 0, or -EINVAL with one line in err. */
int daemon_http_parse_listen(const char *spec, void *sockaddr_storage, unsigned int *len, char *err, size_t errlen);
/* Bind and listen on spec (port 0: any free port), start serving.  0, or
 * -errno with one line in err (address in use, bad address, ...). */
int daemon_http_start(struct daemon_http **h, const char *spec, char *err, size_t errlen);
/* "ADDR:PORT" actually bound. */
const char *daemon_http_bound(const struct daemon_http *h);
/* Replace what /metrics serves (copied). */
int daemon_http_publish(struct daemon_http *h, const char *text, size_t len);
void daemon_http_counts(struct daemon_http *h, struct daemon_http_counts *c);
/* A profile request waiting for the loop: true once per request, with its slot (0 to
 * HTTP_PROFILES_AT_ONCE - 1) and seconds.  A slot the loop is taking a profile in is not given to
 * another request before the loop has answered it or seen it abandoned. */
bool daemon_http_profile_wanted(struct daemon_http *h, int *slot, int *seconds);
/* Answer the request of slot taken by daemon_http_profile_wanted(): body (malloc'd, taken over; NULL
 * with len 0 for none) sent with code and type. */
void daemon_http_profile_answer(struct daemon_http *h, int slot, unsigned int code, const char *type, char *body,
				size_t len);
/* The client of the profile of slot taken by daemon_http_profile_wanted() went away: true once (the
 * slot is free from then); the loop stops taking it (an answer given anyway is dropped). */
bool daemon_http_profile_abandoned(struct daemon_http *h, int slot);
void daemon_http_stop(struct daemon_http *h);
/* One turn of the server: libmicrohttpd's (events waited for at most wait_ms, 0: none), then the
 * connections past their deadline cut.  The serving thread's loop, and the caller's once
 * daemon_http_serve_here() has stopped that thread (the fuzzer serves in process, one request a turn
 * or a few). */
void daemon_http_turn(struct daemon_http *h, int wait_ms);
void daemon_http_serve_here(struct daemon_http *h);

#endif
