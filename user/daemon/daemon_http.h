/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The daemon's HTTP endpoint (libmicrohttpd, run by one thread of ours): GET /metrics
 * serves the last published exposition, GET / a pointer to it; other paths 404,
 * other methods 405; malformed requests are libmicrohttpd's 400s.
 *
 * Slow or idle clients cannot keep a scrape out: a request must be answered within
 * HTTP_REQUEST_DEADLINE_MS of its connection opening (or of the previous answer on it),
 * else the connection is cut; and past HTTP_MAX_CONNECTIONS open connections the oldest
 * is cut for each new one, so a short request always gets a slot.  Both are counted. */
#ifndef TMABPF_DAEMON_HTTP_H
#define TMABPF_DAEMON_HTTP_H
#include <stddef.h>
#include <stdint.h>

#include <stdbool.h>

#define HTTP_DEFAULT_LISTEN "127.0.0.1:9464"
#define HTTP_REQUEST_DEADLINE_MS 5000
#define HTTP_MAX_CONNECTIONS 512

struct http_counts {
	uint64_t ok, not_found, bad_method;
	uint64_t cut_deadline, cut_limit;	/* connections cut: request too slow, too many open */
};

/* The answer to one request: code, content type and body (metrics: the published
 * exposition, which the server copies under its lock). */
struct http_answer {
	unsigned int code;
	const char *type;
	const char *body;
	size_t len;
	bool metrics;
};

/* The handler's logic (no server: the fuzzer drives it too). */
void http_route(const char *method, const char *url, struct http_answer *a);

struct daemon_http;

/* Parse "HOST:PORT" / "[V6]:PORT": 0, or -EINVAL with one line in err. */
int http_parse_listen(const char *spec, void *sockaddr_storage, unsigned int *len, char *err, size_t errlen);
/* Bind and listen on spec (port 0: any free port), start serving.  0, or
 * -errno with one line in err (address in use, bad address, ...). */
int http_start(struct daemon_http **h, const char *spec, char *err, size_t errlen);
/* "ADDR:PORT" actually bound. */
const char *http_bound(const struct daemon_http *h);
/* Replace what /metrics serves (copied). */
int http_publish(struct daemon_http *h, const char *text, size_t len);
void http_counts(struct daemon_http *h, struct http_counts *c);
void http_stop(struct daemon_http *h);

#endif
