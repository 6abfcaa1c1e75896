// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * tmabpf roofs [--show] [--file PATH] [--repeats N] [--seconds S] [--one-thread] [--only LIST]:
 * measure this host's roofs with likwid-bench and keep them (pmu/roofs.h), or
 * print the kept ones.  Exit status: 0; 1 when there are none to show or a
 * measurement failed; 2 for bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cmd/cmd_roofs.h"
#include "lib/parse.h"
#include "lib/text_fit.h"
#include "lib/units.h"
#include "lib/warn.h"
#include "pmu/roofs.h"
#include "pmu/roofs_likwid.h"

#define ROOFS_HELP \
	"usage: tmabpf roofs [--show] [--file PATH] [--repeats N] [--seconds S] [--one-thread] [--only LIST]\n" \
	"Measure this host's roofs with likwid-bench (peak fp32/fp64 FLOP/s; read, triad and copy\n" \
	"bandwidth for L1, L2, L3 and DRAM working sets; 1 thread and every online CPU), each the\n" \
	"median of N repeats (default 3) with its spread, and keep them in PATH (default\n" \
	ROOFS_DEFAULT_PATH ") for the roofline.  --only measures some figures (read-DRAM,peak-fp32).\n" \
	"--show prints the kept roofs.  See tmabpf-roofs(8).\n"

static void cell(const struct roof_figure *f, const char *unit, int *noisy)
{
	char v[32], s[48];
	double sp = roof_spread(f);

	if (!f->valid) {
		printf("  %-22s", "-");
		return;
	}
	units_si(v, sizeof(v), f->median, " ");
	snprintf(s, sizeof(s), "%s%s %4.1f%%%s", v, unit, sp * 100, sp > ROOFS_SPREAD_WARN ? "!" : "");
	if (sp > ROOFS_SPREAD_WARN)
		(*noisy)++;
	printf("  %-22s", s);
}

static void print_roofs(const struct roofs *r)
{
	char when[64], all[32];
	time_t t = (time_t)r->measured_at;
	struct tm tm;
	int noisy = 0, reps = 0, width = text_width(stdout, 0);

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", gmtime_r(&t, &tm));
	for (int p = 0; p < ROOF__PRECS; p++)
		if (r->flops[p][ROOF_ONE].valid)
			reps = r->flops[p][ROOF_ONE].repeats;
	text_wrapf(stdout, width, 2, "roofs of %s (%s, %d CPUs, microcode %s, kernel %s)", r->host.cpu, r->host.isa,
		   r->host.cpus, r->host.microcode[0] ? r->host.microcode : "?", r->host.kernel);
	text_wrapf(stdout, width, 2, "measured %s with likwid-bench, median of %d repeats (then the spread: "
		   "(max-min)/median)", when, reps);
	snprintf(all, sizeof(all), "%d threads", r->threads[ROOF_ALL]);
	printf("%-18s  %-22s  %-22s\n", "", "1 thread", r->threads[ROOF_ALL] > 1 ? all : "");
	for (int p = 0; p < ROOF__PRECS; p++) {
		printf("%-18s", p == ROOF_SP ? "peak fp32" : "peak fp64");
		for (int th = 0; th < ROOF__THREADS; th++)
			cell(&r->flops[p][th], "FLOP/s", &noisy);
		putchar('\n');
	}
	for (int b = 0; b < ROOF__BWS; b++)
		for (int l = 0; l < ROOF__LEVELS; l++) {
			char name[32];

			if (!r->bw[b][l][ROOF_ONE].valid && !r->bw[b][l][ROOF_ALL].valid)
				continue;
			snprintf(name, sizeof(name), "%s %s", roof_bw_name(b), roof_level_name(l));
			printf("%-18s", name);
			for (int th = 0; th < ROOF__THREADS; th++)
				cell(&r->bw[b][l][th], "B/s", &noisy);
			putchar('\n');
		}
	if (noisy)
		warn_add("%d roof figure%s varied by more than %.0f %% over the repeats (marked '!'): a busy host? "
			 "measure again when it is idle",
			 noisy, noisy > 1 ? "s" : "", ROOFS_SPREAD_WARN * 100);
}

static void progress(const char *what, const struct roof_figure *f, void *arg)
{
	bool *quiet = arg;

	if (*quiet)
		return;
	if (!f)
		fprintf(stderr, "roofs: %s ...", what);
	else
		fprintf(stderr, " %.4g (spread %.1f %%)\n", f->median, roof_spread(f) * 100);
}

int cmd_roofs(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "show", no_argument, NULL, 's' },	     { "file", required_argument, NULL, 'f' },
		{ "repeats", required_argument, NULL, 'r' }, { "seconds", required_argument, NULL, 'S' },
		{ "one-thread", no_argument, NULL, '1' },    { "quiet", no_argument, NULL, 'q' },
		{ "only", required_argument, NULL, 'o' },    { "help", no_argument, NULL, 'h' },
		{},
	};
	struct roofs_measure_opts mo = { .repeats = 3, .seconds = 1.0, .progress = progress };
	const char *path = ROOFS_DEFAULT_PATH;
	struct roof_host now;
	struct roofs r;
	bool show = false, quiet = false;
	char err[512], *end;
	int c, e;

	optind = 0;
	while ((c = getopt_long(argc, argv, "+:hq", opts, NULL)) != -1) {
		switch (c) {
		case 's': show = true; break;
		case 'f': path = optarg; break;
		case 'q': quiet = true; break;
		case '1': mo.skip_all_threads = true; break;
		case 'o':
			if (!roofs_only_valid(optarg, err, sizeof(err))) {
				err_print("roofs: --only: no figure '%s' (names: peak-fp32, peak-fp64, "
					  "{read,triad,copy}-{L1,L2,L3,DRAM})", err);
				return EXIT_USAGE;
			}
			mo.only = optarg;
			break;
		case 'r':
			if (parse_int_at("roofs: ", optarg, "--repeats", 1, 50, &mo.repeats))
				return EXIT_USAGE;
			break;
		case 'S':
			mo.seconds = strtod(optarg, &end);
			if (end == optarg || *end || !(mo.seconds >= 0.05 && mo.seconds <= 60)) {
				err_print("roofs: --seconds '%s': a number of seconds from 0.05 to 60", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h': fputs(ROOFS_HELP, stdout); return 0;
		default: return getopt_error(c, argv, "roofs: ", "tmabpf roofs --help", opts);
		}
	}
	if (optind < argc) {
		err_print("roofs: unexpected argument '%s' (usage: tmabpf roofs [--show] [--file PATH] ...)", argv[optind]);
		return EXIT_USAGE;
	}
	roofs_host_now(&now);
	if (show) {
		e = roofs_load(&r, path, &now, err, sizeof(err));
		if (e == -ENOENT) {
			err_print("no roofs measured on this host (%s): run 'sudo tmabpf roofs'", path);
			return 1;
		}
		if (e) {
			err_print("%s", err);
			return 1;
		}
		print_roofs(&r);
		return 0;
	}
	memset(&r, 0, sizeof(r));
	r.host = now;
	r.measured_at = (int64_t)time(NULL);
	mo.arg = &quiet;
	e = roofs_measure(&r, &mo, err, sizeof(err));
	if (e) {
		if (!quiet)
			fputc('\n', stderr);
		err_print("roofs: %s", err);
		return 1;
	}
	e = roofs_save(&r, path, err, sizeof(err));
	if (e) {
		err_print("roofs: %s", err);
		return 1;
	}
	print_roofs(&r);
	if (!quiet)
		fprintf(stderr, "roofs: kept in %s ('tmabpf roofs --show' prints them)\n", path);
	return 0;
}
