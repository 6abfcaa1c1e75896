/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The daemon's HTTP endpoint (libmicrohttpd, one internal thread): GET /metrics
 * serves the last published exposition, GET / a pointer to it; other paths 404,
 * other methods 405; malformed requests are libmicrohttpd's 400s. */
#ifndef TMABPF_DAEMON_HTTP_H
#define TMABPF_DAEMON_HTTP_H
#include <stddef.h>
#include <stdint.h>

#define HTTP_DEFAULT_LISTEN "127.0.0.1:9464"

struct http_counts {
	uint64_t ok, not_found, bad_method;
};

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
