// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <errno.h>
#include <limits.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/cli.h"
#include "collect/evsamples_loader.h"
#include "collect/samples_loader.h"
#include "lib/outfile.h"
#include "lib/parse.h"
#include "lib/text_fit.h"
#include "lib/version.h"
#include "lib/warn.h"
#include "model/thread_table.h"
#include "pmu/host.h"
#include "pmu/mem_event.h"
#include "sym/elf_read.h"

enum {
	OPT_JSON = 0x100, OPT_MAX_THREADS, OPT_MAX_PIDS, OPT_NO_INHERIT, OPT_TOP, OPT_QUIET,
	OPT_DRY_RUN, OPT_CPU, OPT_TMA, OPT_VERBOSE, OPT_UPROBE, OPT_MAX_RATE, OPT_MAX_STACKS, OPT_MAX_FUNCS,
	OPT_TRACE,
	OPT_BATCH,
	OPT_SAMPLE, OPT_FOLDED, OPT_FLAMEGRAPH, OPT_MAX_SAMPLE_STACKS, OPT_OFFCPU_STACKS, OPT_ROOFLINE, OPT_ROOFS, OPT_MEM_SAMPLES, OPT_MODE, OPT_MAX_EXITED,
	OPT_PER_CALL, OPT_SPIN, OPT_SAMPLE_EVENTS, OPT_PPROF,
	OPT_PROBE_AT,
	OPT_ITT, OPT_WIDTH,
	OPT_MAX_USER_SYMBOLS,
};

static const char *yes_no(int r)
{
	return r > 0 ? "yes" : r == 0 ? "no" : "error";
}

/* tmabpf --version: the build, the toolchains and the running kernel's BPF features */
static void version_print(FILE *f)
{
	struct utsname u = {};
	char why[200];

	uname(&u);
	fprintf(f, "tmabpf %s (git %s)\n", TMABPF_VERSION, version_git());
	fprintf(f, "  built with:  gcc %s; BPF: %s, CO-RE objects for %s\n", __VERSION__, version_bpf_cc(),
		version_bpf_arch());
	fprintf(f, "  libbpf:      %s (built against %d.%d)\n", version_libbpf(), LIBBPF_MAJOR_VERSION,
		LIBBPF_MINOR_VERSION);
	fprintf(f, "  kernel:      %s %s, BTF %s\n", u.release, u.machine,
		access("/sys/kernel/btf/vmlinux", R_OK) ? "missing (/sys/kernel/btf/vmlinux: CONFIG_DEBUG_INFO_BTF=y needed)"
							: "yes");
	if (host_check_privilege(why, sizeof(why)))
		fprintf(f, "  BPF probes:  not run (they need CAP_BPF: run as root)\n");
	else
		fprintf(f, "  BPF probes:  perf_event %s, raw_tracepoint (tp_btf) %s, kprobe (uprobes) %s, ringbuf %s\n",
			yes_no(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_PERF_EVENT, NULL)),
			yes_no(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_RAW_TRACEPOINT, NULL)),
			yes_no(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_KPROBE, NULL)),
			yes_no(libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL)));
	fprintf(f, "  needs:       kernel BTF and tp_btf (5.5); --uprobe: uprobe_multi links (6.6, else classic\n"
		   "               uprobes), uprobe sessions (6.13, else entry and return probes)\n");
}

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
	{ "max-user-symbols", required_argument, NULL, OPT_MAX_USER_SYMBOLS },
	{ "max-exited", required_argument, NULL, OPT_MAX_EXITED },
	{ "no-inherit", no_argument, NULL, OPT_NO_INHERIT },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "width", required_argument, NULL, OPT_WIDTH },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "cpu", required_argument, NULL, OPT_CPU },
	{ "tma", optional_argument, NULL, OPT_TMA },
	{ "verbose", no_argument, NULL, 'v' },
	{ "uprobe", required_argument, NULL, OPT_UPROBE },
	{ "itt", no_argument, NULL, OPT_ITT },
	{ "max-rate", required_argument, NULL, OPT_MAX_RATE },
	{ "probe-at", required_argument, NULL, OPT_PROBE_AT },
	{ "max-stacks", required_argument, NULL, OPT_MAX_STACKS },
	{ "max-funcs", required_argument, NULL, OPT_MAX_FUNCS },
	{ "trace", required_argument, NULL, OPT_TRACE },
	{ "sample", optional_argument, NULL, OPT_SAMPLE },
	{ "folded", required_argument, NULL, OPT_FOLDED },
	{ "flamegraph", required_argument, NULL, OPT_FLAMEGRAPH },
	{ "sample-events", optional_argument, NULL, OPT_SAMPLE_EVENTS },
	{ "pprof", required_argument, NULL, OPT_PPROF },
	{ "max-sample-stacks", required_argument, NULL, OPT_MAX_SAMPLE_STACKS },
	{ "offcpu-stacks", no_argument, NULL, OPT_OFFCPU_STACKS },
	{ "roofline", optional_argument, NULL, OPT_ROOFLINE },
	{ "roofs", required_argument, NULL, OPT_ROOFS },
	{ "mem-samples", optional_argument, NULL, OPT_MEM_SAMPLES },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "per-call", required_argument, NULL, OPT_PER_CALL },
	{ "spin", required_argument, NULL, OPT_SPIN },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{},
};

void cli_usage(FILE *f)
{
	fputs("usage: tmabpf [OPTIONS] [-p PID[,PID] | -t TID[,TID] | -a | -- COMMAND [ARGS...]]\n"
	      "       tmabpf daemon | analyze | diff | list | check | roofs [OPTIONS]   (each with --help)\n"
	      "Per-thread counters, on-CPU and off-CPU time and Top-Down analysis (TMA), from eBPF.\n"
	      "Target (default: -a):\n"
	      "  -p, --pid PID[,PID]    processes, and the threads they create later\n"
	      "  -t, --tid TID[,TID]    these threads only\n"
	      "  -a, --all-cpus         the whole system\n"
	      "  -- COMMAND [ARGS]      run COMMAND, stop at its exit and return its exit status\n"
	      "      --no-inherit       do not follow processes the target forks\n"
	      "  -d, --duration SEC     stop after SEC seconds\n"
	      "Counters and TMA:\n"
	      "  -e, --event E[,E]      counters: software (task-clock, page-faults, ...), cycles, instructions,\n"
	      "                         libpfm4 names, rHEX, pmu/event=..,umask=../ (default: the CPU's TMA\n"
	      "                         recipe; task-clock,page-faults without a PMU)\n"
	      "      --tma[=N]          Top-Down level 1-3 (default 1 on PMU hosts)\n"
	      "      --cpu NAME         use CPU NAME's TMA recipe ('tmabpf list' names them)\n"
	      "Per function (uprobes):\n"
	      "      --uprobe LIB:GLOB  calls, times, counter deltas of GLOB's functions in LIB (':GLOB': program)\n"
	      "      --itt              oneDNN primitives, OpenMP barriers, ... as rows: the ITT API's spans\n"
	      "      --max-rate N       detach a function called more than N times a second\n"
	      "      --probe-at WHERE   auto: past endbr64 where safe (one trap, not two); symbol: at the symbol\n"
	      "      --roofline[=SVG]   GEMM/GEMV calls' FLOPs, bytes and shapes from their arguments, with the\n"
	      "                         roofs of 'tmabpf roofs' (--roofs FILE) memory/compute-bound; SVG: chart\n"
	      "Per call (a decode loop's tokens):\n"
	      "      --per-call LIB:FUNC  per token (each outermost call of FUNC): time split, counters, calls\n"
	      "      --spin LIB:GLOB    more spin-wait functions (sampled or probed) for compute vs spin\n"
	      "Sampling:\n"
	      "      --sample[=HZ]      stack samples per CPU (default 49 Hz): every function, no uprobes\n"
	      "      --sample-events[=HZ]  every counter sampled, own period (100/s per CPU): per-function TMA\n"
	      "      --offcpu-stacks    off-CPU time per stack at switch-out, blocked vs runqueue\n"
	      "      --mem-samples[=SRC]  memory samples with data addresses (SRC: pmu, page-faults)\n"
	      "Output:\n"
	      "  -I, --interval MS      live view refresh / summary period (default 1000 on a terminal)\n"
	      "      --batch            plain-text summaries, never the live view\n"
	      "      --json FILE        the final report as JSON ('-': stdout)\n"
	      "      --trace FILE       Perfetto trace: counter/TMA tracks (also without --uprobe), function spans\n"
	      "      --folded FILE      folded stacks of --sample/--offcpu-stacks; --flamegraph SVG: the graph\n"
	      "      --pprof FILE       the samples as a gzipped pprof profile (go tool pprof, Pyroscope, Parca)\n"
	      "      --top N            rows per table (default 20)   --width N  text columns (terminal's, else 80)\n"
	      "      --quiet            no final text report, only errors on stderr (warnings: in the JSON)\n"
	      "      --mode OCTAL       files' permission bits (default 600); outputs replaced whole, no links\n"
	      "      --dry-run          print every perf_event_attr a run would open, and which open here\n"
	      "  -v, --verbose          libbpf's log (verifier output) on errors; the report's overhead line\n"
	      "Limits:\n"
	      "      --max-threads N    per-thread map (default 16384; overflow counted)  --max-pids N  (4096)\n"
	      "      --max-stacks N     --uprobe threads alive at once (default 1024, or what 32 MiB holds)\n"
	      "      --max-funcs N      --uprobe (function, thread) pairs (16384)  --max-user-symbols MIB  (20)\n"
	      "      --max-sample-stacks N  sampled (thread, stack) rows and stacks (default 16384)\n"
	      "      --max-exited N     exited threads kept one by one (default 16384), older ones folded, counted\n"
	      "  -h, --help, -V, --version\n"
	      "Examples:\n"
	      "  sudo tmabpf -p 1234                        live view of a process and its threads\n"
	      "  sudo tmabpf --uprobe 'libmkl_avx512.so:sgemm*' -- ./infer   per-function cost\n"
	      "  sudo tmabpf -d 10 --sample --json out.json  10 s system-wide, stacks, JSON report\n"
	      "  sudo tmabpf daemon                         always on: Prometheus /metrics on :9464\n"
	      "SIGINT/SIGTERM/SIGHUP stop profiling and write the report; with '-- COMMAND' it is passed on (unless\n"
	      "the terminal sent it to both); tmabpf waits 2 s for its exit status, else exits 128+signal.\n"
	      "Exit status: the command's with '-- COMMAND', else 0; 2 bad usage; 1 runtime error.\n"
	      "See tmabpf(8), tmabpf-daemon(8), tmabpf-analyze(1), tmabpf-diff(1), tmabpf-list(1), tmabpf-check(8),\n"
	      "tmabpf-roofs(8).\n",
	      f);
}

static int parse_int(const char *s, const char *what, long lo, long hi, int *out)
{
	return parse_int_at("", s, what, lo, hi, out);
}

static int parse_duration(const char *s, double *out)
{
	double v;

	if (!parse_decimal(s, &v) || !(v > 0) || v > 1e7) {
		err_print("bad duration '%s': expected decimal seconds in (0, 10000000], e.g. -d 10 or -d 0.5", s);
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
	target_init(&o->target);
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
	case OPT_MAX_USER_SYMBOLS: {
		int mib, r = parse_int(optarg, "--max-user-symbols (MiB)", 1, 1 << 20, &mib);

		if (!r)
			elf_read_set_others_max((uint64_t)mib << 20);
		return r;
	}
	case OPT_NO_INHERIT: o->follow_fork = false; return 0;
	case OPT_TOP: return parse_int(optarg, "--top", 1, 100000, &o->top);
	case OPT_WIDTH: return parse_int(optarg, "--width", TEXT_WIDTH_MIN, 10000, &o->width);
	case OPT_QUIET:
		o->quiet = true;
		warn_errors_only();	/* warnings stay in the JSON's "warnings" */
		return 0;
	case OPT_DRY_RUN: o->dry_run = true; return 0;
	case 'v': o->verbose = true; return 0;
	case OPT_ITT: o->itt = true; return 0;
	case OPT_UPROBE:
		if (o->nr_uprobe_specs >= 16) {
			err_print("too many --uprobe options (at most 16)");
			return EXIT_USAGE;
		}
		o->uprobe_specs[o->nr_uprobe_specs++] = optarg;
		return 0;
	case OPT_MAX_RATE: {
		if (!parse_decimal(optarg, &o->max_rate) || !(o->max_rate > 0)) {
			err_print("bad --max-rate '%s': expected calls per second > 0", optarg);
			return EXIT_USAGE;
		}
		return 0;
	}
	case OPT_PROBE_AT:
		if (strcmp(optarg, "auto") && strcmp(optarg, "symbol")) {
			err_print("bad --probe-at '%s': expected auto or symbol", optarg);
			return EXIT_USAGE;
		}
		o->probe_at_symbol = !strcmp(optarg, "symbol");
		return 0;
	case OPT_MAX_STACKS: return parse_int(optarg, "--max-stacks", 1, 1 << 20, &o->max_stacks);
	case OPT_MAX_FUNCS: return parse_int(optarg, "--max-funcs", 1, 1 << 22, &o->max_funcs);
	case OPT_TRACE: o->trace_path = optarg; return 0;
	case OPT_PER_CALL:
		if (!strchr(optarg, ':') || strchr(optarg, '*') || strchr(optarg, '?') || strchr(optarg, '[')) {
			err_print("bad --per-call '%s': expected LIB:FUNC, one function (e.g. libllama.so:llama_decode)",
				  optarg);
			return EXIT_USAGE;
		}
		o->per_call = optarg;
		return 0;
	case OPT_SPIN:
		if (o->nr_spin_specs >= 16 || !strchr(optarg, ':')) {
			err_print(o->nr_spin_specs >= 16 ? "too many --spin options (at most 16)"
							  : "bad --spin '%s': expected LIB:GLOB", optarg);
			return EXIT_USAGE;
		}
		o->spin_specs[o->nr_spin_specs++] = optarg;
		return 0;
	case OPT_SAMPLE:
		if (!optarg) {
			o->sample_hz = SAMPLE_DEFAULT_HZ;
			return 0;
		}
		return parse_int(optarg, "--sample rate (Hz)", 1, 100000, &o->sample_hz);
	case OPT_FOLDED: o->folded_path = optarg; return 0;
	case OPT_FLAMEGRAPH: o->flamegraph_path = optarg; return 0;
	case OPT_SAMPLE_EVENTS:
		if (!optarg) {
			o->sample_events_hz = EVSAMPLE_DEFAULT_HZ;
			return 0;
		}
		return parse_int(optarg, "--sample-events rate (Hz)", 1, 100000, &o->sample_events_hz);
	case OPT_PPROF: o->pprof_path = optarg; return 0;
	case OPT_OFFCPU_STACKS: o->offcpu_stacks = true; return 0;
	case OPT_ROOFLINE:
		o->roofline = true;
		o->roofline_svg = optarg;
		return 0;
	case OPT_ROOFS: o->roofs_path = optarg; return 0;
	case OPT_MEM_SAMPLES:
		o->mem_source = optarg ? optarg : "pmu";
		if (!mem_event_source_ok(o->mem_source)) {
			err_print("bad --mem-samples source '%s': expected pmu or page-faults", optarg);
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
	case 'V': version_print(stdout); return -1;
	default:
		fputs("tmabpf: error: unknown or incomplete option (see 'tmabpf --help')\n", stderr);
		return EXIT_USAGE;
	}
bad:
	err_print("%s", err);
	return EXIT_USAGE;
}

/* "--sample 99": an optional argument must be attached (--sample=99); getopt took 99 as the command.
 * Say so rather than try to run a program named 99. */
static bool optional_value_misplaced(const char *opt, const char *next)
{
	static const char *const opts[] = { "--sample", "--tma", "--mem-samples", "--sample-events" };
	bool number = next[0] && strspn(next, "0123456789") == strlen(next);

	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		if (strcmp(opt, opts[i]))
			continue;
		if (number || (i == 2 && mem_event_source_ok(next))) {
			err_print("%s %s: write the value as %s=%s (a separate '%s' would be run as the command; put "
				"commands after --)", opt, next, opt, next, next);
			return true;
		}
	}
	return false;
}

/* "-p 1 2": the second id was taken as the command to run.  Say how to write several. */
static bool ids_split(const struct options *o, char **argv)
{
	const struct target *t = &o->target;
	const pid_t *ids = t->nr_pids ? t->pids : t->tids;
	int n = t->nr_pids ? t->nr_pids : t->nr_tids;
	char list[512] = "";
	size_t len = 0;

	if (!n || !argv[0] || !argv[0][0] || strspn(argv[0], "0123456789") != strlen(argv[0]))
		return false;
	for (int i = 0; i < n && len < sizeof(list); i++)
		len += snprintf(list + len, sizeof(list) - len, "%d,", ids[i]);
	err_print("%s %.*s %s: use %s %s%s to name several %s (a separate '%s' would be run as the command; put "
		  "commands after --)", t->nr_pids ? "-p" : "-t", (int)strlen(list) - 1, list, argv[0],
		  t->nr_pids ? "-p" : "-t", list, argv[0], t->nr_pids ? "PIDs" : "TIDs", argv[0]);
	return true;
}

/* Do two output paths name one file ("out.json" and "./out.json" too)?  Then one output would
 * silently replace the other. */
static bool dir_and_base(const char *path, char *dir, const char **base)
{
	const char *slash = strrchr(path, '/');
	char d[PATH_MAX];

	*base = slash ? slash + 1 : path;
	snprintf(d, sizeof(d), "%.*s", !slash ? 1 : slash == path ? 1 : (int)(slash - path), slash ? path : ".");
	return realpath(d, dir) != NULL;
}

static bool same_output(const char *a, const char *b)
{
	char da[PATH_MAX], db[PATH_MAX];
	const char *ba, *bb;

	if (!strcmp(a, b))
		return true;
	return dir_and_base(a, da, &ba) && dir_and_base(b, db, &bb) && !strcmp(da, db) && !strcmp(ba, bb);
}

static int check_outputs(const struct options *o)
{
	const char *path[] = { o->json_path, o->trace_path, o->pprof_path, o->folded_path, o->flamegraph_path };
	static const char *const opt[] = { "--json", "--trace", "--pprof", "--folded", "--flamegraph" };

	for (int i = 0; i < 5; i++)
		for (int k = i + 1; k < 5; k++)
			if (path[i] && path[k] && same_output(path[i], path[k])) {
				err_print("%s %s and %s %s are one file: the second would replace the first; give "
					  "each output its own path", opt[i], path[i], opt[k], path[k]);
				return EXIT_USAGE;
			}
	return 0;
}

int cli_parse(int argc, char **argv, struct options *o)
{
	int c, r;

	defaults(o);
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:p:t:ad:e:I:hVv", long_opts, NULL)) != -1) {
		if (c == ':' || c == '?')
			return getopt_error(c, argv, "", "tmabpf --help", long_opts);
		if ((r = parse_one(c, o)))
			return r;
	}
	if (optind < argc && optind > 1 && strcmp(argv[optind - 1], "--") && optional_value_misplaced(argv[optind - 1],
												    argv[optind]))
		return EXIT_USAGE;
	if (optind == argc && optind > 1 && !strcmp(argv[optind - 1], "--")) {
		err_print("'--' needs a COMMAND after it (without one tmabpf would profile the whole system: "
			  "leave '--' out, or give -a)");
		return EXIT_USAGE;
	}
	if (optind < argc && strcmp(argv[optind - 1], "--") && ids_split(o, &argv[optind]))
		return EXIT_USAGE;
	if (optind < argc)
		o->target.argv = &argv[optind];
	if (!!o->target.argv + !!o->target.nr_pids + !!o->target.nr_tids + o->system_wide > 1) {
		err_print("choose one target: -p, -t, -a or -- COMMAND");
		return EXIT_USAGE;
	}
	if (!o->target.argv && !o->target.nr_pids && !o->target.nr_tids)
		o->system_wide = true;
	if (o->flamegraph_path && !o->sample_hz && !o->offcpu_stacks)
		o->sample_hz = SAMPLE_DEFAULT_HZ;	/* --flamegraph alone: the on-CPU graph, --sample's default rate */
	if (o->nr_spin_specs && !o->sample_hz && !o->nr_uprobe_specs) {
		err_print("--spin needs --sample or --uprobe (spin time is the share of a thread's samples in spin "
			  "functions, or the on-CPU time of probed ones)");
		return EXIT_USAGE;
	}
	if (o->folded_path && !o->sample_hz && !o->offcpu_stacks) {
		err_print("--folded FILE needs --sample or --offcpu-stacks (the stacks come from them)");
		return EXIT_USAGE;
	}
	if (o->pprof_path && !o->sample_hz && !o->sample_events_hz) {
		err_print("--pprof FILE needs --sample or --sample-events (the profile is their samples)");
		return EXIT_USAGE;
	}
	return check_outputs(o);
}
