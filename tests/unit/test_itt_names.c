// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Unit tests for itt_names.c: the functions of --itt's spans, and a gone process' pairs leaving
 * (the daemon: bounded however many processes come and go). */
#include <string.h>
#include "check.h"
#include "sym/itt_names.h"

int main(void)
{
	struct uprobe_set set;
	struct itt_names n = { .collector = "/nonexistent/libtmabpf-itt.so", .lib = -1 };
	int conv, mm;

	memset(&set, 0, sizeof(set));
	conv = itt_names_add(&set, &n, 100, 0, "dnnl::primitive::execute", "convolution");
	mm = itt_names_add(&set, &n, 100, 1, "dnnl::primitive::execute", "matmul");
	check(conv == 0 && mm == 1 && set.nr_funcs == 2 && set.funcs[0].itt, "two pairs, two functions (%d, %d)",
	      conv, mm);
	check(!strcmp(set.funcs[1].symbol, "dnnl::primitive::execute:matmul"), "named domain:task (%s)",
	      set.funcs[1].symbol);
	check(itt_names_add(&set, &n, 200, 7, "dnnl::primitive::execute", "convolution") == conv && set.nr_funcs == 2,
	      "another process' pair of the same name: the same function");
	check(itt_names_add(&set, &n, 100, 1, "dnnl::primitive::execute", "matmul") == mm,
	      "a pair named again: the same function");
	for (unsigned int pid = 1000; pid < 1100; pid++)
		for (unsigned int id = 0; id < 20; id++)
			itt_names_add(&set, &n, pid, id, "d", id % 2 ? "a" : "b");
	check(n.ids.n == 3 + 100 * 20, "every pair kept while its process lives (%zu)", n.ids.n);
	for (unsigned int pid = 1000; pid < 1100; pid++)
		itt_names_forget_pid(&n, pid);
	check(n.ids.n == 3 && n.pids.n == 2, "the gone processes' pairs left (%zu pairs, %zu processes)", n.ids.n,
	      n.pids.n);
	itt_names_forget_pid(&n, 100);
	check(itt_names_fn(&n, 100, 0) < 0 && itt_names_fn(&n, 100, 1) < 0, "pid 100's pairs are gone");
	check(itt_names_fn(&n, 200, 7) == conv, "pid 200's stays (%d)", itt_names_fn(&n, 200, 7));
	check(set.nr_funcs == 4 && !strcmp(set.funcs[conv].symbol, "dnnl::primitive::execute:convolution"),
	      "the functions stay: their sums are the host's (%d)", set.nr_funcs);
	itt_names_forget_pid(&n, 4242);
	check(n.ids.n == 1, "a pid without pairs: nothing (%zu)", n.ids.n);
	itt_names_free(&n);
	uprobe_set_free(&set);
	return check_exit();
}
