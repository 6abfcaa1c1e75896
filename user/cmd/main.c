// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* tmabpf: entry point and subcommand dispatch (one table, as bpftool's cmds[]). */
#include <stdio.h>
#include <string.h>
#include "cmd/cli.h"
#include "cmd/cmd_analyze.h"
#include "cmd/cmd_check.h"
#include "cmd/cmd_diff.h"
#include "cmd/cmd_list.h"
#include "cmd/cmd_roofs.h"
#include "daemon/daemon.h"
#include "lib/suggest.h"
#include "lib/warn.h"
#include "run/run.h"

static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
} cmds[] = {
	{ "analyze", cmd_analyze }, { "list", cmd_list },   { "daemon", cmd_daemon },
	{ "diff", cmd_diff },	    { "check", cmd_check }, { "roofs", cmd_roofs },
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

/* A first word one or two edits from a subcommand is a typo of it, never a command to profile
 * ('tmabpf deamon'); the command to profile comes after '--'. */
static const char *subcommand_typo(const char *word)
{
	const char *names[NCMDS];

	for (size_t i = 0; i < NCMDS; i++)
		names[i] = cmds[i].name;
	if (!word || word[0] == '-')
		return NULL;
	for (size_t i = 0; i < NCMDS; i++)
		if (suggest_distance(word, names[i], 2) <= 2)
			return names[i];
	return NULL;
}

int main(int argc, char **argv)
{
	struct options o;
	const char *typo;
	int r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; argc > 1 && i < NCMDS; i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	if (argc > 1 && (typo = subcommand_typo(argv[1]))) {
		err_print("'%s' is not a tmabpf command: did you mean 'tmabpf %s'? (to profile a program of that name: "
			  "tmabpf -- %s)", argv[1], typo, argv[1]);
		return EXIT_USAGE;
	}
	r = cli_parse(argc, argv, &o);
	if (r)
		return r < 0 ? 0 : r;
	return run_profile(&o);
}
