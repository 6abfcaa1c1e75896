// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* tmabpf: entry point and subcommand dispatch. */
#include <stdio.h>
#include <string.h>
#include "cmd/cli.h"
#include "cmd/cmd_analyze.h"
#include "cmd/cmd_check.h"
#include "cmd/cmd_diff.h"
#include "cmd/cmd_list.h"
#include "cmd/cmd_roofs.h"
#include "daemon/daemon.h"
#include "run/run.h"

int main(int argc, char **argv)
{
	struct options o;
	int r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "analyze"))
		return cmd_analyze(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "list"))
		return cmd_list(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "daemon"))
		return cmd_daemon(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "diff"))
		return cmd_diff(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "check"))
		return cmd_check(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "roofs"))
		return cmd_roofs(argc - 1, argv + 1);
	r = cli_parse(argc, argv, &o);
	if (r)
		return r < 0 ? 0 : r;
	return run_profile(&o);
}
