// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* libFuzzer target: the daemon's HTTP side.  The first byte picks: the --listen parser, the
 * handler's logic (method, URL), or raw bytes sent over loopback to a real server (one
 * connection each: libmicrohttpd's parser, our handler, deadlines, connection tracking and
 * profile requests, answered as the daemon's loop would).  The server is turned here, in the
 * fuzzer's thread (daemon_http_serve_here): no thread to wait for, no timeout for a request left
 * incomplete, each input's work done before the next. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "daemon/daemon_http.h"

/* turns of the server per connection: accept, read and answer, send, see the end (a request left
 * incomplete gets no answer and no more turns) */
#define TURNS 6

static struct daemon_http *server;
static struct sockaddr_in addr;

static void start(void)
{
	char err[512];
	const char *bound;

	signal(SIGPIPE, SIG_IGN);
	if (daemon_http_start(&server, "127.0.0.1:0", err, sizeof(err)))
		abort();
	daemon_http_serve_here(server);
	daemon_http_publish(server, "tmabpf_up 1\n", 12);
	bound = strrchr(daemon_http_bound(server), ':');
	addr.sin_family = AF_INET;
	addr.sin_port = htons((uint16_t)atoi(bound + 1));
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

/* What the client has been sent so far; true at its end (the server closed the connection). */
static int drain(int fd)
{
	char buf[4096];
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		;
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

static void over_tcp(const uint8_t *data, size_t size)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), secs, slot;

	if (fd < 0)
		return;
	/* loopback: the kernel completes the connection before the server accepts it */
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0 &&
	    (size == 0 || send(fd, data, size, MSG_NOSIGNAL) >= 0)) {
		shutdown(fd, SHUT_WR);
		for (int i = 0; i < TURNS; i++) {
			daemon_http_turn(server, 0);
			while (daemon_http_profile_wanted(server, &slot, &secs))	/* the daemon's loop: a profile of nothing */
				daemon_http_profile_answer(server, slot, 200, "application/octet-stream", strdup("x"), 1);
			if (drain(fd))
				break;
		}
	}
	close(fd);
	daemon_http_turn(server, 0);	/* the server sees the end: the connection is gone before the next */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char a[256], b[2048], err[256];
	struct http_answer ans;
	unsigned int len;
	const uint8_t *nl;
	struct sockaddr_storage ss;

	if (!server)
		start();
	if (!size)
		return 0;
	switch (data[0] % 3) {
	case 0:
		snprintf(a, sizeof(a), "%.*s", (int)(size - 1 < sizeof(a) - 1 ? size - 1 : sizeof(a) - 1), data + 1);
		daemon_http_parse_listen(a, &ss, &len, err, sizeof(err));
		break;
	case 1:
		nl = memchr(data + 1, '\n', size - 1);
		snprintf(a, sizeof(a), "%.*s", nl ? (int)(nl - data - 1) : 0, data + 1);
		snprintf(b, sizeof(b), "%.*s", nl ? (int)(size - (nl - data) - 1) : (int)size - 1,
			 nl ? (const char *)nl + 1 : (const char *)data + 1);
		daemon_http_route(a, b, &ans);
		if (!ans.metrics && (!ans.body || strlen(ans.body) != ans.len))
			abort();
		break;
	default:
		over_tcp(data + 1, size - 1);
	}
	return 0;
}
