// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <microhttpd.h>
#include "daemon_http.h"
#include "prom.h"

struct daemon_http {
	struct MHD_Daemon *mhd;
	int fd;
	char bound[80];
	pthread_mutex_t lock;
	char *text;		/* exposition, guarded by lock */
	size_t len;
	struct http_counts counts;
};

static const char INDEX[] = "<html><head><title>tmabpf</title></head><body><h1>tmabpf</h1>"
			    "<p><a href=\"/metrics\">Metrics</a></p></body></html>\n";

int http_parse_listen(const char *spec, void *ss, unsigned int *len, char *err, size_t errlen)
{
	char host[64];
	const char *colon, *port_s;
	char *end;
	long port;

	if (spec[0] == '[') {
		const char *rb = strchr(spec, ']');

		if (!rb || rb[1] != ':' || (size_t)(rb - spec - 1) >= sizeof(host))
			goto bad;
		memcpy(host, spec + 1, rb - spec - 1);
		host[rb - spec - 1] = 0;
		port_s = rb + 2;
	} else {
		colon = strrchr(spec, ':');
		if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(host) || strchr(spec, ':') != colon)
			goto bad;
		memcpy(host, spec, colon - spec);
		host[colon - spec] = 0;
		port_s = colon + 1;
	}
	errno = 0;
	port = strtol(port_s, &end, 10);
	if (errno || end == port_s || *end || port < 0 || port > 65535)
		goto bad;
	memset(ss, 0, sizeof(struct sockaddr_storage));
	if (spec[0] == '[') {
		struct sockaddr_in6 *a = ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			goto bad;
		*len = sizeof(*a);
	} else {
		struct sockaddr_in *a = ss;

		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			goto bad;
		*len = sizeof(*a);
	}
	return 0;
bad:
	snprintf(err, errlen, "bad listen address '%s': expected IPV4:PORT or [IPV6]:PORT, e.g. %s or [::1]:9464",
		 spec, HTTP_DEFAULT_LISTEN);
	return -EINVAL;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code, const char *type, const char *body,
			     size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, mode);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result serve_metrics(struct daemon_http *h, struct MHD_Connection *c)
{
	char *copy;
	size_t len;

	pthread_mutex_lock(&h->lock);
	len = h->len;
	copy = malloc(len ? len : 1);
	if (copy)
		memcpy(copy, h->text, len);
	h->counts.ok++;
	pthread_mutex_unlock(&h->lock);
	if (!copy)
		return MHD_NO;
	return reply(c, MHD_HTTP_OK, PROM_CONTENT_TYPE, copy, len, MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	static const char not_allowed[] = "405 method not allowed: only GET /metrics and GET /\n";
	static const char not_found[] = "404 not found: tmabpf serves /metrics\n";
	struct daemon_http *h = cls;

	if (strcmp(method, MHD_HTTP_METHOD_GET)) {
		pthread_mutex_lock(&h->lock);
		h->counts.bad_method++;
		pthread_mutex_unlock(&h->lock);
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8", not_allowed,
			     sizeof(not_allowed) - 1, MHD_RESPMEM_PERSISTENT);
	}
	if (!strcmp(url, "/metrics"))
		return serve_metrics(h, c);
	if (!strcmp(url, "/")) {
		pthread_mutex_lock(&h->lock);
		h->counts.ok++;
		pthread_mutex_unlock(&h->lock);
		return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8", INDEX, sizeof(INDEX) - 1,
			     MHD_RESPMEM_PERSISTENT);
	}
	pthread_mutex_lock(&h->lock);
	h->counts.not_found++;
	pthread_mutex_unlock(&h->lock);
	return reply(c, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8", not_found, sizeof(not_found) - 1,
		     MHD_RESPMEM_PERSISTENT);
}

/* Paths are matched as sent: no percent-decoding, so "/%00" or "/%6detrics"
 * are not "/" or "/metrics". */
static size_t no_unescape(void *cls, struct MHD_Connection *c, char *uri)
{
	return strlen(uri);
}

static void describe(const struct sockaddr_storage *ss, char *out, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		snprintf(out, len, "[%s]:%u", a, ntohs(s6->sin6_port));
	} else {
		const struct sockaddr_in *s4 = (const void *)ss;

		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		snprintf(out, len, "%s:%u", a, ntohs(s4->sin_port));
	}
}

static int listen_on(const char *spec, struct daemon_http *h, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t len;
	unsigned int alen;
	int one = 1, r;

	if ((r = http_parse_listen(spec, &ss, &alen, err, errlen)))
		return r;
	h->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (h->fd < 0)
		goto fail;
	setsockopt(h->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(h->fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(h->fd, (struct sockaddr *)&ss, alen) || listen(h->fd, 64))
		goto fail;
	len = sizeof(ss);
	if (getsockname(h->fd, (struct sockaddr *)&ss, &len))
		goto fail;
	describe(&ss, h->bound, sizeof(h->bound));
	return 0;
fail:
	r = -errno;
	snprintf(err, errlen, "cannot listen on %s: %s%s", spec, strerror(errno),
		 errno == EADDRINUSE ? " (another exporter or tmabpf daemon? choose one with --listen ADDR:PORT)" :
		 errno == EADDRNOTAVAIL ? " (not an address of this host)" : "");
	return r;
}

int http_start(struct daemon_http **out, const char *spec, char *err, size_t errlen)
{
	struct daemon_http *h = calloc(1, sizeof(*h));
	int r;

	*out = NULL;
	if (!h)
		return -ENOMEM;
	pthread_mutex_init(&h->lock, NULL);
	h->fd = -1;
	if ((r = listen_on(spec, h, err, errlen))) {
		if (h->fd >= 0)
			close(h->fd);
		free(h);
		return r;
	}
	/* its thread inherits this mask: SIGINT/SIGTERM go to the main loop */
	sigset_t block, old;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	h->mhd = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD, 0, NULL, NULL, on_request, h, MHD_OPTION_LISTEN_SOCKET,
				  h->fd, MHD_OPTION_CONNECTION_LIMIT, (unsigned int)64, MHD_OPTION_CONNECTION_TIMEOUT,
				  (unsigned int)10, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024),
				  MHD_OPTION_UNESCAPE_CALLBACK, no_unescape, NULL, MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!h->mhd) {
		snprintf(err, errlen, "libmicrohttpd could not start on %s", h->bound);
		close(h->fd);
		free(h);
		return -EIO;
	}
	*out = h;
	return 0;
}

const char *http_bound(const struct daemon_http *h)
{
	return h->bound;
}

int http_publish(struct daemon_http *h, const char *text, size_t len)
{
	char *copy = malloc(len ? len : 1);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, text, len);
	pthread_mutex_lock(&h->lock);
	free(h->text);
	h->text = copy;
	h->len = len;
	pthread_mutex_unlock(&h->lock);
	return 0;
}

void http_counts(struct daemon_http *h, struct http_counts *c)
{
	pthread_mutex_lock(&h->lock);
	*c = h->counts;
	pthread_mutex_unlock(&h->lock);
}

void http_stop(struct daemon_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->mhd);	/* closes the listen socket it was given too */
	pthread_mutex_destroy(&h->lock);
	free(h->text);
	free(h);
}
