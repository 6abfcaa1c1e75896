/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The content of the top-style views, whatever shows it: a header, tables
 * (threads, functions, processes, events) of numeric cells with column
 * priorities for narrow terminals, sorting and filtering, and the drill-down
 * text of one row.  Two back ends show it: report_text.c (the -I / --batch /
 * non-tty summaries and the final text report) and view_curses.c (the live
 * view).  Neither computes anything the other does not.
 */
#ifndef TMABPF_VIEW_MODEL_H
#define TMABPF_VIEW_MODEL_H
#include <stdbool.h>
#include <stddef.h>
#include "lib/u64map.h"
#include "model/func_sums.h"
#include "model/report.h"

enum vm_kind { VM_THREADS, VM_FUNCS, VM_PROCS, VM_EVENTS, VM_NKINDS };

/* How a cell is shown; the cell's number is also its sort key. */
enum vm_fmt {
	VM_F_STR,	/* the row's string arg (comm, symbol, event name, PMU) */
	VM_F_ID,	/* pid/tid; '-' when negative */
	VM_F_INT,	/* a count */
	VM_F_PCT,	/* percent, one decimal */
	VM_F_MS,	/* milliseconds, two decimals */
	VM_F_RATIO,	/* a ratio, three decimals (CPUs utilized) */
	VM_F_RATE,	/* per second */
	VM_F_COUNTER,	/* counter arg, multiplex-scaled; '*' when scaled */
	VM_F_HEX,	/* event config */
	VM_F_CHAR,	/* one character (function source: u/s) */
	VM_F_BAR,	/* TMA level-1 stacked bar; sorts by Backend_Bound */
	VM_F_NODE,	/* TMA dominant level-2 node; sorts by its value */
	VM_F_STATE,	/* on-CPU/runqueue/blocked meter of the row's ONCPU%, RUNQ%, BLOCK% cells (arg: the ONCPU%
			 * column); sorts by ONCPU% */
};

#define VM_MAX_COLS (16 + TMABPF_MAX_EVENTS)
#define VM_MAX_STRS 2
#define VIEW_TOKENS 32		/* --per-call: the last tokens the live views show */

struct vm_col {
	char name[24];		/* header */
	enum vm_fmt fmt;
	int width;		/* plain-text width (the batch format) */
	int cwidth;		/* compact width (live view) */
	int prio;		/* 1: always shown; the highest numbers go first on narrow terminals */
	int arg;		/* string index (VM_F_STR) or event index (VM_F_COUNTER) */
	bool left;		/* left-aligned */
	bool stretch;		/* a name column (FUNCTION, COMM): takes the spare width of the terminal, and a
				 * longer name is shortened in the middle (cxx_name.h, text_fit.h), never cut */
	bool ns;		/* a counter of nanoseconds (task-clock, cpu-clock): shown as a time */
	int key;		/* what it shows (view_model.c's own enum) */
};

/* TMA level 1 (frontend, bad speculation, backend, retiring) and the dominant
 * level-2 node (the second step of the bottleneck path) of one set of sums. */
enum { VM_FE, VM_BS, VM_BE, VM_RE, VM_TMA_L1 };
struct vm_tma {
	bool ok;
	double l1[VM_TMA_L1];	/* percent; NaN when not computed */
	char l2[32];		/* label, "" when none */
	double l2_value;
};

struct vm_row {
	double v[VM_MAX_COLS];	/* numeric cells, sort keys (NaN: n/a, sorts last) */
	const char *s[VM_MAX_STRS];	/* string cells */
	unsigned int mux;	/* bit e: counter e ran part of the time and was scaled */
	char src;		/* functions: 'u' uprobes, 's' samples; else 0 */
	unsigned int pid;
	long long tid;		/* -1 on process and per-process function rows */
	int id;			/* function id (functions), event index (events), else -1 */
	size_t data;		/* index into the view's interval data of this kind (sampled functions: sd.funcs) */
	bool tma_done;		/* tma (and the TMA cells) computed: see view_tma_rows() */
	struct vm_tma tma;
};

struct vm_table {
	enum vm_kind kind;
	const char *title;	/* "threads", "functions", "processes", "events" */
	int ncols;
	struct vm_col col[VM_MAX_COLS];
	struct vm_row *rows;	/* after the filter, sorted */
	size_t nrows, cap;
	size_t total;		/* rows before the filter */
	int sort_col;		/* -1: natural order */
	bool reverse;
};

struct vm_header {
	char target[256];
	double elapsed_s;
	double period_s;	/* what the tables cover */
	const char *cpu;	/* CPU model */
	const char *recipe;	/* TMA recipe, NULL when none */
	bool pmu;
	int tma_level;		/* 0: TMA off */
	char tma_why[320];	/* why TMA is off */
	struct vm_tma tma;	/* all shown threads together */
	double mux_pct;		/* share of enabled counter time the counters were not running */
	bool bpf_stats;		/* kernel BPF run-time stats on */
	double bpf_cpu_pct;	/* BPF run time, percent of one CPU */
	double bpf_hits_per_s;	/* BPF program runs (switches, probes, samples) per second */
	double bpf_ns_per_switch;
	double self_cpu_pct;	/* tmabpf's own user+system time, percent of one CPU (setup left out) */
	double setup_cpu_ms;	/* whole run: its user+system time before the run began (load, attach) */
	unsigned long long map_full;	/* threads/pids/stacks/functions maps full */
	unsigned long long lost;	/* exited threads' sums lost (ring buffer full) */
	unsigned long long read_errors;	/* counter reads that failed in BPF */
	size_t threads_live, threads_seen;
	int nfuncs;		/* probed functions */
	int nlibs;
	double uprobe_ns_per_hit;
	const char *sample_event;	/* --sample: sampling event; NULL when off */
	int sample_hz;
	unsigned long long samples;	/* samples of tracked threads in the period */
};

/* Row ids of sampled functions: VM_SAMPLED_ID0 + their index in view.snames
 * (stable across refreshes); uprobed functions' ids are their index in the uprobe set. */
#define VM_SAMPLED_ID0 (1 << 24)

/* Per-interval data the rows index into. */
struct vm_proc {
	struct thread_stats d;	/* sums of its threads over the period */
	unsigned int nthreads;
};

struct view {
	int top;			/* rows per table in the text back end */
	int width;			/* the text back end's --width; 0: its terminal's, else 80 */
	bool verbose;			/* -v: the text header's overhead line always */
	const struct report *r;
	struct vm_header hdr;
	struct vm_table tab[VM_NKINDS];
	char filter[64];		/* comm/symbol substring, or a pid/tid */
	bool whole_run;			/* tables cover the whole run (final report) */
	bool live;			/* the live view shows the tables: the STATE meters too */
	/* this period */
	struct thread_stats *td;	/* thread deltas */
	size_t ntd;
	struct vm_proc *pd;
	size_t npd;
	struct func_sum *fd;		/* function deltas per (function, pid) */
	size_t nfd;
	struct func_sum *ftd;		/* ... and per (function, thread), sorted by cmp (fn, pid, tid) */
	size_t nftd;
	struct sample_result sd;	/* sampled functions' new samples (--sample): per (function, pid),
					 * then per (function, thread) rows; see sample_funcs_since() */
	struct thread_stats total;	/* all threads over the period */
	struct thread_stats run_total;	/* all threads over the whole run */
	/* state at the previous update */
	struct thread_stats *prev;	/* every thread's sums (open slices included), sorted by thread_stats_cmp */
	size_t nprev;
	struct func_sum *fprev;		/* per (function, thread) sums, sorted */
	size_t nfprev;
	struct sample_func *sprev;	/* the previous sampling snapshot's per-thread rows */
	size_t nsprev;
	struct u64map sids;		/* sampled function (module, symbol) -> 1 + index in snames */
	struct vm_sname { const char *module, *symbol; } *snames;
	size_t nsnames;
	unsigned long long prev_ns;	/* run time */
	unsigned long long prev_bpf_ns, prev_bpf_cnt, prev_switch_ns, prev_switch_cnt;
	unsigned long long prev_self_ns;	/* own user+system time */
	bool updated;			/* at least one update */
	/* the live view's open details of a function row (pid, tid, id): kept in the functions table
	 * in a period it was not called in, at 0, where other such rows are left out */
	bool pinned;
	unsigned int pin_pid;
	long long pin_tid;
	int pin_id;
};

void view_init(struct view *v, int top);
/* Before the first update: the header's fixed fields, empty tables. */
void view_start(struct view *v, const struct report *r);
void view_free(struct view *v);
/* A new interval: deltas since the previous update, with each live thread's
 * open slice (time since its last switch, on or off CPU) counted up to the
 * refresh, so a thread that runs or sleeps across intervals shows steadily. */
void view_update(struct view *v, const struct report *r);
/* The whole run (final report): sums since the start, as the JSON report has them. */
void view_whole_run(struct view *v, const struct report *r);
/* Rebuild the tables (filter, sort) from the current period's data. */
void view_build(struct view *v);
void view_set_filter(struct view *v, const char *filter);
/* TMA of rows [first, first + n) of table k, for the rows a back end shows:
 * a warm tma_compute() runs the recipe's compiled formulas (about 12 us on the
 * skylakex recipe at level 3), still worth skipping for rows nobody sees.
 * Sorting by a TMA column computes all rows. */
void view_tma_rows(struct view *v, enum vm_kind k, size_t first, size_t n);
/* Sort table k by column col (-1: natural order); reverse flips it. */
void view_set_sort(struct view *v, enum vm_kind k, int col, bool reverse);

/* The column named name, or -1. */
int view_col_of(const struct vm_table *t, const char *name);
/* A column's width: plain text, or compact (live view; never narrower than its name). */
int view_col_width(const struct vm_col *c, bool compact);
/* The width of stretch column c given spare columns beyond the table's own widths: its rows'
 * longest name, at least its own width, at most its own width + spare. */
int view_stretch_width(const struct vm_table *t, int c, bool compact, int spare);
/* text fitted to exactly width columns: a stretch column's name shortened in the middle, others
 * cut; padded (left- or right-aligned as the column is). */
void view_fit_text(const struct vm_col *col, const char *text, int width, char *buf, size_t len);
/* Columns that fit in width, dropping the highest priority numbers first
 * (rightmost first among equals); shown[c] set; returns the width used. */
int view_fit_columns(const struct vm_table *t, int width, bool compact, bool *shown);
/* One cell as text, without padding; compact: short numbers (1.2M) for the live view, else with
 * units (counters of time "684.9 ms", others "1.23 M", rates "12.3 K"). */
void view_format_cell(const struct vm_table *t, const struct vm_row *row, int c, bool compact, char *buf,
		      size_t len);
/* TMA level 1 as a stacked bar of exactly width letters F(rontend) S(peculation)
 * B(ackend) R(etiring), in proportion; '-' when there is no TMA. */
void vm_tma_bar(const struct vm_tma *t, int width, char *buf);
/* An htop-style meter of exactly width characters: '#' on-CPU, '+' runqueue, '-' blocked, then ' ' (the
 * rest of the period: the thread did not exist, or its time is not accounted yet), of percents. */
void vm_state_bar(double oncpu, double runq, double blocked, int width, char *buf);
/* TMA level 1 and the dominant level-2 node of a computed tree. */
void vm_tma_from_result(const struct tma_result *res, struct vm_tma *out);
/* ... of one set of sums (report_tma); out->ok false when there is none. */
void vm_tma_of(const struct report *r, const struct thread_stats *s, struct vm_tma *out);
const struct vm_row *view_find_row(const struct vm_table *t, unsigned int pid, long long tid, int id);
/* The sums a row's TMA comes from: a thread's or process's; a function's inclusive
 * counters over its on-CPU time (sampled: the counter deltas of its samples over
 * their estimated time). */
void view_row_sums(const struct view *v, enum vm_kind k, const struct vm_row *row, struct thread_stats *out);

/* part as a percent of whole; 0 when whole is 0. */
double vm_pct(double part, double whole);

/* Drill-down of one row (view_drill.c): TMA tree, bottleneck path, counters with percent
 * running, and (threads, processes) the hottest functions. */
struct vm_lines {
	char **line;
	size_t n, cap;
};
void view_drill(const struct view *v, enum vm_kind k, const struct vm_row *row, struct vm_lines *out);
void vm_lines_free(struct vm_lines *l);
/* Lines wider than width wrapped at spaces, each continuation indented 2 under its own line's text. */
void vm_lines_wrap(struct vm_lines *l, int width);

#endif
