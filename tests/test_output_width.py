# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Issue 32: every text output fits its width - --width N, else the terminal's, else 80 when stdout is
not a terminal.  The final report of a plain run, --uprobe, --sample, --offcpu-stacks and --per-call
runs, the --batch summaries, and the live view and its drill-down in tmux at 80x24 and 120x40: no line
longer than the width; a table that drops columns says which ("(N columns hidden: ...)"); numbers carry
perf stat's units, checked against the JSON of the same run (task-clock "296.8 ms" is the report's
nanoseconds, CPUS - perf's "CPUs utilized" - is task-clock over the run's wall time)."""
import json
import fcntl
import os
import re
import struct
import subprocess
import termios
import unicodedata

import pytest

from conftest import BUILD, GROUNDTRUTH, TMABPF, load_json, run_tmabpf
from test_live import Tmux, num, parse_table, term  # noqa: F401 (term: the tmux fixture)

HOTFUNCS = os.path.join(BUILD, "workloads", "hotfuncs")
PERSTEP = os.path.join(BUILD, "workloads", "perstep")
GT = ["--", GROUNDTRUTH, "--out", os.devnull, "--delay-ms", "0"]
RUNS = {
    "plain": GT + ["spin:300", "sleep:300", "fault:300"],
    "uprobe": ["--uprobe", ":gt_*"] + GT + ["spin:200", "sleep:200", "outer"],
    "sample": ["--sample=499", "--", HOTFUNCS, "--threads", "2", "--seconds", "1", "--delay-ms", "0", "--out",
               os.devnull, "spin"],
    "offcpu": ["--offcpu-stacks"] + GT + ["sleep:300", "pinned-pair:200"],
    "per-call": ["--per-call", ":step", "--sample=499", "--", PERSTEP, "--mode", "alternate", "--steps", "20",
                 "--work-us", "2000"],
    "batch": ["--batch", "-I", "300"] + GT + ["spin:800", "sleep:800"],
}
HIDDEN = re.compile(r"^  \((\d+) columns? hidden: (.*?); widen or --width\)$", re.M)


def columns(line):
    """The display columns of line, as wcwidth counts them (text_char): a wide character 2, a
    combining mark 0."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
               for c in line)


def too_wide(text, width):
    return [(columns(l), l) for l in text.splitlines() if columns(l) > width]


@pytest.mark.parametrize("what", list(RUNS))
def test_every_line_fits(what, tmp_path):
    """At --width 80 and 120, and with stdout a pipe (80): no line of the report is wider."""
    if not os.path.exists(RUNS[what][RUNS[what].index("--") + 1]):
        pytest.skip(f"{what}: workload not built (make)")
    for width in (80, 120, None):
        out = str(tmp_path / f"{width}.json")
        r = run_tmabpf(["--json", out] + (["--width", str(width)] if width else []) + RUNS[what], timeout=120)
        assert r.returncode == 0, r.stderr
        assert "=== tmabpf final report" in r.stdout, r.stdout
        assert not too_wide(r.stdout, width or 80), (what, width, too_wide(r.stdout, width or 80))
        if width == 80 and what in ("plain", "batch"):  # the threads table drops the switch counts
            m = HIDDEN.search(r.stdout)
            assert m and m.group(2).split() == ["VCSW", "IVCSW", "MIGR"], r.stdout


def report_rows(text, first):
    """The rows of the final report's table whose header starts with first."""
    lines = text.split("=== tmabpf final report", 1)[1].splitlines()
    at = next(i for i, l in enumerate(lines) if l.split()[:2] == first)
    end = next(i for i in range(at + 1, len(lines)) if not lines[i].startswith(" "))  # "processes:", ...
    return parse_table(lines[at:end], header_re=r"^\s*" + r"\s+".join(first) + r"\b")


def test_units_and_cpus_utilized(tmp_path):
    """task-clock in ms/s as perf stat prints it, the same number as the JSON's nanoseconds; CPUS per
    thread and per process = task-clock / wall, to its 3 decimals; the note says "CPUs utilized"; every
    column at --width 250, no marker."""
    out = str(tmp_path / "tm.json")
    r = run_tmabpf(["--json", out, "--width", "250"] + RUNS["plain"])
    assert r.returncode == 0, r.stderr
    rep = load_json(out)
    wall = rep["duration_ns"]
    assert not HIDDEN.search(r.stdout), r.stdout
    assert re.search(r"CPUS: CPUs utilized, task-clock / wall time", r.stdout), r.stdout
    threads = {(t["pid"], t["tid"]): t for t in rep["threads"]}
    rows = report_rows(r.stdout, ["PID", "TID"])
    assert {x["COMM"] for x in rows} >= {"gt-spin", "gt-sleep", "gt-fault"}, rows
    for x in rows:
        t = threads[(int(x["PID"]), int(x["TID"]))]
        tc = t["counters"]["task-clock"]
        assert re.fullmatch(r"\d+(\.\d+)? (ns|us|ms|s)", x["task-clock"]), x
        assert num(x["task-clock"]) == pytest.approx(tc, rel=0.006, abs=1), (x, tc)
        assert abs(float(x["CPUS"]) - tc / wall) <= 0.0006, (x, tc, wall)
    spin = next(x for x in rows if x["COMM"] == "gt-spin")
    assert re.fullmatch(r"\d{3}\.\d ms", spin["task-clock"]), spin  # 300 ms of CPU: "300.1 ms"
    procs = report_rows(r.stdout, ["PID", "THREADS"])
    p = next(x for x in rep["processes"] if x["pid"] == int(procs[0]["PID"]))
    assert abs(float(procs[0]["CPUS"]) - p["counters"]["task-clock"] / wall) <= 0.0006, (procs, p)


def test_quiet_header_and_notes(tmp_path):
    """No overhead line on a run without drops, multiplexing or 1 % of one CPU (it is there with -v);
    no processes: table for one-thread processes; the multiplexing note only when something was."""
    out = str(tmp_path / "one.json")
    one = run_tmabpf(["--json", out, "--width", "250", "--", "sh", "-c", "i=0; while [ $i -lt 20000 ]; do "
                      "i=$((i+1)); done; sleep 0.5"])
    assert one.returncode == 0, one.stderr
    assert "processes:" not in one.stdout and "multiplexed" not in one.stdout, one.stdout
    me = load_json(out)["self"]
    over = (me["bpf_run_ns"] * 100 / load_json(out)["duration_ns"] + me["run_cpu_pct"] >= 1.0 or
            me["threads_map_full"] or me["pids_map_full"] or me["exit_records_lost"] or me["counter_read_errors"])
    shown = re.search(r"^bpf: .*  drops: map-full", one.stdout, re.M)
    assert bool(shown) == bool(over), (me, one.stdout)  # (the other helpers' builds may cost BPF 1 % here)
    v = run_tmabpf(["-v", "--width", "250", "--", "true"])
    assert re.search(r"^bpf: .*  drops: map-full 0, lost 0, read-errors 0  tmabpf: [\d.]+% of one CPU", v.stdout,
                     re.M), v.stdout
    several = run_tmabpf(RUNS["plain"])
    assert "processes:\n    PID THREADS COMM" in several.stdout, several.stdout


def test_long_names_elided_in_the_middle(tmp_path):
    """A function name wider than FUNCTION at 80 columns keeps its head and tail around one '…'."""
    lib = tmp_path / "longname.c"
    name = "sgemm_kernel_for_a_very_long_name_HASWELL"
    lib.write_text(f"void {name}(void) {{}}\nint main(void) {{ for (int i = 0; i < 3; i++) {name}(); return 0; }}\n")
    exe = str(tmp_path / "longname")
    assert os.system(f"cc -O0 -o {exe} {lib}") == 0
    r = run_tmabpf(["--uprobe", f":{name}", "--", exe])
    assert r.returncode == 0, r.stderr
    assert not too_wide(r.stdout, 80), r.stdout
    shown = re.search(r"^\s+\d+ u (\S+)", r.stdout, re.M).group(1)
    head, _, tail = shown.partition("\u2026")
    assert tail and name.startswith(head) and name.endswith(tail) and len(shown) < len(name), shown


def live(term, width, height):
    t = term(width=width, height=height)
    t.run(f"{TMABPF} --uprobe ':gt_*' -- {GROUNDTRUTH} --out /dev/null --delay-ms 0 --repeat 400 spin:100 "
          f"sleep:100 fault:300")
    return t


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_live_view_fits(term, size):
    """The live view in tmux: threads, functions and the drill-down hold no line wider than the pane;
    at 80 columns the tables name the columns they hide, and the drill-down wraps its counters table
    (the whole run's RUNNING column comes on a line of its own) instead of cutting it."""
    width, height = size
    t = live(term, width, height)
    s = t.wait(lambda s: "gt-spin" in s and "gt-sleep" in s, "the workload's threads", timeout=30)
    assert not too_wide(s, width), s
    if width == 80:
        assert re.search(r"^\(\d+ columns? hidden: [^;]*VCSW", s.splitlines()[-1]), s
    t.keys("f")
    s = t.wait(lambda s: "FUNCTION" in s and "gt_spin" in s, "functions table")
    assert not too_wide(s, width), s
    if width == 80:
        assert re.search(r"^\(\d+ columns hidden: .*task-clock", s.splitlines()[-1]), s
    t.keys("t", "Home", "Enter")
    s = t.wait(lambda s: "details (Esc" in s and "counters (" in s, "drill-down")
    assert not too_wide(s, width), s
    counters = s[s.index("counters ("):]
    assert counters.count("RUNNING") >= 3, s  # the legend, this interval's and the whole run's
    t.keys("Escape", "q")
    s = t.wait(lambda s: "full data in --json)" in s and Tmux.at_prompt(s), "the final report (its end)")
    assert not too_wide(s, width), s


@pytest.mark.parametrize("cpu", [None, "skylakex"])
def test_list_fits(cpu):
    """tmabpf list (piped: 80 columns): its long lists wrap, indented, none wider."""
    r = run_tmabpf(["list"] + (["--cpu", cpu] if cpu else []))
    assert r.returncode == 0, r.stderr
    assert not too_wide(r.stdout, 80), too_wide(r.stdout, 80)
    assert re.search(r"^recipes: skylake, .*\n  \S", r.stdout, re.M), r.stdout  # a wrapped line, indented


def elided_from(shown, names):
    """shown is one of names, whole or as its head and tail around one '…'."""
    head, mid, tail = shown.partition("\u2026")
    return shown in names or bool(mid) and any(n.startswith(head) and n.endswith(tail) and len(n) > len(shown)
                                               for n in names)


def test_diff_fits(tmp_path):
    """tmabpf diff at --width 80 and 120, and piped (80): no line wider, in its table of changes and its
    BUDGETS BROKEN table; a short width hides BASE first, then NEW, said once under each table; a row
    name is whole or elided in the middle, never cut (the JSON reports' names are the truth)."""
    reps = []
    for name, ms in (("base", 200), ("slow", 320)):
        reps.append(str(tmp_path / f"{name}.json"))
        r = run_tmabpf(["--quiet", "--json", reps[-1], "--uprobe", ":gt_spin", "--", GROUNDTRUTH, "--out", os.devnull,
                        f"spin:{ms}", "multi:3:4:16"])
        assert r.returncode == 0, r.stderr
    names = {"run", "groundtruth/groundtruth:gt_spin"}  # (the function row: process/binary:symbol)
    for rep in map(load_json, reps):
        names |= {p["comm"] for p in rep["processes"]} | {f"{p['comm']}/{t['comm']}" for p in rep["processes"]
                                                          for t in rep["threads"] if t["pid"] == p["pid"]}
    for width in (80, 120, None):
        r = run_tmabpf(["diff", *reps, "--top", "0", "--fail-on", "function.wall_ns>+20%,thread.oncpu_ns>+20%"] +
                       (["--width", str(width)] if width else []))
        assert r.returncode == 1, (r.stdout, r.stderr)
        assert not too_wide(r.stdout, width or 80), (width, too_wide(r.stdout, width or 80))
        lines = r.stdout.splitlines()
        table = lines[lines.index(next(l for l in lines if l.startswith("KIND"))) + 1:]
        rows = [l.split() for l in table[:next(i for i, l in enumerate(table) if not l[:1].islower() or
                                               l.startswith("only in"))]]
        assert len(rows) > 10, r.stdout
        assert all(elided_from(f[1], names) for f in rows), (names, rows)
        hidden = HIDDEN.findall(r.stdout)
        if width == 120:
            assert not hidden, r.stdout
        else:  # BASE goes first, then NEW
            assert hidden and all(h[1].split() in (["BASE"], ["BASE", "NEW"]) for h in hidden), r.stdout


def on_terminal(args, cols):
    """tmabpf's standard output on a pseudo-terminal cols columns wide (no --width: the terminal's)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
    p = subprocess.Popen([TMABPF] + args, stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    p.wait(timeout=60)
    return p.returncode, out.decode().replace("\r\n", "\n")


def two_reports(tmp_path):
    """Two reports of groundtruth's gt_spin, the second 60 % slower."""
    reps = []
    for name, ms in (("base", 200), ("slow", 320)):
        reps.append(str(tmp_path / f"{name}.json"))
        r = run_tmabpf(["--quiet", "--json", reps[-1], "--uprobe", ":gt_spin", "--", GROUNDTRUTH, "--out", os.devnull,
                        f"spin:{ms}"])
        assert r.returncode == 0, r.stderr
    return reps


def test_narrow_tables_never_wider(tmp_path):
    """When only the always-shown columns are left (tmabpf diff's BUDGETS BROKEN: KIND ROW METRIC DELTA
    BUDGET) and they are still wider: at --width 40 (the narrowest) no line is wider (display columns),
    the row names and the last column cut in the middle, the deltas whole; on a 32-column terminal,
    narrower than the table with its text cut to 6 columns, one note says the --width it needs in
    place of the table and the rest of the output carries on."""
    reps = two_reports(tmp_path)
    args = ["diff", *reps, "--fail-on", "function.wall_ns>+20%"]
    r = run_tmabpf(args + ["--width", "40"])
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert not too_wide(r.stdout, 40), too_wide(r.stdout, 40)
    lines = r.stdout.split("BUDGETS BROKEN:\n", 1)[1].splitlines()
    assert lines[0].split() == ["KIND", "ROW", "METRIC", "DELTA", "BUDGET"] and columns(lines[0]) <= 40, lines
    row = lines[1].split()
    assert row[0] == "function" and elided_from(row[1], {"groundtruth/groundtruth:gt_spin"}), lines
    assert re.fullmatch(r"\+\d+\.\d\d%", row[3]) and elided_from(row[4], {"function.wall_ns>+20%"}), lines
    assert lines[2] == "1 budget broken", lines
    rc, out = on_terminal(args, 32)
    assert rc == 1, out
    assert not too_wide(out, 32), too_wide(out, 32)
    assert re.search(r"^BUDGETS BROKEN:\n  \(table left out: it needs\n   --width 40\)\n1 budget broken$", out,
                     re.M), out


def test_long_word_in_prose_whole_or_elided(tmp_path):
    """A word longer than a line in wrapped prose (tmabpf diff's first line names its reports: a path of
    1300 bytes, longer than text_wrap's old 1023-byte copy): whole on its line at --width 10000, elided
    in the middle to its true head and tail ("/base.json") within 80 columns; never cut."""
    reps = two_reports(tmp_path)
    deep = tmp_path.joinpath(*["d" * 99 + str(i) for i in range(13)])
    deep.mkdir(parents=True)
    base = str(deep / "base.json")
    os.link(reps[0], base)
    assert len(base) > 1300, len(base)
    whole = run_tmabpf(["diff", base, reps[1], "--width", "10000"])
    assert whole.returncode == 0, whole.stderr
    assert whole.stdout.splitlines()[0] == f"tmabpf diff: {base} -> {reps[1]}", whole.stdout[:2000]
    cut = run_tmabpf(["diff", base, reps[1]])
    assert cut.returncode == 0, cut.stderr
    assert not too_wide(cut.stdout, 80), too_wide(cut.stdout, 80)
    shown = cut.stdout.splitlines()[1].strip()
    assert columns(shown) == 78 and elided_from(shown, {base}) and shown.endswith("/base.json"), cut.stdout[:400]


def test_check_fits():
    """tmabpf check at --width 80 and 120, and piped (80): no line wider; each status line keeps its
    status and item ("FAIL  PMU driver:") first, its explanation wrapped under it, indented 6; joined
    again, the lines are those of --width 10000 (nothing cut), the other agents' pids aside."""
    from wrapped_text import joined_lines
    whole = run_tmabpf(["check", "--width", "10000"]).stdout.splitlines()
    assert whole[-1].endswith("WARN"), whole
    for width in (80, 120, None):
        r = run_tmabpf(["check"] + (["--width", str(width)] if width else []))
        assert not too_wide(r.stdout, width or 80), (width, too_wide(r.stdout, width or 80))
        assert all(re.match(r"(OK|WARN|FAIL|SKIP|PASS|INFO) +[^:]+:|      \S|tmabpf check:|calibrated loop|"
                            r"\d+ FAIL", l) for l in r.stdout.splitlines()), r.stdout
        lines = joined_lines(r.stdout)
        assert [l for l in lines if "other agents" not in l] == [l for l in whole if "other agents" not in l], r.stdout


@pytest.mark.parametrize("args", [[], ["--cpu", "sapphirerapids", "--tma=2"], ["--mem-samples=page-faults"],
                                  ["--uprobe", "libc.so.6:pthread_spin*", "--uprobe", ":gt_spin", "--", GROUNDTRUTH]])
def test_dry_run_fits(args):
    """--dry-run at --width 80 and 120, and piped (80): no line wider; a long line wraps at spaces (a
    list after its commas), its continuation indented 4 past it; joined again, its lines are those
    of --width 10000 (nothing cut or elided), the uprobe costs (measured each run) aside."""
    from wrapped_text import joined_lines

    def same(lines):
        return [re.sub(r"[\d.]+ us", "N us", re.sub(r",\s", ",", " ".join(l.split()))) for l in lines]
    whole = run_tmabpf(["--dry-run", "--width", "10000"] + args)
    assert whole.returncode == 0 and max(map(len, whole.stdout.splitlines())) > 120, whole
    for width in (80, 120, None):
        r = run_tmabpf(["--dry-run"] + (["--width", str(width)] if width else []) + args)
        assert r.returncode == 0, r.stderr
        assert not too_wide(r.stdout, width or 80), (width, too_wide(r.stdout, width or 80))
        assert "\u2026" not in r.stdout, r.stdout
        assert same(joined_lines(r.stdout)) == same(whole.stdout.splitlines()), r.stdout


def roofs_file(path):
    """A roofs file for this host, written as 'tmabpf roofs' writes one (its host fields are what
    roofs.c compares: model name, microcode, online CPUs).  Its figures are made up, round numbers:
    only the widths of what shows them are checked here (test_roofline checks verdicts against
    measured roofs)."""
    info = open("/proc/cpuinfo").read()
    field = lambda k: (re.search(rf"^{k}\s*:\s*(.*)$", info, re.M) or [None, ""])[1]
    fig = lambda v, ws, test: {"median": v, "min": v, "max": v, "spread": 0.0, "repeats": 1, "working_set_bytes": ws,
                               "likwid_test": test}
    doc = {"format": 2, "host": {"cpu": field("model name") or field("CPU part"), "microcode": field("microcode"),
                                 "kernel": os.uname().release, "isa": "avx2", "cpus": os.sysconf("SC_NPROCESSORS_ONLN")},
           "measured_at": 1795858916, "threads_one": 1, "threads_all": os.sysconf("SC_NPROCESSORS_ONLN"),
           "l1d_bytes": 49152, "l2_bytes": 1048576, "l3_bytes": 33554432,
           "flops": [{"precision": "sp", "threads": t, "flop_per_s": fig(1e11, 24576, "peakflops_sp_avx_fma")}
                     for t in ("1", "all")],
           "bandwidth": [{"kind": "read", "level": "DRAM", "threads": t, "bytes_per_s": fig(1e10, 1 << 28, "load_avx")}
                         for t in ("1", "all")]}
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def test_roofline_fits(tmp_path):
    """The report's roofline section (gemmwork's mixed GEMMs, against roofs) and 'tmabpf roofs --show'
    at --width 80 and 120, and piped (80): no line wider; FUNCTION, SHAPE and VERDICT always shown,
    the shape and the verdict whole (the JSON's rows are the truth), the rates go first."""
    gemm = os.path.join(BUILD, "workloads", "gemmwork")
    if not os.path.exists(gemm):
        pytest.skip("gemmwork not built (make)")
    roofs = roofs_file(str(tmp_path / "roofs.json"))
    for width in (80, 120, None):
        out = str(tmp_path / f"{width}.json")
        r = run_tmabpf(["--roofline", "--roofs", roofs, "--json", out] + (["--width", str(width)] if width else []) +
                       ["--", gemm, "mixed", "20"], timeout=120)
        assert r.returncode == 0, r.stderr
        text = r.stdout.split("=== tmabpf final report", 1)[1]  # (gemmwork prints its own JSON line first)
        assert not too_wide(text, width or 80), (width, too_wide(text, width or 80))
        rl = load_json(out)["roofline"]
        assert rl["roofs"] and rl["roofs"]["file"] == roofs, rl["roofs"]
        lines = text.splitlines()
        at = next(i for i, l in enumerate(lines) if l.startswith("FUNCTION"))
        assert lines[at].split()[:2] == ["FUNCTION", "SHAPE"] and lines[at].split()[-1] == "VERDICT", lines[at]
        verdicts = {x["verdict"] for x in rl["shapes"]}
        rows = lines[at + 1:at + 1 + min(20, len(rl["shapes"]))]
        assert rows and all(any(l.endswith("  " + v) for v in verdicts) for l in rows), (verdicts, rows)
        assert ("ROOF" in lines[at].split()) == (width == 120), lines[at]
    show = run_tmabpf(["roofs", "--show", "--file", roofs])
    assert show.returncode == 0, show.stderr
    assert not too_wide(show.stdout, 80) and re.search(r"^peak fp32 +100 GFLOP/s", show.stdout, re.M), show.stdout


NARROW = {"sample": (RUNS["sample"], "sampled functions ("),
          "offcpu": (RUNS["offcpu"], "off-CPU stacks ("),
          "mem-samples": (["--mem-samples=page-faults"] + GT + ["fault:300"], "memory samples (")}


@pytest.mark.parametrize("width", [40, 60, 72])
@pytest.mark.parametrize("what", list(NARROW))
def test_narrow_widths_fit(what, width, tmp_path):
    """--width 40, 60 and 72 (the narrowest --width takes is 40): the sampled-functions, off-CPU and
    memory-sample tables drop columns by priority (named in the report's one note) instead of
    running past the width; their names are elided in the middle."""
    args, section = NARROW[what]
    r = run_tmabpf(["--width", str(width)] + args, timeout=120)
    assert r.returncode == 0, r.stderr
    assert section in r.stdout, r.stdout
    assert not too_wide(r.stdout, width), (width, too_wide(r.stdout, width))
    if width == 40:
        assert len(HIDDEN_ANY.findall(r.stdout)) == 1, r.stdout


HIDDEN_ANY = re.compile(r"^  \(\d+ columns? hidden: ", re.M)
HIDDEN_WRAPPED = re.compile(r"^  \((\d+) columns? hidden: (.*?); widen\s+or\s+--width\)$", re.M | re.S)


def test_hidden_columns_said_once(tmp_path):
    """The columns a width hides are said once per report, in one merged note after the last table
    (the threads and processes tables both hide VCSW IVCSW MIGR at 80 columns; a sampled run's
    counters too), and once per --batch interval; none at a width that hides none."""
    r = run_tmabpf(RUNS["plain"])
    assert r.returncode == 0, r.stderr
    assert "processes:" in r.stdout, r.stdout
    notes = HIDDEN.findall(r.stdout)
    assert len(notes) == 1 and notes[0][1].split() == ["VCSW", "IVCSW", "MIGR"], r.stdout
    last_table = r.stdout.rindex("\n", 0, r.stdout.index("  (3 columns hidden"))
    assert "(ONCPU%/BLOCK%/RUNQ%" in r.stdout[last_table:], r.stdout  # the note, then the footer
    r = run_tmabpf(["--width", "72"] + RUNS["sample"])
    assert r.returncode == 0, r.stderr
    notes = HIDDEN_WRAPPED.findall(r.stdout)
    assert len(notes) == 1 and len(set(notes[0][1].split())) == int(notes[0][0]), r.stdout
    r = run_tmabpf(RUNS["batch"])
    report = r.stdout.split("=== tmabpf final report", 1)
    intervals = report[0].count("\ntmabpf ") + report[0].startswith("tmabpf ")
    assert intervals >= 2 and len(HIDDEN_ANY.findall(report[0])) == intervals, r.stdout
    assert len(HIDDEN_ANY.findall(report[1])) == 1, r.stdout
    r = run_tmabpf(["--width", "250"] + RUNS["plain"])
    assert not HIDDEN_ANY.findall(r.stdout), r.stdout


def test_long_names_keep_28_columns_before_numbers_go(tmp_path):
    """MKL's names all start 'mkl_blas_def_': at 80 columns a number column (SELF%) goes before
    FUNCTION shrinks below 28 columns, and a name that fits 28 is whole."""
    long, short = "mkl_blas_def_sgemm_kernel_0_get_bufs_size", "mkl_blas_def_xsgemm_bdz"
    src = tmp_path / "mkl.c"
    src.write_text(f"void {long}(void) {{}}\nvoid {short}(void) {{}}\n"
                   f"int main(void) {{ for (int i = 0; i < 3; i++) {{ {long}(); {short}(); }} return 0; }}\n")
    exe = str(tmp_path / "mkl")
    assert os.system(f"cc -O0 -o {exe} {src}") == 0
    r = run_tmabpf(["--uprobe", ":mkl_*", "--", exe])
    assert r.returncode == 0, r.stderr
    assert not too_wide(r.stdout, 80), r.stdout
    shown = dict((m.group(1), m.group(0)) for m in re.finditer(r"^\s+\d+ u (\S+)", r.stdout, re.M))
    assert short in shown, r.stdout  # whole
    (cut,) = [n for n in shown if n != short]
    head, _, tail = cut.partition("\u2026")
    assert long.startswith(head) and long.endswith(tail) and 28 <= len(cut) < len(long), cut
    assert "SELF%" in HIDDEN_WRAPPED.search(r.stdout).group(2).split(), r.stdout
