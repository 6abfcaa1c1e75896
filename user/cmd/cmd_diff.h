/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* 'tmabpf diff BASE.json NEW.json [--fail-on BUDGETS]': the regression gate. */
#ifndef TMABPF_CMD_DIFF_H
#define TMABPF_CMD_DIFF_H

int cmd_diff(int argc, char **argv);

#endif
