// SPDX-License-Identifier: MIT
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "report.h"
#include "mem_event.h"
#include "outfile.h"
#include "samples_loader.h"
#include "warn.h"

enum {
	OPT_JSON = 0x100, OPT_MAX_THREADS, OPT_MAX_PIDS, OPT_NO_INHERIT, OPT_TOP, OPT_QUIET,
	OPT_DRY_RUN, OPT_CPU, OPT_TMA, OPT_VERBOSE, OPT_UPROBE, OPT_MAX_RATE, OPT_MAX_STACKS, OPT_MAX_FUNCS,
	OPT_TRACE,
	OPT_BATCH,
	OPT_SAMPLE, OPT_FOLDED, OPT_MAX_SAMPLE_STACKS, OPT_OFFCPU_STACKS, OPT_MEM_SAMPLES, OPT_MODE, OPT_MAX_EXITED,
};

static const struct option long_opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "duration", required_argument, NULL, 'd' },
	{ "event", required_argument, NULL, 'e' },
	{ "interval", required_argument, NULL, 'I' },
	{ "batch", no_argument, NULL, OPT_BATCH },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "max-threads", required_argument, NULL, OPT_MAX_THREADS },
	{ "max-pids", required_argument, NULL, OPT_MAX_PIDS },
	{ "max-exited", required_argument, NULL, OPT_MAX_EXITED },
	{ "no-inherit", no_argument, NULL, OPT_NO_INHERIT },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "cpu", required_argument, NULL, OPT_CPU },
	{ "tma", optional_argument, NULL, OPT_TMA },
	{ "verbose", no_argument, NULL, OPT_VERBOSE },
	{ "uprobe", required_argument, NULL, OPT_UPROBE },
	{ "max-rate", required_argument, NULL, OPT_MAX_RATE },
	{ "max-stacks", required_argument, NULL, OPT_MAX_STACKS },
	{ "max-funcs", required_argument, NULL, OPT_MAX_FUNCS },
	{ "trace", required_argument, NULL, OPT_TRACE },
	{ "sample", optional_argument, NULL, OPT_SAMPLE },
	{ "folded", required_argument, NULL, OPT_FOLDED },
	{ "max-sample-stacks", required_argument, NULL, OPT_MAX_SAMPLE_STACKS },
	{ "offcpu-stacks", no_argument, NULL, OPT_OFFCPU_STACKS },
	{ "mem-samples", optional_argument, NULL, OPT_MEM_SAMPLES },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{},
};

void cli_usage(FILE *f)
{
	fputs("usage: tmabpf [options] [-p PID | -t TID | -a | -- COMMAND [ARGS...]]\n"
	      "       tmabpf list [--cpu NAME]\n"
	      "       tmabpf analyze FILE.csv [--cpu NAME] [--json] [--tma=N]\n"
	      "       tmabpf daemon [--listen ADDR:PORT] [options]   (Prometheus /metrics; see 'tmabpf daemon --help')\n"
	      "       tmabpf diff BASE.json NEW.json [--fail-on BUDGETS]\n"
	      "Per-thread counters, on-CPU and off-CPU (blocked/runqueue) time, from eBPF.\n"
	      "  -p, --pid PID[,PID]   profile these processes (threads created later included)\n"
	      "  -t, --tid TID[,TID]   profile these threads only\n"
	      "  -a, --all-cpus        system-wide (the default when no target is given)\n"
	      "  -- COMMAND ARGS       run COMMAND, profile it, stop at its exit; its exit status is returned\n"
	      "  -d, --duration SEC    stop after SEC seconds\n"
	      "  -e, --event E[,E]     counters: page-faults, task-clock, cpu-clock, context-switches,\n"
	      "                        cpu-migrations, minor-faults, major-faults, msr/tsc/, cycles,\n"
	      "                        instructions, rHEX, pmu/event=..,umask=../, libpfm4 names\n"
	      "                        (default: the CPU's TMA recipe on PMU hosts, else task-clock,page-faults)\n"
	      "  -I, --interval MS     refresh the live view / print a top-style summary every MS ms\n"
	      "                        (live view when stdout is a terminal: every 1000 ms by default)\n"
	      "      --batch           plain-text summaries, never the live view (the format for scripts)\n"
	      "      --json FILE       write the final report as JSON ('-' for stdout)\n"
	      "      --top N           rows per table (default 20)\n"
	      "      --quiet           no final text report\n"
	      "      --max-threads N   size of the per-thread map (default 16384; overflow is counted)\n"
	      "      --max-pids N      size of the pid filter (default 4096)\n"
	      "      --max-exited N    exited threads kept one by one (default 16384): older ones are\n"
	      "                        folded into their process' sums, counted (memory stays bounded)\n"
	      "      --no-inherit      do not follow processes forked by the target\n"
	      "      --cpu NAME        use NAME's TMA recipe (skylake, skylakex, cascadelakex, icelakex,\n"
	      "                        sapphirerapids, amdzen4, amdzen5, neoverse-v1, neoverse-n2, neoverse-v2)\n"
	      "      --tma[=N]         TMA level 1-3 (default 1 on PMU hosts)\n"
	      "      --dry-run         print every perf_event_attr that would be opened; open nothing\n"
	      "      --uprobe LIB:GLOB per-function calls, wall/on-CPU/off-CPU time and counter deltas\n"
	      "                        (inclusive and self) of the functions matching GLOB in LIB; LIB is\n"
	      "                        a path, file name, SONAME, versioned-name prefix, or empty for the\n"
	      "                        main program (':main_loop'); repeatable\n"
	      "      --max-rate N      detach a probed function firing more than N calls/s (uprobes cost\n"
	      "                        ~1-10 us per hit)\n"
	      "      --max-stacks N    probed threads alive at once, each with its call stack (default:\n"
	      "                        1024, or fewer so that they fit in 32 MiB with many events)\n"
	      "      --max-funcs N     (function, thread) pairs (default 16384)\n"
	      "      --trace FILE      Perfetto/Chrome trace-event JSON (open in ui.perfetto.dev): per-thread\n"
	      "                        spans of the --uprobe functions, and per-process counter tracks\n"
	      "                        (on/off-CPU, counter rates, TMA) every -I interval (250 ms without\n"
	      "                        -I); without --uprobe it holds the counter tracks only\n"
	      "      --sample[=HZ]     sample stacks HZ times a second per CPU (default 49, low enough\n"
	      "                        to leave on): per-function samples, share and counter deltas,\n"
	      "                        statistical TMA, for every function, no uprobes (cpu-clock here,\n"
	      "                        cycles on hosts with a PMU); write the rate as --sample=HZ\n"
	      "      --folded FILE     with --sample/--offcpu-stacks: write the stacks as folded lines for\n"
	      "                        FlameGraph, inferno, speedscope ('-' for stdout); off-CPU lines\n"
	      "                        start with a [blocked]/[runqueue] frame, weights in microseconds\n"
	      "      --max-sample-stacks N  distinct (thread, stack) rows and stacks kept (default 16384)\n"
	      "      --offcpu-stacks   user and kernel stacks at switch-out: off-CPU time per stack,\n"
	      "                        blocked vs runqueue (like offcputime)\n"
	      "      --mem-samples[=SRC]  precise memory samples with data addresses: per-function\n"
	      "                        counts, addresses binned by mapping. SRC pmu (default: PEBS load\n"
	      "                        latency on Intel, IBS op on AMD) or page-faults (every page fault\n"
	      "                        and its address: a test/diagnostic source that needs no PMU)\n"
	      "      --mode OCTAL      permission bits of the files written (--json, --folded, --trace;\n"
	      "                        default 600). Outputs are never written through a link: an existing\n"
	      "                        path must be a regular file, and it is replaced when the file is\n"
	      "                        complete (a failed write leaves it as it was)\n"
	      "      --verbose         show libbpf's log (verifier output) on errors\n"
	      "  -h, --help, -V, --version\n"
	      "SIGINT/SIGTERM stop profiling at once and write the report; with '-- COMMAND' the signal is\n"
	      "passed on to the command (unless the terminal sent it to both, as Ctrl-C does), and tmabpf\n"
	      "waits up to 2 s for its exit status, else leaves it running and exits 128+signal.\n"
	      "Exit status: the command's for '-- COMMAND', 0 otherwise, 2 for bad usage, 1 for runtime errors.\n",
	      f);
}

int parse_int_at(const char *where, const char *s, const char *what, long lo, long hi, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		die_msg("%sbad %s '%s': expected an integer in [%ld, %ld]", where, what, s, lo, hi);
		return EXIT_USAGE;
	}
	*out = (int)v;
	return 0;
}

int cli_getopt_error(int c, char **argv, const char *where, const char *help)
{
	const char *arg = argv[optind - 1];
	bool is_long = !strncmp(arg, "--", 2);
	int len = is_long ? (int)strcspn(arg, "=") : 2;
	char shrt[3] = { '-', (char)optopt, 0 };

	if (!is_long && (optopt <= 0 || optopt >= 0x100))
		shrt[1] = '?';
	if (!is_long)
		arg = shrt;
	if (c == ':')
		die_msg("%soption '%.*s' needs a value (see '%s')", where, len, arg, help);
	else if (is_long && optopt)
		die_msg("%soption '%.*s' takes no value (see '%s')", where, len, arg, help);
	else
		die_msg("%sunknown option '%.*s' (see '%s')", where, is_long ? (int)strlen(arg) : len, arg, help);
	return EXIT_USAGE;
}

static int parse_int(const char *s, const char *what, long lo, long hi, int *out)
{
	return parse_int_at("", s, what, lo, hi, out);
}

static int parse_duration(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || v > 1e7) {
		die_msg("bad duration '%s': expected seconds in (0, 10000000], e.g. -d 10 or -d 0.5", s);
		return EXIT_USAGE;
	}
	*out = v;
	return 0;
}

static void defaults(struct options *o)
{
	memset(o, 0, sizeof(*o));
	o->max_threads = 16384;
	o->max_pids = 4096;
	o->max_exited = THREAD_TABLE_MAX_EXITED;
	o->follow_fork = true;
	o->top = 20;
	o->max_stacks = 0;	/* uprobes_default_stacks() */
	o->max_funcs = 16384;
	o->max_sample_stacks = 16384;
	o->target.go_fd = -1;
	o->target.exec_err_fd = -1;
	for (int i = 0; i < TARGET_MAX_IDS; i++)
		o->target.pidfds[i] = -1;
	o->out_mode = OUTFILE_DEFAULT_MODE;
}

static int parse_one(int c, struct options *o)
{
	char err[256];

	switch (c) {
	case 'p':
		if (target_parse_ids(optarg, o->target.pids, &o->target.nr_pids, err, sizeof(err)))
			goto bad;
		return 0;
	case 't':
		if (target_parse_ids(optarg, o->target.tids, &o->target.nr_tids, err, sizeof(err)))
			goto bad;
		return 0;
	case 'a': o->system_wide = true; return 0;
	case 'd': return parse_duration(optarg, &o->duration_s);
	case 'e': o->events = optarg; return 0;
	case 'I': return parse_int(optarg, "interval (ms)", 10, 3600000, &o->interval_ms);
	case OPT_JSON: o->json_path = optarg; return 0;
	case OPT_BATCH: o->batch = true; return 0;
	case OPT_MAX_THREADS: return parse_int(optarg, "--max-threads", 16, 1 << 22, &o->max_threads);
	case OPT_MAX_PIDS: return parse_int(optarg, "--max-pids", 1, 1 << 20, &o->max_pids);
	case OPT_MAX_EXITED: return parse_int(optarg, "--max-exited", 1, 1 << 24, &o->max_exited);
	case OPT_NO_INHERIT: o->follow_fork = false; return 0;
	case OPT_TOP: return parse_int(optarg, "--top", 1, 100000, &o->top);
	case OPT_QUIET: o->quiet = true; return 0;
	case OPT_DRY_RUN: o->dry_run = true; return 0;
	case OPT_VERBOSE: o->verbose = true; return 0;
	case OPT_UPROBE:
		if (o->nr_uprobe_specs >= 16) {
			die_msg("too many --uprobe options (at most 16)");
			return EXIT_USAGE;
		}
		o->uprobe_specs[o->nr_uprobe_specs++] = optarg;
		return 0;
	case OPT_MAX_RATE: {
		char *end;

		o->max_rate = strtod(optarg, &end);
		if (*end || end == optarg || !(o->max_rate > 0)) {
			die_msg("bad --max-rate '%s': expected calls per second > 0", optarg);
			return EXIT_USAGE;
		}
		return 0;
	}
	case OPT_MAX_STACKS: return parse_int(optarg, "--max-stacks", 1, 1 << 20, &o->max_stacks);
	case OPT_MAX_FUNCS: return parse_int(optarg, "--max-funcs", 1, 1 << 22, &o->max_funcs);
	case OPT_TRACE: o->trace_path = optarg; return 0;
	case OPT_SAMPLE:
		if (!optarg) {
			o->sample_hz = SAMPLE_DEFAULT_HZ;
			return 0;
		}
		return parse_int(optarg, "--sample rate (Hz)", 1, 100000, &o->sample_hz);
	case OPT_FOLDED: o->folded_path = optarg; return 0;
	case OPT_OFFCPU_STACKS: o->offcpu_stacks = true; return 0;
	case OPT_MEM_SAMPLES:
		o->mem_source = optarg ? optarg : "pmu";
		if (!mem_event_source_ok(o->mem_source)) {
			die_msg("bad --mem-samples source '%s': expected pmu or page-faults", optarg);
			return EXIT_USAGE;
		}
		return 0;
	case OPT_MAX_SAMPLE_STACKS: return parse_int(optarg, "--max-sample-stacks", 16, 1 << 22, &o->max_sample_stacks);
	case OPT_CPU: o->cpu_name = optarg; return 0;
	case OPT_MODE:
		if (outfile_parse_mode(optarg, &o->out_mode, err, sizeof(err)))
			goto bad;
		return 0;
	case OPT_TMA:
		if (!optarg) {
			o->tma_level = 1;
			return 0;
		}
		return parse_int(optarg, "--tma level", 1, 3, &o->tma_level);
	case 'h': cli_usage(stdout); return -1;
	case 'V': printf("tmabpf %s\n", TMABPF_VERSION); return -1;
	default:
		fputs("tmabpf: error: unknown or incomplete option (see 'tmabpf --help')\n", stderr);
		return EXIT_USAGE;
	}
bad:
	die_msg("%s", err);
	return EXIT_USAGE;
}

int cli_parse(int argc, char **argv, struct options *o)
{
	int c, r;

	defaults(o);
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:p:t:ad:e:I:hV", long_opts, NULL)) != -1) {
		if (c == ':' || c == '?')
			return cli_getopt_error(c, argv, "", "tmabpf --help");
		if ((r = parse_one(c, o)))
			return r;
	}
	if (optind < argc)
		o->target.argv = &argv[optind];
	if (!!o->target.argv + !!o->target.nr_pids + !!o->target.nr_tids + o->system_wide > 1) {
		die_msg("choose one target: -p, -t, -a or -- COMMAND");
		return EXIT_USAGE;
	}
	if (!o->target.argv && !o->target.nr_pids && !o->target.nr_tids)
		o->system_wide = true;
	if (o->folded_path && !o->sample_hz && !o->offcpu_stacks) {
		die_msg("--folded FILE needs --sample or --offcpu-stacks (the stacks come from them)");
		return EXIT_USAGE;
	}
	return 0;
}
