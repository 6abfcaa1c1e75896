// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "collect/evsamples_loader.h"
#include "daemon/daemon_cli.h"
#include "daemon/daemon_http.h"
#include "lib/outfile.h"
#include "lib/parse.h"
#include "lib/warn.h"
#include "sym/elf_read.h"

enum {
	OPT_LISTEN = 0x200, OPT_MAX_OVERHEAD, OPT_SAMPLE_HZ, OPT_TOP_PROCS, OPT_TOP_THREADS, OPT_MAX_CGROUPS,
	OPT_EXPIRE, OPT_JSONL, OPT_CONFIG, OPT_UPROBE, OPT_MAX_THREADS, OPT_MAX_STACKS, OPT_MAX_FUNCS, OPT_CPU,
	OPT_TMA, OPT_VERBOSE, OPT_MIN_SHARE, OPT_NO_SAMPLE, OPT_MIN_SAMPLE_HZ, OPT_TOP_FUNCTIONS, OPT_ACCOUNTING,
	OPT_MODE, OPT_EVENTS_HZ, OPT_ITT, OPT_MAX_USER_SYMBOLS,
};

static const struct option long_opts[] = {
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "serve", required_argument, NULL, OPT_LISTEN },
	{ "interval", required_argument, NULL, 'I' },
	{ "max-overhead", required_argument, NULL, OPT_MAX_OVERHEAD },
	{ "sample-hz", required_argument, NULL, OPT_SAMPLE_HZ },
	{ "no-sample", no_argument, NULL, OPT_NO_SAMPLE },
	{ "min-sample-hz", required_argument, NULL, OPT_MIN_SAMPLE_HZ },
	{ "top-functions", required_argument, NULL, OPT_TOP_FUNCTIONS },
	{ "top-procs", required_argument, NULL, OPT_TOP_PROCS },
	{ "top-threads", required_argument, NULL, OPT_TOP_THREADS },
	{ "min-share", required_argument, NULL, OPT_MIN_SHARE },
	{ "accounting", required_argument, NULL, OPT_ACCOUNTING },
	{ "events-hz", required_argument, NULL, OPT_EVENTS_HZ },
	{ "max-cgroups", required_argument, NULL, OPT_MAX_CGROUPS },
	{ "expire", required_argument, NULL, OPT_EXPIRE },
	{ "jsonl", required_argument, NULL, OPT_JSONL },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "event", required_argument, NULL, 'e' },
	{ "uprobe", required_argument, NULL, OPT_UPROBE },
	{ "itt", no_argument, NULL, OPT_ITT },
	{ "max-threads", required_argument, NULL, OPT_MAX_THREADS },
	{ "max-user-symbols", required_argument, NULL, OPT_MAX_USER_SYMBOLS },
	{ "max-stacks", required_argument, NULL, OPT_MAX_STACKS },
	{ "max-funcs", required_argument, NULL, OPT_MAX_FUNCS },
	{ "cpu", required_argument, NULL, OPT_CPU },
	{ "tma", optional_argument, NULL, OPT_TMA },
	{ "duration", required_argument, NULL, 'd' },
	{ "verbose", no_argument, NULL, OPT_VERBOSE },
	{ "help", no_argument, NULL, 'h' },
	{},
};

void daemon_cli_usage(FILE *f)
{
	fputs("usage: tmabpf daemon [options]\n"
	      "System-wide, always-on accounting exported for Prometheus (GET /metrics).\n"
	      "  -l, --listen ADDR:PORT  where to serve (default " HTTP_DEFAULT_LISTEN "; [::1]:PORT for IPv6;\n"
	      "                          0.0.0.0:PORT exposes it to the network; port 0 picks a free one)\n"
	      "      --serve ADDR:PORT   same as --listen\n"
	      "  -I, --interval MS       drain the BPF maps and refresh the metrics every MS (default 1000)\n"
	      "      --max-overhead PCT  budget for tmabpf's BPF run time, in % of one CPU (default 1)\n"
	      "      --sample-hz HZ      system-wide sampling rate per CPU (cpu-clock; cycles with a PMU),\n"
	      "                          lowered by the budget to stay inside it (default 49; 0: off)\n"
	      "      --min-sample-hz HZ  lowest rate the budget may cut to (default 1)\n"
	      "      --no-sample         no sampling (same as --sample-hz 0)\n"
	      "      --top-functions N   (process, sampled leaf function) series (default 50; the rest:\n"
	      "                          module=symbol=\"[other]\")\n"
	      "      --top-procs N       processes with their own series (default 100; the rest are summed\n"
	      "                          per cgroup under comm=\"[other]\")\n"
	      "      --min-share PCT     on-CPU share of one CPU over an interval a process needs to get a\n"
	      "                          series of its own (default 0.5; short commands stay in [other])\n"
	      "      --top-threads N     threads with their own series (default 20)\n"
	      "      --max-cgroups N     cgroups with their own label (default 256; the rest: \"[other]\")\n"
	      "      --expire SEC        how long series of exited processes stay (default 60)\n"
	      "      --jsonl FILE        append one JSON snapshot per interval to FILE (created with --mode;\n"
	      "                          an existing FILE must be a regular file of root's with one link)\n"
	      "      --mode OCTAL        permission bits of a --jsonl file it creates (default 600)\n"
	      "      --config FILE       read options from FILE: 'key = value' lines, keys are the long\n"
	      "                          option names (listen, event, uprobe, ...); '#' comments; flags\n"
	      "                          given on the command line win, uprobe lines add up\n"
	      "      --accounting MODE   auto (default), tasks, sampled or switch: 'tasks' reads the kernel's\n"
	      "                          per-thread counts once per interval (nothing per context switch;\n"
	      "                          software events only), 'sampled' adds every event sampled with its\n"
	      "                          own period (estimates, any event, nothing per context switch),\n"
	      "                          'switch' accounts at every context switch (exact hardware deltas,\n"
	      "                          --uprobe); 'auto' takes tasks when it is exact, else sampled on\n"
	      "                          PMU hosts (switch with --uprobe or --itt)\n"
	      "      --events-hz HZ      sampled accounting: samples per second per CPU, all events\n"
	      "                          together (default 100)\n"
	      "  -e, --event E[,E]       counters (default: the TMA recipe on PMU hosts, else\n"
	      "                          task-clock,page-faults)\n"
	      "      --uprobe LIB:GLOB   per-function calls and time (repeatable)\n"
	      "      --itt               ITT spans (oneDNN primitives, OpenMP regions) as functions\n"
	      "                          'domain:task', of the processes started with\n"
	      "                          INTEL_LIBITTNOTIFY64 naming tmabpf's collector\n"
	      "      --max-threads N     size of the (LRU) per-thread map (default 16384)\n"
	      "      --max-user-symbols MIB  symbols of other users' files, all together (default 20)\n"
	      "      --max-stacks N, --max-funcs N, --cpu NAME, --tma[=N], --verbose  as for profiling runs\n"
	      "  -d, --duration SEC      stop after SEC seconds (default: until SIGTERM/SIGINT)\n"
	      "  -h, --help              this help\n"
	      "Exit status: 0 after SIGTERM/SIGINT or -d, 2 for bad usage, 1 for runtime errors.\n"
	      "See tmabpf-daemon(8).\n",
	      f);
}

/* "FILE:LINE: " while the config file's options are parsed, else "". */
static char where[320];
static const char *cfg_path;
static int cfg_line[DAEMON_MAX_CONFIG_ARGS + 1];

static int bad(const char *what, const char *v, const char *want)
{
	err_print("%sbad %s '%s': expected %s", where, what, v, want);
	return EXIT_USAGE;
}

static int parse_long(const char *s, const char *what, long lo, long hi, int *out)
{
	return parse_int_at(where, s, what, lo, hi, out);	/* where: the config file's line, if any */
}

static int parse_double(const char *s, const char *what, double lo, double hi, double *out)
{
	double v;

	if (!parse_decimal(s, &v) || !(v >= lo) || !(v <= hi)) {
		err_print("%sbad %s '%s': expected a decimal number in [%g, %g]", where, what, s, lo, hi);
		return EXIT_USAGE;
	}
	*out = v;
	return 0;
}

static void defaults(struct daemon_opts *d)
{
	memset(d, 0, sizeof(*d));
	d->run.max_threads = 16384;
	d->run.max_pids = 16;
	d->run.follow_fork = true;
	d->run.top = 20;
	d->run.max_stacks = 0;	/* uprobes_default_stacks() */
	d->run.max_funcs = 16384;
	d->run.quiet = true;
	d->run.system_wide = true;
	d->run.out_mode = OUTFILE_DEFAULT_MODE;
	target_init(&d->run.target);
	d->listen = HTTP_DEFAULT_LISTEN;
	d->interval_ms = 1000;
	d->events_hz = EVSAMPLE_DEFAULT_HZ;
	d->max_overhead_pct = 1.0;
	d->sample_hz = 49;
	d->min_sample_hz = 1;
	d->top_functions = 50;
	d->top_procs = 100;
	d->top_threads = 20;
	d->min_share_pct = 0.5;
	d->max_cgroups = 256;
	d->expire_s = 60;
}

static int parse_one(int c, const char *arg, struct daemon_opts *d)
{
	struct options *o = &d->run;

	switch (c) {
	case 'l':
	case OPT_LISTEN: {
		char err[256];
		struct sockaddr_storage ss;
		unsigned int len;

		if (daemon_http_parse_listen(arg, &ss, &len, err, sizeof(err))) {
			err_print("%s%s", where, err);
			return EXIT_USAGE;
		}
		d->listen = arg;
		return 0;
	}
	case 'I': return parse_long(arg, "--interval (ms)", 100, 3600000, &d->interval_ms);
	case OPT_MAX_OVERHEAD: {
		int r = parse_double(arg, "--max-overhead (% of one CPU)", 0, 100, &d->max_overhead_pct);

		if (!r && d->max_overhead_pct <= 0)
			return bad("--max-overhead", arg, "a percentage of one CPU > 0, e.g. 1 or 0.5");
		return r;
	}
	case OPT_SAMPLE_HZ: {
		int r = parse_double(arg, "--sample-hz", 0, 100000, &d->sample_hz);

		if (!r && d->sample_hz > 0 && d->sample_hz < 1)
			return bad("--sample-hz", arg, "0 (off) or a rate >= 1");
		return r;
	}
	case OPT_NO_SAMPLE: d->sample_hz = 0; return 0;
	case OPT_MIN_SAMPLE_HZ: return parse_double(arg, "--min-sample-hz", 0.1, 100000, &d->min_sample_hz);
	case OPT_TOP_FUNCTIONS: return parse_long(arg, "--top-functions", 0, 10000, &d->top_functions);
	case OPT_TOP_PROCS: return parse_long(arg, "--top-procs", 0, 100000, &d->top_procs);
	case OPT_TOP_THREADS: return parse_long(arg, "--top-threads", 0, 100000, &d->top_threads);
	case OPT_MIN_SHARE: return parse_double(arg, "--min-share (% of one CPU)", 0, 100, &d->min_share_pct);
	case OPT_MAX_CGROUPS: return parse_long(arg, "--max-cgroups", 1, 100000, &d->max_cgroups);
	case OPT_MAX_USER_SYMBOLS: {
		int mib, r = parse_long(arg, "--max-user-symbols (MiB)", 1, 1 << 20, &mib);

		if (!r)
			elf_read_set_others_max((uint64_t)mib << 20);
		return r;
	}
	case OPT_EXPIRE: return parse_double(arg, "--expire (s)", 1, 86400 * 7, &d->expire_s);
	case OPT_JSONL: d->jsonl_path = arg; return 0;
	case OPT_MODE: {
		char err[256];

		if (outfile_parse_mode(arg, &o->out_mode, err, sizeof(err))) {
			err_print("%s%s", where, err);
			return EXIT_USAGE;
		}
		return 0;
	}
	case OPT_ACCOUNTING:
		if (!strcmp(arg, "auto"))
			d->accounting = DAEMON_ACCT_AUTO;
		else if (!strcmp(arg, "tasks"))
			d->accounting = DAEMON_ACCT_TASKS;
		else if (!strcmp(arg, "switch"))
			d->accounting = DAEMON_ACCT_SWITCH;
		else if (!strcmp(arg, "sampled"))
			d->accounting = DAEMON_ACCT_SAMPLED;
		else
			return bad("--accounting", arg, "auto, tasks, sampled or switch");
		return 0;
	case OPT_EVENTS_HZ: return parse_long(arg, "--events-hz", 1, 100000, &d->events_hz);
	case OPT_CONFIG: return 0;	/* read before everything else */
	case 'e': o->events = arg; return 0;
	case OPT_UPROBE:
		if (o->nr_uprobe_specs >= 16) {
			err_print("%stoo many --uprobe options (at most 16)", where);
			return EXIT_USAGE;
		}
		o->uprobe_specs[o->nr_uprobe_specs++] = arg;
		return 0;
	case OPT_ITT: o->itt = true; return 0;
	case OPT_MAX_THREADS: return parse_long(arg, "--max-threads", 16, 1 << 22, &o->max_threads);
	case OPT_MAX_STACKS: return parse_long(arg, "--max-stacks", 1, 1 << 20, &o->max_stacks);
	case OPT_MAX_FUNCS: return parse_long(arg, "--max-funcs", 1, 1 << 22, &o->max_funcs);
	case OPT_CPU: o->cpu_name = arg; return 0;
	case OPT_TMA: return arg ? parse_long(arg, "--tma level", 1, 3, &o->tma_level) : (o->tma_level = 1, 0);
	case 'd': return parse_double(arg, "duration (s)", 0.001, 1e7, &o->duration_s);
	case OPT_VERBOSE: o->verbose = true; return 0;
	case 'h': daemon_cli_usage(stdout); return -1;
	default:
		err_print("%sunhandled option (see 'tmabpf daemon --help')", where);
		return EXIT_USAGE;
	}
}

static int getopt_pass(int argc, char **argv, struct daemon_opts *d, bool config)
{
	int c, r;

	optind = 0;	/* glibc: full re-initialisation */
	opterr = 0;
	where[0] = 0;
	while ((c = getopt_long(argc, argv, "+:l:I:e:d:h", long_opts, NULL)) != -1) {
		if (config)
			snprintf(where, sizeof(where), "%s:%d: ", cfg_path, cfg_line[optind - 1]);
		if (c == '?' || c == ':')
			return getopt_error(c, argv, where, "tmabpf daemon --help", long_opts);
		if ((r = parse_one(c, optarg, d)))
			return r;
	}
	where[0] = 0;
	if (optind < argc) {
		err_print("%sunexpected argument '%s': the daemon is system-wide (see 'tmabpf daemon --help')", where,
			argv[optind]);
		return EXIT_USAGE;
	}
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

/* An option's full name (getopt would take an abbreviation: a config key must be whole). */
static bool long_opt_named(const char *key)
{
	for (const struct option *o = long_opts; o->name; o++)
		if (!strcmp(o->name, key))
			return true;
	return false;
}

/* "key = value" lines into "--key=value" arguments. */
static int read_config(struct daemon_opts *d, const char *path, char **args, int *nargs)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);	/* a FIFO never blocks */
	char line[4096];
	int lineno = 0;
	struct stat st;
	FILE *f;

	if (fd < 0 || fstat(fd, &st)) {
		err_print("--config: cannot read '%s': %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return EXIT_USAGE;
	}
	if (!S_ISREG(st.st_mode)) {
		err_print("--config: '%s' is %s, expected a file of 'key = value' lines", path,
			S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
		close(fd);
		return EXIT_USAGE;
	}
	if (!(f = fdopen(fd, "r"))) {
		err_print("--config: cannot read '%s': %s", path, strerror(errno));
		close(fd);
		return EXIT_USAGE;
	}
	cfg_path = path;
	args[(*nargs)++] = "tmabpf-daemon-config";
	while (fgets(line, sizeof(line), f)) {
		char *s, *eq, *key, *val = NULL, *arg;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			err_print("%s:%d: line too long", path, lineno);
			goto fail;
		}
		s = trim(line);
		if (!*s || *s == '#')
			continue;
		eq = strchr(s, '=');
		if (eq) {
			*eq = 0;
			val = trim(eq + 1);
		}
		key = trim(s);
		if (!*key || !long_opt_named(key) || !strcmp(key, "config") || !strcmp(key, "help")) {
			err_print("%s:%d: expected 'key = value' with a long option name as key, got '%s'", path, lineno,
				key);
			goto fail;
		}
		if (*nargs >= DAEMON_MAX_CONFIG_ARGS - 1) {
			err_print("%s:%d: too many lines (at most %d)", path, lineno, DAEMON_MAX_CONFIG_ARGS - 2);
			goto fail;
		}
		if (asprintf(&arg, val ? "--%s=%s" : "--%s", key, val) < 0)
			goto fail;
		d->config_args[d->nr_config_args++] = arg;
		cfg_line[*nargs] = lineno;
		args[(*nargs)++] = arg;
	}
	if (ferror(f)) {
		err_print("--config: reading '%s': %s", path, strerror(errno));
		goto fail;
	}
	fclose(f);
	args[*nargs] = NULL;
	return 0;
fail:
	fclose(f);
	return EXIT_USAGE;
}

static const char *find_config(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--config") && i + 1 < argc)
			return argv[i + 1];
		if (!strncmp(argv[i], "--config=", 9))
			return argv[i] + 9;
	}
	return NULL;
}

int daemon_cli_parse(int argc, char **argv, struct daemon_opts *d)
{
	char *args[DAEMON_MAX_CONFIG_ARGS + 1];
	int nargs = 0, r;

	defaults(d);
	d->config_path = find_config(argc, argv);
	if (d->config_path) {
		if ((r = read_config(d, d->config_path, args, &nargs)))
			return r;
		if ((r = getopt_pass(nargs, args, d, true)))
			return r;
	}
	return getopt_pass(argc, argv, d, false);
}

void daemon_cli_free(struct daemon_opts *d)
{
	for (int i = 0; i < d->nr_config_args; i++)
		free(d->config_args[i]);
	d->nr_config_args = 0;
}
