// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Unit tests for uprobe_late.c: which processes mapped a file before its probes were attached, with
 * the kernel's records read before or after the attach (they are not in time order across CPUs). */
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "collect/uprobe_late.h"

static struct mmap_event ev(int pid, unsigned long long ino, unsigned long long t)
{
	return (struct mmap_event){ .pid = pid, .tid = pid, .ino = ino, .time_ns = t, .path = "/x/libl.so" };
}

int main(void)
{
	static struct uprobe_late l;
	static struct uprobe_set s;
	struct mmap_event e;

	if (!freopen("/dev/null", "w", stderr))	/* the lines themselves are not under test */
		return 1;
	s.nr_libs = 2;
	s.libs[0] = (struct uprobe_lib){ .ino = 7, .module = "/usr/lib/libstart.so" };	/* attached at start */
	s.libs[1] = (struct uprobe_lib){ .ino = 42, .module = "/x/libl.so" };
	e = ev(100, 42, 1000);
	uprobe_late_mapped(&l, &s, &e);	/* pid 100 maps it at 1000, the record read before the attach */
	e = ev(101, 7, 1000);
	uprobe_late_mapped(&l, &s, &e);
	check(s.nr_late == 0, "nothing is late before an attach (%d)", s.nr_late);
	uprobe_late_attached(&l, &s, 1, 3500000, -1);
	check(s.nr_late == 1 && s.late[0].pid == 100 && s.late[0].lib == 1 && s.late[0].ms > 3.49 && s.late[0].ms < 3.5,
	      "a mapping read before the attach: late by 3.499 ms (%d, pid %d, %.4f ms)", s.nr_late, s.late[0].pid,
	      s.late[0].ms);
	e = ev(102, 42, 2000000);
	uprobe_late_mapped(&l, &s, &e);	/* read after the attach, but made before it */
	check(s.nr_late == 2 && s.late[1].pid == 102 && s.late[1].ms > 1.49 && s.late[1].ms < 1.51,
	      "a mapping read after the attach but made before it: late by 1.5 ms (%d)", s.nr_late);
	e = ev(103, 42, 4000000);
	uprobe_late_mapped(&l, &s, &e);
	check(s.nr_late == 2, "a mapping after the attach is not late (%d)", s.nr_late);
	e = ev(102, 42, 2500000);
	uprobe_late_mapped(&l, &s, &e);
	check(s.nr_late == 2, "a process is named once per file (%d)", s.nr_late);
	e = ev(104, 7, 10);
	uprobe_late_mapped(&l, &s, &e);
	check(s.nr_late == 2, "a file attached at the start is never late (%d)", s.nr_late);
	uprobe_late_attached(&l, &s, 1, 9000000, -1);
	check(s.nr_late == 2, "a second attach of the same file (more functions) changes nothing (%d)", s.nr_late);
	for (int i = 0; i < 2 * UPROBE_LATE_RECENT; i++) {
		e = ev(1000 + i, 99, 5000000);
		uprobe_late_mapped(&l, &s, &e);
	}
	s.nr_libs = 3;
	s.libs[2] = (struct uprobe_lib){ .ino = 99, .module = "/x/libm.so" };
	uprobe_late_attached(&l, &s, 2, 6000000, 1000 + 2 * UPROBE_LATE_RECENT - 1);
	check(s.nr_late == UPROBE_MAX_LATE, "at most UPROBE_MAX_LATE kept, from the ring's last %d mappings (%d)",
	      UPROBE_LATE_RECENT, s.nr_late);
	check(s.late[2].pid >= 1000 + UPROBE_LATE_RECENT, "the ring keeps the latest mappings (pid %d)", s.late[2].pid);
	return check_exit();
}
