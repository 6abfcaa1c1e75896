// SPDX-License-Identifier: MIT
/* libFuzzer target: the daemon's --config file ('key = value' lines turned into options, each
 * option's value parsed as on the command line). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "daemon_cli.h"
#include "warn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct daemon_opts d;
	char *argv[] = { "daemon", "--config", path, NULL };

	if (fd < 0) {
		warn_quiet();
		fd = memfd_create("fuzz-config", MFD_CLOEXEC);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	daemon_parse(3, argv, &d);
	daemon_opts_free(&d);
	return 0;
}
