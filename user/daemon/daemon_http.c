// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <microhttpd.h>
#include "daemon/daemon_http.h"
#include "lib/clock.h"
#include "lib/prom.h"
#include "lib/warn.h"

/* One open connection, in the order they came (oldest first).  Touched only by the serving
 * thread: libmicrohttpd runs there (no thread of its own), so a tracked fd is open. */
struct conn {
	struct conn *prev, *next;
	int fd;
	unsigned long long since_ns;	/* opened, or its last answer: the request's deadline runs from here */
	bool cut;			/* shut down: libmicrohttpd closes it at its next turn */
	bool profile;			/* suspended for a profile: no deadline (see daemon_http.h) */
	int slot;			/* ... its slot in h->prof */
};

/* A profile request in flight, guarded by the server's lock.  GONE: its client went away while the
 * loop took it; the slot is free once the loop has seen that (daemon_http_profile_abandoned). */
struct profile_req {
	enum { PROF_IDLE, PROF_WAITING, PROF_RUNNING, PROF_DONE, PROF_GONE } st;
	struct MHD_Connection *c;
	int seconds;
	unsigned long long since_ns;	/* accepted (mono_ns) */
	unsigned int code;
	const char *type;
	char *body;
	size_t len;
};

struct daemon_http {
	struct MHD_Daemon *mhd;
	int fd;
	char bound[80];
	pthread_t thread;		/* serves: MHD_run_wait, then cuts what is overdue */
	bool served_here;		/* thread stopped: the caller turns the server (daemon_http_serve_here) */
	volatile bool stop;
	struct conn *oldest, *newest;
	unsigned int open;		/* connections not cut */
	pthread_mutex_t lock;
	char *text;		/* exposition, guarded by lock */
	size_t len;
	unsigned long long text_ns;	/* guarded by lock: when it was published (CLOCK_MONOTONIC) */
	struct daemon_http_counts counts;	/* guarded by lock */
	struct profile_req prof[HTTP_PROFILES_AT_ONCE];	/* guarded by lock */
	bool stopping;			/* guarded by lock: profiles are refused */
};


#define REFRESH_AGE "# HELP tmabpf_refresh_age_seconds Seconds since the last refresh, at this scrape.\n" \
		    "# TYPE tmabpf_refresh_age_seconds gauge\ntmabpf_refresh_age_seconds "

static const char INDEX[] = "<html><head><title>tmabpf</title></head><body><h1>tmabpf</h1>"
			    "<p><a href=\"/metrics\">Metrics</a></p>"
			    "<p><a href=\"" HTTP_PROFILE_PATH "?seconds=30\">A 30 s CPU profile (pprof)</a></p></body></html>\n";

int daemon_http_parse_listen(const char *spec, void *ss, unsigned int *len, char *err, size_t errlen)
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
	err_set(err, errlen, "bad listen address '%s': expected IPV4:PORT or [IPV6]:PORT, e.g. %s or [::1]:9464",
		 spec, HTTP_DEFAULT_LISTEN);
	return -EINVAL;
}

/* An answer; retry_after: a Retry-After header's value, NULL for none. */
static enum MHD_Result reply_with(struct MHD_Connection *c, unsigned int code, const char *type, const char *body,
				  size_t len, enum MHD_ResponseMemoryMode mode, const char *retry_after)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, mode);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET");
	if (retry_after)
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, retry_after);
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code, const char *type, const char *body,
			     size_t len, enum MHD_ResponseMemoryMode mode)
{
	return reply_with(c, code, type, body, len, mode, NULL);
}

void daemon_http_route(const char *method, const char *url, struct http_answer *a)
{
	static const char not_allowed[] = "405 method not allowed: only GET /metrics, GET " HTTP_PROFILE_PATH " and GET /\n";
	static const char not_found[] = "404 not found: tmabpf serves /metrics and " HTTP_PROFILE_PATH "?seconds=N\n";

	memset(a, 0, sizeof(*a));
	a->type = "text/plain; charset=utf-8";
	if (strcmp(method, MHD_HTTP_METHOD_GET)) {
		a->code = MHD_HTTP_METHOD_NOT_ALLOWED;
		a->body = not_allowed;
		a->len = sizeof(not_allowed) - 1;
	} else if (!strcmp(url, "/metrics")) {
		a->code = MHD_HTTP_OK;
		a->type = PROM_CONTENT_TYPE;
		a->metrics = true;
	} else if (!strcmp(url, HTTP_PROFILE_PATH)) {
		a->code = MHD_HTTP_OK;
		a->type = "application/octet-stream";
		a->profile = true;
	} else if (!strcmp(url, "/")) {
		a->code = MHD_HTTP_OK;
		a->type = "text/html; charset=utf-8";
		a->body = INDEX;
		a->len = sizeof(INDEX) - 1;
	} else {
		a->code = MHD_HTTP_NOT_FOUND;
		a->body = not_found;
		a->len = sizeof(not_found) - 1;
	}
}

const char *daemon_http_profile_seconds(const char *v, int *secs)
{
	static const char missing[] = "400 bad request: " HTTP_PROFILE_PATH " needs seconds=N (1 to 300)\n";
	static const char bad[] = "400 bad request: seconds= must be a whole number of seconds from 1 to 300\n";
	long n = 0;

	_Static_assert(HTTP_PROFILE_MAX_S == 300, "the messages say 300");
	if (!v || !*v)
		return missing;
	for (const char *p = v; *p; p++) {
		if (*p < '0' || *p > '9' || p - v > 6)
			return bad;
		n = n * 10 + (*p - '0');
	}
	if (n < 1 || n > HTTP_PROFILE_MAX_S)
		return bad;
	*secs = (int)n;
	return NULL;
}

/* Every slot taken: the seconds until the first of them is free (its seconds left, and one for its
 * answer; 1 for one answered or dropped already).  Under the lock. */
static long long profile_retry_after(const struct daemon_http *h, unsigned long long now)
{
	long long best = 0;

	for (int i = 0; i < HTTP_PROFILES_AT_ONCE; i++) {
		const struct profile_req *p = &h->prof[i];
		long long left = 1;

		if (p->st == PROF_WAITING || p->st == PROF_RUNNING)
			left = p->seconds - (long long)((now - p->since_ns) / 1000000000ULL) + 1;
		if (!i || left < best)
			best = left;
	}
	return best < 1 ? 1 : best;	/* a profile past its seconds (the loop late): soon, never 0 */
}

/* A profile request: refused at once (400, 429, 503), or suspended in a free slot until the loop
 * answers. */
static enum MHD_Result profile_request(struct daemon_http *h, struct MHD_Connection *c, struct conn *k,
				       void **con_cls)
{
	static const char busy[] = "429 too many requests: 4 profiles are being taken, the most served at once; "
				   "retry when the first is done (Retry-After)\n";
	static const char stopping[] = "503 service unavailable: the daemon is stopping\n";
	static const char nomem[] = "503 service unavailable: out of memory for the connection\n";
	const char *msg = NULL;
	unsigned int code = MHD_HTTP_BAD_REQUEST;
	long long retry = 0;
	char after[24];
	int secs = 0, slot = -1;

	_Static_assert(HTTP_PROFILES_AT_ONCE == 4, "the message says 4");
	msg = daemon_http_profile_seconds(MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "seconds"), &secs);
	pthread_mutex_lock(&h->lock);
	if (!msg && (h->stopping || !k)) {
		/* untracked (out of memory at its start): nothing would free its slot were it closed */
		msg = h->stopping ? stopping : nomem;
		code = MHD_HTTP_SERVICE_UNAVAILABLE;
	} else if (!msg) {
		for (int i = 0; i < HTTP_PROFILES_AT_ONCE && slot < 0; i++)
			if (h->prof[i].st == PROF_IDLE)
				slot = i;
		if (slot < 0) {
			msg = busy;
			code = MHD_HTTP_TOO_MANY_REQUESTS;
			retry = profile_retry_after(h, mono_ns());
		}
	}
	if (msg) {
		h->counts.profiles_refused++;
		pthread_mutex_unlock(&h->lock);
		snprintf(after, sizeof(after), "%lld", retry < 1 ? 1 : retry);
		return reply_with(c, code, "text/plain; charset=utf-8", msg, strlen(msg), MHD_RESPMEM_PERSISTENT,
				  code == MHD_HTTP_TOO_MANY_REQUESTS ? after : NULL);
	}
	h->prof[slot] = (struct profile_req){ .st = PROF_WAITING, .c = c, .seconds = secs, .since_ns = mono_ns() };
	pthread_mutex_unlock(&h->lock);
	k->profile = true;
	k->slot = slot;
	*con_cls = &h->prof[slot];	/* called again once resumed: the answer is in h->prof[slot] */
	MHD_suspend_connection(c);
	return MHD_YES;
}

/* The resumed profile request: its answer. */
static enum MHD_Result profile_reply(struct daemon_http *h, struct MHD_Connection *c, struct conn *k,
				      struct profile_req *slot)
{
	static const char nomem[] = "503 service unavailable: out of memory for the profile\n";
	struct profile_req p;

	pthread_mutex_lock(&h->lock);
	if (slot->c != c || slot->st != PROF_DONE) {
		/* its client went away (profile_gone; the request in flight may be another's by now):
		 * close, no answer */
		pthread_mutex_unlock(&h->lock);
		if (k)
			k->profile = false;
		return MHD_NO;
	}
	p = *slot;
	*slot = (struct profile_req){ .st = PROF_IDLE };
	if (p.code == MHD_HTTP_OK && p.body)
		h->counts.profiles++;
	else
		h->counts.profiles_refused++;
	pthread_mutex_unlock(&h->lock);
	if (k) {
		k->profile = false;
		k->since_ns = mono_ns();
	}
	if (!p.body)
		return reply(c, p.code == MHD_HTTP_OK ? MHD_HTTP_SERVICE_UNAVAILABLE : p.code, "text/plain; charset=utf-8",
			     nomem, sizeof(nomem) - 1, MHD_RESPMEM_PERSISTENT);
	return reply(c, p.code, p.type, p.body, p.len, MHD_RESPMEM_MUST_FREE);
}

bool daemon_http_profile_wanted(struct daemon_http *h, int *slot, int *seconds)
{
	bool want = false;

	pthread_mutex_lock(&h->lock);
	for (int i = 0; i < HTTP_PROFILES_AT_ONCE && !want; i++)
		if ((want = h->prof[i].st == PROF_WAITING)) {
			h->prof[i].st = PROF_RUNNING;
			*slot = i;
			*seconds = h->prof[i].seconds;
		}
	pthread_mutex_unlock(&h->lock);
	return want;
}

/* Set the answer of the request in slot and resume it; false (body freed) when none is there (a
 * slot whose client went away is free from then). */
static bool profile_set_answer(struct daemon_http *h, int slot, unsigned int code, const char *type, char *body,
			       size_t len, int from)
{
	struct MHD_Connection *c = NULL;
	struct profile_req *p = &h->prof[slot];

	pthread_mutex_lock(&h->lock);
	if ((int)p->st == from || (from == PROF_WAITING && p->st == PROF_RUNNING)) {
		p->st = PROF_DONE;
		p->code = code;
		p->type = type;
		p->body = body;
		p->len = len;
		c = p->c;
		body = NULL;
	} else if (p->st == PROF_GONE) {
		p->st = PROF_IDLE;	/* its client went away as it ended: the loop is done with it too */
	}
	pthread_mutex_unlock(&h->lock);
	free(body);
	if (c)
		MHD_resume_connection(c);	/* the serving thread calls on_request again */
	return c != NULL;
}

void daemon_http_profile_answer(struct daemon_http *h, int slot, unsigned int code, const char *type, char *body,
				size_t len)
{
	profile_set_answer(h, slot, code, type, body, len, PROF_RUNNING);
}

bool daemon_http_profile_abandoned(struct daemon_http *h, int slot)
{
	bool r;

	pthread_mutex_lock(&h->lock);
	if ((r = h->prof[slot].st == PROF_GONE))
		h->prof[slot].st = PROF_IDLE;
	pthread_mutex_unlock(&h->lock);
	return r;
}

/* Its client gone: a request the loop has taken waits for the loop to drop it (GONE), any other
 * frees its slot at once; the body of one answered meanwhile is freed.  Under the lock. */
static void profile_drop(struct daemon_http *h, struct profile_req *p)
{
	free(p->body);
	*p = (struct profile_req){ .st = p->st == PROF_RUNNING ? PROF_GONE : PROF_IDLE };
	h->counts.profiles_abandoned++;
}

/* The suspended profile connection's client has closed its end (or reset it): libmicrohttpd
 * reads nothing while suspended, so peek. */
static bool peer_gone(int fd)
{
	char b;
	ssize_t n = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);

	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* Its client gone: the request in flight is over at once (its slot is free for the next one
 * once the loop has dropped the profile being taken: daemon_http_profile_abandoned), its
 * connection resumed only to be closed (libmicrohttpd may close it without calling on_request,
 * or profile_reply closes it).  One answered already (DONE: resumed by the loop, not sent yet)
 * is dropped too: libmicrohttpd may close it without calling on_request, and k->profile is
 * cleared here, so nothing else would free its slot (each such client held one slot for good). */
static void profile_gone(struct daemon_http *h, struct conn *k)
{
	struct MHD_Connection *c = NULL;
	struct profile_req *p = &h->prof[k->slot];

	pthread_mutex_lock(&h->lock);
	if (p->st == PROF_WAITING || p->st == PROF_RUNNING) {
		c = p->c;
		profile_drop(h, p);
	} else if (p->st == PROF_DONE) {
		profile_drop(h, p);	/* resumed already: no second resume */
	}
	pthread_mutex_unlock(&h->lock);
	k->profile = false;
	if (c)
		MHD_resume_connection(c);
}

static enum MHD_Result count_length(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	if (key && !strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH))
		(*(int *)cls)++;
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	static const char two_lengths[] = "400 bad request: more than one Content-Length header\n";
	struct daemon_http *h = cls;
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *k = ci ? ci->socket_context : NULL;
	struct http_answer a;
	char *copy = NULL;
	int lengths = 0;

	if (*con_cls >= (void *)h->prof && *con_cls < (void *)(h->prof + HTTP_PROFILES_AT_ONCE))
		return profile_reply(h, c, k, *con_cls);
	/* two lengths make the request's end ambiguous (RFC 9112 6.3: request smuggling behind a proxy) */
	MHD_get_connection_values(c, MHD_HEADER_KIND, count_length, &lengths);
	if (lengths > 1)
		return reply(c, MHD_HTTP_BAD_REQUEST, "text/plain; charset=utf-8", two_lengths, sizeof(two_lengths) - 1,
			     MHD_RESPMEM_PERSISTENT);
	daemon_http_route(method, url, &a);
	if (a.profile)
		return profile_request(h, c, k, con_cls);
	pthread_mutex_lock(&h->lock);
	if (a.metrics && (copy = malloc(h->len + sizeof(REFRESH_AGE) + 32))) {
		/* the refresh's age at this scrape: a stalled or slowed refresh loop shows */
		memcpy(copy, h->text, h->len);
		a.len = h->len + (size_t)snprintf(copy + h->len, sizeof(REFRESH_AGE) + 32, REFRESH_AGE "%.3f\n",
						  h->text_ns ? (mono_ns() - h->text_ns) / 1e9 : 0.0);
		a.body = copy;
	}
	if (a.code == MHD_HTTP_OK)
		h->counts.ok++;
	else if (a.code == MHD_HTTP_NOT_FOUND)
		h->counts.not_found++;
	else
		h->counts.bad_method++;
	pthread_mutex_unlock(&h->lock);
	if (ci && ci->socket_context)
		((struct conn *)ci->socket_context)->since_ns = mono_ns();	/* answered: a new deadline */
	if (a.metrics && !copy)
		return MHD_NO;
	return reply(c, a.code, a.type, a.body, a.len, copy ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
}

/* Shut a connection down (its next read is the end): libmicrohttpd closes it at its next turn. */
static void cut(struct daemon_http *h, struct conn *k, uint64_t *counter)
{
	shutdown(k->fd, SHUT_RDWR);
	k->cut = true;
	h->open--;
	pthread_mutex_lock(&h->lock);
	(*counter)++;
	pthread_mutex_unlock(&h->lock);
}

/* Track connections; past HTTP_MAX_CONNECTIONS, the oldest goes: a flood of idle or slow clients
 * cannot keep a short request (a scrape) out, it only cuts its own oldest connections. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct daemon_http *h = cls;
	struct conn *k = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

		if (!ci || !(k = calloc(1, sizeof(*k))))
			return;
		k->fd = ci->connect_fd;
		k->since_ns = mono_ns();
		k->prev = h->newest;
		if (h->newest)
			h->newest->next = k;
		else
			h->oldest = k;
		h->newest = k;
		h->open++;
		*socket_context = k;
		for (struct conn *o = h->oldest; o && h->open > HTTP_MAX_CONNECTIONS; o = o->next)
			if (!o->cut && o != k && !o->profile)	/* a profile in progress is the oldest by design */
				cut(h, o, &h->counts.cut_limit);
		return;
	}
	if (!k)
		return;	/* MHD_CONNECTION_NOTIFY_CLOSED (the fd is closed after this returns) */
	if (k->profile) {
		/* closed with its profile's answer unsent (its client went away after the answer was
		 * set, and libmicrohttpd closed it without calling on_request): free the slot */
		struct profile_req *p = &h->prof[k->slot];

		pthread_mutex_lock(&h->lock);
		if (p->c == c && p->st != PROF_IDLE && p->st != PROF_GONE)
			profile_drop(h, p);
		pthread_mutex_unlock(&h->lock);
	}
	if (!k->cut)
		h->open--;
	if (k->prev)
		k->prev->next = k->next;
	else
		h->oldest = k->next;
	if (k->next)
		k->next->prev = k->prev;
	else
		h->newest = k->prev;
	free(k);
	*socket_context = NULL;
}

/* The serving thread: libmicrohttpd's turns, and after each the connections whose request has
 * taken longer than HTTP_REQUEST_DEADLINE_MS (slow headers, a slow reader, an idle keep-alive). */
void daemon_http_turn(struct daemon_http *h, int wait_ms)
{
	unsigned long long now;

	MHD_run_wait(h->mhd, wait_ms);
	now = mono_ns();
	for (struct conn *k = h->oldest; k; k = k->next)
		if (!k->cut && !k->profile && now - k->since_ns > HTTP_REQUEST_DEADLINE_MS * 1000000ULL)
			cut(h, k, &h->counts.cut_deadline);
		else if (!k->cut && k->profile && peer_gone(k->fd))
			profile_gone(h, k);
}

static void *serve(void *arg)
{
	struct daemon_http *h = arg;

	while (!h->stop)
		daemon_http_turn(h, 100);
	return NULL;
}

void daemon_http_serve_here(struct daemon_http *h)
{
	h->stop = true;
	pthread_join(h->thread, NULL);	/* within one turn: 100 ms */
	h->stop = false;
	h->served_here = true;
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

	if ((r = daemon_http_parse_listen(spec, &ss, &alen, err, errlen)))
		return r;
	h->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (h->fd < 0)
		goto fail;
	setsockopt(h->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(h->fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	/* a deep accept queue (the kernel caps it at net.core.somaxconn): with a shallow one, a
	 * flood of reconnecting clients overflows it, the scraper's SYN is dropped and its connect
	 * waits for the retransmission, 1 s later */
	if (bind(h->fd, (struct sockaddr *)&ss, alen) || listen(h->fd, 65535))
		goto fail;
	len = sizeof(ss);
	if (getsockname(h->fd, (struct sockaddr *)&ss, &len))
		goto fail;
	describe(&ss, h->bound, sizeof(h->bound));
	return 0;
fail:
	r = -errno;
	err_set(err, errlen, "cannot listen on %s: %s%s", spec, strerror(errno),
		 errno == EADDRINUSE ? " (another exporter or tmabpf daemon? choose one with --listen ADDR:PORT)" :
		 errno == EADDRNOTAVAIL ? " (not an address of this host)" : "");
	return r;
}

int daemon_http_start(struct daemon_http **out, const char *spec, char *err, size_t errlen)
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
	h->mhd = MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL, on_request, h, MHD_OPTION_LISTEN_SOCKET, h->fd,
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned int)(HTTP_MAX_CONNECTIONS + 32),
				  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)(HTTP_REQUEST_DEADLINE_MS / 1000 + 1),
				  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024), MHD_OPTION_NOTIFY_CONNECTION,
				  on_connection, h, MHD_OPTION_UNESCAPE_CALLBACK, no_unescape, NULL, MHD_OPTION_END);
	if (!h->mhd) {
		err_set(err, errlen, "libmicrohttpd could not start on %s", h->bound);
		close(h->fd);
		free(h);
		return -EIO;
	}
	/* the thread inherits this mask: SIGINT/SIGTERM/SIGHUP go to the main loop */
	sigset_t block, old;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	r = pthread_create(&h->thread, NULL, serve, h);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		err_set(err, errlen, "cannot start the HTTP thread: %s", strerror(r));
		MHD_stop_daemon(h->mhd);
		free(h);
		return -r;
	}
	*out = h;
	return 0;
}

const char *daemon_http_bound(const struct daemon_http *h)
{
	return h->bound;
}

int daemon_http_publish(struct daemon_http *h, const char *text, size_t len)
{
	char *copy = malloc(len ? len : 1);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, text, len);
	pthread_mutex_lock(&h->lock);
	free(h->text);
	h->text = copy;
	h->len = len;
	h->text_ns = mono_ns();
	pthread_mutex_unlock(&h->lock);
	return 0;
}

void daemon_http_counts(struct daemon_http *h, struct daemon_http_counts *c)
{
	pthread_mutex_lock(&h->lock);
	*c = h->counts;
	pthread_mutex_unlock(&h->lock);
}

#define STOPPING_503 "503 service unavailable: the daemon is stopping; no profile\n"

void daemon_http_stop(struct daemon_http *h)
{
	if (!h)
		return;
	/* the profiles in flight are answered (503) and sent before the server stops: libmicrohttpd
	 * must not be stopped with a suspended connection */
	char cut_s[HTTP_PROFILES_AT_ONCE * 40] = "";
	unsigned long long now = mono_ns();
	int ncut = 0, unsent = 0;

	pthread_mutex_lock(&h->lock);
	h->stopping = true;
	for (int s = 0; s < HTTP_PROFILES_AT_ONCE; s++)	/* what is cut, for the line below */
		if (h->prof[s].st == PROF_WAITING || h->prof[s].st == PROF_RUNNING)
			snprintf(cut_s + strlen(cut_s), sizeof(cut_s) - strlen(cut_s), "%s%d s asked %.1f s ago",
				 ncut++ ? ", " : "", h->prof[s].seconds, (now - h->prof[s].since_ns) / 1e9);
	pthread_mutex_unlock(&h->lock);
	for (int s = 0; s < HTTP_PROFILES_AT_ONCE; s++)
		profile_set_answer(h, s, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain; charset=utf-8", strdup(STOPPING_503),
				   sizeof(STOPPING_503) - 1, PROF_WAITING);
	for (int i = 0; i < 20; i++) {	/* until they are sent: at most 1 s */
		pthread_mutex_lock(&h->lock);
		unsent = 0;
		for (int s = 0; s < HTTP_PROFILES_AT_ONCE; s++)
			unsent += h->prof[s].st != PROF_IDLE && h->prof[s].st != PROF_GONE;
		pthread_mutex_unlock(&h->lock);
		if (!unsent)
			break;
		usleep(50 * 1000);
	}
	if (ncut || unsent)
		fprintf(stderr, "tmabpf: daemon: stopping: %d profile%s cut short, answered 503 (%s)%s\n", ncut,
			ncut == 1 ? "" : "s", ncut ? cut_s : "none in progress",
			unsent ? "; answers not sent within 1 s are closed unsent" : "");
	h->stop = true;
	if (!h->served_here)
		pthread_join(h->thread, NULL);	/* within one turn: 100 ms */
	MHD_stop_daemon(h->mhd);	/* closes the listen socket it was given too, and the connections */
	pthread_mutex_destroy(&h->lock);
	free(h->text);
	free(h);
}
