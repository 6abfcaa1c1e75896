// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* mem_bins: addresses binned by mapping; names; re-read after a miss; maps kept after exit. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "collect/mem_bins.h"
#include "check.h"

/* maps text per read: the test swaps it to model a process that maps more, then exits */
struct fake {
	const char *text;	/* NULL: the process is gone */
	int reads;
};

static int fake_read(int pid, struct procmaps *out, void *ctx)
{
	struct fake *f = ctx;
	char err[128];

	(void)pid;
	f->reads++;
	if (!f->text)
		return -ESRCH;
	return procmaps_parse(f->text, out, err, sizeof(err));
}

static const char *MAPS1 =
	"55d0a0000000-55d0a0001000 r-xp 00001000 08:01 1234 /usr/bin/work\n"
	"55d0a1000000-55d0a1021000 rw-p 00000000 00:00 0 [heap]\n"
	"7f0000000000-7f0000100000 rw-p 00000000 00:00 0 \n"
	"7f1000000000-7f1000200000 r-xp 00000000 08:01 99 /usr/lib/x86_64-linux-gnu/libopenblas.so.0\n"
	"7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0 [stack]\n";

static const char *MAPS2 =
	"55d0a0000000-55d0a0001000 r-xp 00001000 08:01 1234 /usr/bin/work\n"
	"55d0a1000000-55d0a1021000 rw-p 00000000 00:00 0 [heap]\n"
	"7e0000000000-7e0000004000 rw-p 00000000 00:00 0 [anon:weights]\n"
	"7f0000000000-7f0000100000 rw-p 00000000 00:00 0 \n"
	"7f1000000000-7f1000200000 r-xp 00000000 08:01 99 /usr/lib/x86_64-linux-gnu/libopenblas.so.0\n"
	"7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0 [stack]\n";

static const struct mem_bin *bin(const struct mem_bins *b, unsigned pid, const char *name)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->v[i].pid == pid && !strcmp(b->v[i].mapping, name))
			return &b->v[i];
	return NULL;
}

int main(void)
{
	struct fake f = { MAPS1, 0 };
	struct mem_bins b;
	const struct mem_bin *x;

	mem_bins_init(&b, fake_read, &f);
	mem_bins_add(&b, 7, 0x55d0a1000010);
	mem_bins_add(&b, 7, 0x55d0a1020fff);
	mem_bins_add(&b, 7, 0x7f0000000000);
	mem_bins_add(&b, 7, 0x7f00000fffff);
	mem_bins_add(&b, 7, 0x7f1000000100);
	mem_bins_add(&b, 7, 0x7ffc00001000);
	check(f.reads == 1, "maps read once for addresses they hold (%d reads)", f.reads);
	x = bin(&b, 7, "[heap]");
	check(x && x->count == 2 && x->start == 0x55d0a1000000 && x->end == 0x55d0a1021000, "heap bin");
	check(x && x->addr_min == 0x55d0a1000010 && x->addr_max == 0x55d0a1020fff, "heap address range");
	x = bin(&b, 7, "[anon:7f0000000000-7f0000100000]");
	check(x && x->count == 2, "anonymous mapping named by its range, end exclusive");
	check(bin(&b, 7, "libopenblas.so.0") && bin(&b, 7, "libopenblas.so.0")->count == 1, "file mapping: base name");
	check(bin(&b, 7, "[stack]") != NULL, "stack bin");

	/* mapped after the first read: a miss reads the maps again */
	f.text = MAPS2;
	mem_bins_add(&b, 7, 0x7e0000003fff);
	x = bin(&b, 7, "[anon:weights]");
	check(x && x->count == 1 && f.reads == 2 && b.rereads == 1, "new mapping found by a re-read (%d reads)", f.reads);

	/* the process exits: its last maps stay in use */
	f.text = NULL;
	mem_bins_add(&b, 7, 0x7e0000000000);
	mem_bins_add(&b, 7, 0x100);	/* in no mapping */
	check(bin(&b, 7, "[anon:weights]")->count == 2, "maps kept after exit");
	x = bin(&b, 7, "[unmapped]");
	check(x && x->count == 1 && x->start == 0 && x->end == 0, "address in no mapping: [unmapped]");

	/* another process: its own bins */
	f.text = MAPS1;
	mem_bins_add(&b, 8, 0x55d0a1000010);
	check(bin(&b, 8, "[heap]")->count == 1 && bin(&b, 7, "[heap]")->count == 2, "bins per pid");
	mem_bins_sort(&b);
	for (size_t i = 1; i < b.n; i++)
		if (b.v[i].count > b.v[i - 1].count)
			check(0, "sorted by count");
	check(b.v[0].count == 2, "sorted: largest first");
	mem_bins_free(&b);
	return check_exit();
}
