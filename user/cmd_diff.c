// SPDX-License-Identifier: MIT
#include "cmd_diff.h"
int cmd_diff(int argc, char **argv) { return 2; }
