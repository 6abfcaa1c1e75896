/* SPDX-License-Identifier: MIT */
/* 'tmabpf diff BASE.json NEW.json [--fail-on BUDGETS]': the regression gate. */
#ifndef TMABPF_CMD_DIFF_H
#define TMABPF_CMD_DIFF_H

int cmd_diff(int argc, char **argv);

#endif
