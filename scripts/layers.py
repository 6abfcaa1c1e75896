# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""The layers of tmabpf's source, bottom first: each folder, what it holds, and the folders it may
include.  Data flows bpf -> collect -> model -> output/view/daemon; a folder includes only what
is below it in this list (and itself), and collect and output/view/trace never include each other
(collectors fill the model, outputs read it).  scripts/check-includes.py checks the include graph
against it; scripts/gen-design.py writes docs/design.md's folder map from it."""

LAYERS = [
    # (layer, folder, may include, what it holds)
    (0, "lib", [], "generic helpers: diagnostics, clocks, JSON and Prometheus writers, hash maps, safe output "
                   "files, command-line parsing, the build's version"),
    (0, "bpf", [], "the BPF programs, and the headers they share with user space (user code includes the .h "
                   "files, never the .bpf.h ones)"),
    (1, "tma", ["lib", "bpf"], "the TMA engine, pure, and its data: the CPU models' recipes (events and formulas), "
                               "event keys, plan, compile, compute (perf's expr.y rules); encodings come from the "
                               "plan's caller"),
    (1, "sym", ["lib"], "names of code: ELF symbols, libraries, /proc maps, perf maps, kallsyms, --uprobe targets"),
    (2, "pmu", ["lib", "bpf", "tma"], "the machine: host facts, CPU detection, event names and recipe keys to "
                                      "perf_event_attr (libpfm4), opening counters"),
    (3, "model", ["lib", "bpf", "pmu", "sym", "tma"],
     "the sums: counter arithmetic, the thread table, per-function and sampled sums, the report a run hands to "
     "its outputs (and the TMA of any set of sums)"),
    (4, "collect", ["lib", "bpf", "pmu", "sym", "model"],
     "the BPF loaders and what drives them: spine, tasks, uprobes, sampling, off-CPU, memory samples; "
     "the collector interface (struct collector, run_ctx, run_links) and its drivers; they fill the model"),
    (4, "output", ["lib", "bpf", "pmu", "sym", "tma", "model"],
     "what a run writes: the JSON report and its sections, TMA as text and JSON, --dry-run"),
    (5, "view", ["lib", "bpf", "pmu", "sym", "tma", "model", "output"],
     "the top-style views: the view model, its back ends (plain text, ncurses), drill-downs"),
    (6, "trace", ["lib", "bpf", "pmu", "sym", "tma", "model", "output"],
     "--trace: function spans, thread-state slices and counter tracks, streamed to a Perfetto file"),
    (7, "run", ["lib", "bpf", "pmu", "sym", "tma", "model", "collect", "output", "view", "trace"],
     "the profiling run: options, run_prepare(), one collector per feature and the run's table, the poll loop"),
    (8, "daemon", ["lib", "bpf", "pmu", "sym", "tma", "model", "collect", "output", "view", "trace", "run"],
     "tmabpf daemon: accounting mode, bounded aggregation, the sampler, the overhead budget, metrics, HTTP"),
    (9, "cmd", ["lib", "bpf", "pmu", "sym", "tma", "model", "collect", "output", "view", "trace", "run", "daemon"],
     "the commands: main(), the run's CLI, analyze, list, check, diff"),
]

ALLOWED = {folder: set(inc) for _, folder, inc, _ in LAYERS}
LAYER = {folder: n for n, folder, _, _ in LAYERS}
ROLE = {folder: role for _, folder, _, role in LAYERS}
