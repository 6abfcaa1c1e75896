// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The profile model's bounds (model/profile.h): equal (stack, labels) add up;
 * past max_samples a process's further stacks add up in its own "[more
 * stacks]" sample, and past PROFILE_MORE of those, in one sample for every
 * further process, so that a fork-heavy host cannot grow a profile without
 * end; every value is still counted.
 */
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "model/profile.h"

static const char *const type[] = { "samples", "cpu" }, *const unit[] = { "count", "nanoseconds" };

static void add(struct profile *p, uint32_t pid, uint32_t tid, uint64_t addr)
{
	struct profile_frame f = { .addr = addr, .si = { .module = "libx.so", .name = "fn" } };
	struct profile_labels l = { .pid = pid, .tid = tid, .comm = "w" };
	long long v[2] = { 1, 1000 };

	profile_add(p, &f, 1, v, &l);
}

static long long total(const struct profile *p, int t)
{
	long long n = 0;

	for (size_t i = 0; i < p->nsamples; i++)
		n += p->samples[i].values[t];
	return n;
}

static size_t with_comm(const struct profile *p, const char *comm)
{
	size_t n = 0;

	for (size_t i = 0; i < p->nsamples; i++)
		n += p->samples[i].comm > 0 && !strcmp(p->str[p->samples[i].comm], comm);
	return n;
}

int main(void)
{
	struct profile p;
	const size_t max = 64;
	long long added = 0;

	check(profile_init(&p, 2, type, unit, max) == 0, "init");
	for (int k = 0; k < 3; k++)
		add(&p, 1, 1, 0x1000), added++;
	check(p.nsamples == 1 && p.samples[0].values[0] == 3, "equal stacks and labels add up (%zu samples)",
	      p.nsamples);
	/* a fork-heavy host: 5,000 processes of 4 threads, each a few stacks of its own */
	for (uint32_t pid = 100; pid < 5100; pid++)
		for (uint32_t tid = 0; tid < 4; tid++)
			for (uint64_t a = 0; a < 3; a++)
				add(&p, pid, pid * 8 + tid, 0x2000 + a), added++;
	check(p.nsamples <= max + PROFILE_MORE(max) + 1, "bounded: %zu samples for max %zu", p.nsamples, max);
	check(total(&p, 0) == added && total(&p, 1) == added * 1000, "every value counted (%lld of %lld)",
	      total(&p, 0), added);
	check(with_comm(&p, "[more processes]") == 1, "one sample for the processes past the bound");
	/* before the bound: pid 1's stack (3 adds) and max - 1 distinct ones */
	check(p.truncated == (unsigned long long)(added - 3 - (long long)(max - 1)),
	      "truncated counts what went to [more stacks] (%llu)", p.truncated);
	{
		size_t per_proc = 0;

		for (size_t i = 0; i < p.nsamples; i++)
			per_proc += p.samples[i].l.tid == 0 && p.samples[i].l.pid != 0 && p.samples[i].nlocs == 1 &&
				    p.samples[i].locs[0] && i >= max;
		check(per_proc == PROFILE_MORE(max), "%zu per-process [more stacks] samples, no thread label",
		      per_proc);
	}
	profile_free(&p);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
