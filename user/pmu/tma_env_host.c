// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Host facts for the TMA engine; see tma_env_host.h. */
#include <stdio.h>
#include <string.h>
#include "lib/kernel_file.h"
#include "tma/tma.h"
#include "pmu/tma_env_host.h"

void tma_env_host(struct tma_env *e)
{
	memset(e, 0, sizeof(*e));
	e->smt_on = kernel_file_int("/sys/devices/system/cpu/smt/active", 0) > 0;
	e->nmi_watchdog = kernel_file_int("/proc/sys/kernel/nmi_watchdog", 0) > 0;
}
