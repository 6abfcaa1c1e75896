// SPDX-License-Identifier: MIT
/* tmabpf: entry point and subcommand dispatch. */
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "run.h"

int main(int argc, char **argv)
{
	struct options o;
	int r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	r = cli_parse(argc, argv, &o);
	if (r)
		return r < 0 ? 0 : r;
	return run_profile(&o);
}
