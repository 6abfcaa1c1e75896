// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* libFuzzer target: the daemon's --config file ('key = value' lines turned into options, each
 * option's value parsed as on the command line). */
#include <stdint.h>
#include "daemon/daemon_cli.h"
#include "lib/warn.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct daemon_opts d;
	char *argv[] = { "daemon", "--config", (char *)fuzz_file(data, size), NULL };

	warn_quiet();
	daemon_cli_parse(3, argv, &d);
	daemon_cli_free(&d);
	return 0;
}
