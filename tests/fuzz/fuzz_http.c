// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* libFuzzer target: the daemon's HTTP side.  The first byte picks: the --listen parser, the
 * handler's logic (method, URL), or raw bytes sent over loopback to a real server (one
 * connection each: libmicrohttpd's parser, our handler, deadlines and connection tracking). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "daemon/daemon_http.h"

static struct daemon_http *server;
static struct sockaddr_in addr;

static void start(void)
{
	char err[512];
	const char *bound;

	signal(SIGPIPE, SIG_IGN);
	if (http_start(&server, "127.0.0.1:0", err, sizeof(err)))
		abort();
	http_publish(server, "tmabpf_up 1\n", 12);
	bound = strrchr(http_bound(server), ':');
	addr.sin_family = AF_INET;
	addr.sin_port = htons((uint16_t)atoi(bound + 1));
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

static void over_tcp(const uint8_t *data, size_t size)
{
	struct pollfd p;
	char buf[4096];
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0 &&
	    (size == 0 || send(fd, data, size, MSG_NOSIGNAL) >= 0)) {
		shutdown(fd, SHUT_WR);
		/* an answer comes within a millisecond; a request left incomplete gets none (the server
		 * cuts it at its deadline): do not wait for that */
		p = (struct pollfd){ .fd = fd, .events = POLLIN };
		while (poll(&p, 1, 20) > 0 && read(fd, buf, sizeof(buf)) > 0)
			;
	}
	close(fd);
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
		http_parse_listen(a, &ss, &len, err, sizeof(err));
		break;
	case 1:
		nl = memchr(data + 1, '\n', size - 1);
		snprintf(a, sizeof(a), "%.*s", nl ? (int)(nl - data - 1) : 0, data + 1);
		snprintf(b, sizeof(b), "%.*s", nl ? (int)(size - (nl - data) - 1) : (int)size - 1,
			 nl ? (const char *)nl + 1 : (const char *)data + 1);
		http_route(a, b, &ans);
		if (!ans.metrics && (!ans.body || strlen(ans.body) != ans.len))
			abort();
		break;
	default:
		over_tcp(data + 1, size - 1);
	}
	return 0;
}
