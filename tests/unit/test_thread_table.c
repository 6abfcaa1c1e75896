// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * thread_table in bounded memory: exited threads past the limit fold into per-process
 * records, process records past theirs into per-comm records (then "[other]"); every sum
 * stays in the total and in its process' row while that process has a record, and the
 * counts of what was folded are exact.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "model/thread_table.h"

#define NEV 2

static struct thread_stats thread(unsigned int pid, unsigned int tid, const char *comm, unsigned long long on)
{
	struct thread_stats s = { .pid = pid, .tid = tid, .oncpu_ns = on, .switches_voluntary = 1,
				  .first_seen_ns = 1000 + tid, .exit_ns = 2000 + tid, .exited = 1 };

	snprintf(s.comm, sizeof(s.comm), "%s", comm);
	s.c[0].value = on * 2;
	s.c[0].enabled = s.c[0].running = on;
	s.c[1].value = 1;
	return s;
}

static unsigned long long proc_oncpu(const struct thread_table *tt, unsigned int pid, size_t *found)
{
	struct thread_stats *p;
	size_t n = thread_table_processes(tt, &p);
	unsigned long long on = 0;

	*found = 0;
	for (size_t i = 0; i < n; i++)
		if (p[i].pid == pid) {
			on = p[i].oncpu_ns;
			(*found)++;
		}
	free(p);
	return on;
}

int main(void)
{
	struct thread_table tt;
	struct thread_stats sum;
	const struct thread_stats **all;
	unsigned long long truth_on = 0, truth_c0 = 0, per_pid[8] = {};
	size_t n, found;
	unsigned int tid = 100;

	thread_table_init(&tt, NEV);
	thread_table_set_limits(&tt, 4, 2);
	/* pids 1..6, 5 threads each, exiting in pid order: the oldest fold first */
	for (unsigned int pid = 1; pid <= 6; pid++)
		for (int k = 0; k < 5; k++, tid++) {
			struct thread_stats s = thread(pid, k ? tid : pid, pid <= 3 ? "worker" : pid == 4 ? "loader" : "misc",
						       1000 * pid + k);

			check(thread_table_add_exited(&tt, &s) == 0, "add exited thread %u of pid %u", s.tid, pid);
			truth_on += s.oncpu_ns;
			truth_c0 += s.c[0].value;
			per_pid[pid] += s.oncpu_ns;
		}
	check(tt.n_exited == 4, "the latest 4 exited threads are kept (%zu)", tt.n_exited);
	check(tt.threads_folded == 26, "26 threads folded (%llu)", tt.threads_folded);
	check(tt.n_fproc == 2, "2 process records (%zu)", tt.n_fproc);
	/* pid 6's first folded thread takes the 2nd record slot from pid 4: pids 1..4 go to comm records */
	check(tt.procs_folded == 4, "4 process records folded into comm records (%llu)", tt.procs_folded);
	check(tt.n_fcomm == 2, "comm records: worker and loader (%zu)", tt.n_fcomm);
	thread_table_total(&tt, &sum);
	check(sum.oncpu_ns == truth_on && sum.c[0].value == truth_c0 && sum.switches_voluntary == 30,
	      "every sum is in the total (%llu vs %llu)", (unsigned long long)sum.oncpu_ns, truth_on);
	n = thread_table_all(&tt, &all);
	check(n == tt.n_fcomm + tt.n_fproc + tt.n_exited, "all: folded records and kept threads (%zu)", n);
	memset(&sum, 0, sizeof(sum));
	for (size_t i = 0; i < n; i++)
		thread_stats_add(&sum, all[i], NEV);
	free(all);
	check(sum.oncpu_ns == truth_on, "their sums add up to the total");
	check(proc_oncpu(&tt, 6, &found) == per_pid[6] && found == 1, "pid 6's row has all of its threads");
	check(proc_oncpu(&tt, 5, &found) == per_pid[5] && found == 1, "pid 5's row: its record and its threads");
	check(proc_oncpu(&tt, 1, &found) == 0 && !found, "pid 1 is in the comm record, not a process row");
	for (size_t i = 0; i < tt.n_fcomm; i++)
		if (!strcmp(tt.fcomm[i].s.comm, "worker"))
			check(tt.fcomm[i].s.oncpu_ns == per_pid[1] + per_pid[2] + per_pid[3] && tt.fcomm[i].procs == 3 &&
			      tt.fcomm[i].threads == 15, "worker: pids 1-3, 15 threads");
	/* a flood of comms: past the limit, "[other]" */
	thread_table_set_limits(&tt, 4, 2);
	for (unsigned int pid = 100; pid < 140; pid++) {
		char comm[16];
		struct thread_stats s;

		snprintf(comm, sizeof(comm), "c%u", pid);
		s = thread(pid, pid, comm, 7);
		thread_table_add_exited(&tt, &s);
		truth_on += 7;
	}
	check(tt.n_fcomm <= 3, "comm records bounded: %zu", tt.n_fcomm);
	check(!strcmp(tt.fcomm[tt.n_fcomm - 1].s.comm, "[other]"), "the rest in [other]");
	thread_table_total(&tt, &sum);
	check(sum.oncpu_ns == truth_on, "still every sum in the total");
	thread_table_free(&tt);
	return check_exit();
}
