# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Shared helpers for tmabpf's tests: paths, running tmabpf and the workloads,
and the check that nothing stays attached after a run."""
import json
import os
import subprocess
import time

import pytest

from report_schema import check_report, is_report

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")
TMABPF = os.path.join(BUILD, "tmabpf")
GROUNDTRUTH = os.path.join(BUILD, "workloads", "groundtruth")
DECODER = os.path.join(BUILD, "workloads", "decoder")
PROG_PREFIX = "tmabpf_"


def _prog_holders():
    """{prog_id: set of pids holding an fd of it (a program or a link to it)}, from /proc/*/fdinfo."""
    holders = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{pid}/fdinfo")
        except OSError:
            continue
        for fd in fds:
            try:
                with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                    info = f.read()
            except OSError:
                continue
            for line in info.splitlines():
                if line.startswith("prog_id:"):
                    holders.setdefault(int(line.split()[1]), set()).add(int(pid))
    return holders


def _ours(prog_id, holders):
    """Does this program belong to this checkout's runs?  Held by a process of
    this checkout's build, or by nobody (pinned, or a leaked link).  Programs
    that a tmabpf of another checkout holds (a developer's parallel run) are not
    this test's concern."""
    pids = holders.get(prog_id)
    if not pids:
        return True
    for pid in pids:
        try:
            if os.readlink(f"/proc/{pid}/exe").startswith(BUILD + os.sep):
                return True
        except OSError:
            pass
    return False


def _bpftool_json(*what):
    # bpftool fails when a program vanishes while it walks the list (another
    # process exiting): try again
    for attempt in range(5):
        r = subprocess.run(["bpftool", "-j", *what, "show"], capture_output=True, text=True)
        if r.returncode == 0:
            return json.loads(r.stdout or "[]")
        time.sleep(0.05)
    raise RuntimeError(f"bpftool {' '.join(what)} show: {r.stderr.strip()}")


def tmabpf_progs():
    """Names of loaded BPF programs that belong to tmabpf (of this checkout)."""
    holders = _prog_holders()
    return [p.get("name", "") for p in _bpftool_json("prog")
            if p.get("name", "").startswith(PROG_PREFIX) and _ours(p["id"], holders)]


def tmabpf_links():
    holders = _prog_holders()
    progs = {p["id"]: p.get("name", "") for p in _bpftool_json("prog")}
    return [l for l in _bpftool_json("link")
            if progs.get(l.get("prog_id"), "").startswith(PROG_PREFIX) and _ours(l.get("prog_id"), holders)]


def _ours_now():
    """{("prog"|"link", id): program name} of this checkout's tmabpf programs and links."""
    holders = _prog_holders()
    names = {p["id"]: p.get("name", "") for p in _bpftool_json("prog")}
    found = {("prog", i): n for i, n in names.items() if n.startswith(PROG_PREFIX) and _ours(i, holders)}
    for l in _bpftool_json("link"):
        n = names.get(l.get("prog_id"), "")
        if n.startswith(PROG_PREFIX) and _ours(l.get("prog_id"), holders):
            found[("link", l["id"])] = n
    return found


def leftover_bpf(timeout=5):
    """Programs and links of this checkout seen at every poll for up to timeout
    seconds: a killed process' fds close asynchronously, and a parallel
    checkout's exiting tmabpf briefly holds its programs with no fd (so they
    look like ours) - neither persists; a leak does."""
    deadline = time.time() + timeout
    left = _ours_now()
    while left and time.time() < deadline:
        time.sleep(0.1)
        now = _ours_now()
        left = {k: v for k, v in left.items() if k in now}
    return left


@pytest.fixture(autouse=True)
def nothing_left_attached():
    """Every test must leave no tmabpf program or link behind."""
    yield
    left = leftover_bpf()
    assert [n for (kind, _), n in left.items() if kind == "prog"] == [], "tmabpf BPF programs left loaded"
    assert [n for (kind, _), n in left.items() if kind == "link"] == [], "tmabpf BPF links left attached"


def run_tmabpf(args, timeout=120, **kw):
    return subprocess.run([TMABPF] + args, capture_output=True, text=True, timeout=timeout, **kw)


_steal_origin_ns = [0.0]


@pytest.fixture(autouse=True)
def steal_origin():
    """Steal time at the test's start: the most any report of the test can have lost to it."""
    _steal_origin_ns[0] = StealMeter.total_ns()
    yield


def check_thread_windows(doc, where):
    """Every thread of every report the suite reads: on-CPU + blocked + runqueue is its time in the
    run's window within 1 % (tests/thread_windows.py), the steal since the test began allowed below."""
    from thread_windows import bad_windows

    if doc.get("self", {}).get("threads_map_full"):
        return  # switches not accounted, said in the report (--max-threads): the identity cannot hold
    steal = StealMeter.total_ns() - _steal_origin_ns[0] + 1e9 / os.sysconf("SC_CLK_TCK")
    bad = bad_windows(doc, steal)
    assert not bad, f"{where}: threads whose on + off CPU is not their time in the window " \
                    f"(pid, tid, comm, on, blocked, runqueue, window): {bad[:5]}"


def load_json(path):
    """A JSON file; a tmabpf report is checked against its contract (docs/report.schema.json) and
    every thread's times against the run's window."""
    with open(path) as f:
        doc = json.load(f)
    if is_report(doc):
        check_report(doc, os.path.basename(str(path)))
        check_thread_windows(doc, os.path.basename(str(path)))
    return doc


def start_groundtruth(scenarios, out, delay_ms=1000, extra=()):
    """Start the ground-truth workload; its threads wait delay_ms before working."""
    return subprocess.Popen([GROUNDTRUTH, "--delay-ms", str(delay_ms), "--out", out, *extra, *scenarios],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def gt_thread(gt, comm):
    """The ground-truth workload's record of the thread named comm."""
    return next(t for t in gt["threads"] if t["comm"] == comm)


def threads_by_tid(report):
    return {t["tid"]: t for t in report["threads"]}


class StealMeter:
    """Hypervisor steal time (all CPUs, /proc/stat) over a with-block, in ns.
    Counters such as task-clock tick through steal; the scheduler's runtime
    (oncpu_ns, CLOCK_THREAD_CPUTIME_ID) does not, so comparisons of the two
    allow for it: slack() is the steal seen plus one tick of /proc/stat, whose
    counts are in ticks (10 ms), so a steal below that reads 0 (a fresh-clone
    run here: a pinned thread's task-clock 4.8 ms above its runtime, 0 steal
    seen; this kernel has no IRQ time accounting, so runtime keeps IRQ time)."""

    @staticmethod
    def total_ns():
        with open("/proc/stat") as f:
            fields = f.readline().split()
        return int(fields[8]) * 1e9 / os.sysconf("SC_CLK_TCK")

    def __enter__(self):
        self.ns = 0
        self._start = self.total_ns()
        return self

    def __exit__(self, *exc):
        self.ns = self.total_ns() - self._start

    def slack(self):
        return self.ns + 1e9 / os.sysconf("SC_CLK_TCK")


def read_folded(path):
    """--folded lines as ([frame, ...], count)."""
    lines = []
    with open(path) as f:
        for line in f:
            stack, count = line.rstrip("\n").rsplit(" ", 1)
            lines.append((stack.split(";"), int(count)))
    return lines


def within(actual, expected, rel, abs_slack=0):
    return abs(actual - expected) <= rel * abs(expected) + abs_slack


def clock_through_steal(counter_ns, oncpu_ns, rel, steal_slack):
    """A counter that ticks through hypervisor steal (task-clock) against the scheduler's runtime,
    which leaves it out: within rel below, within rel plus the steal that may have gone by above."""
    return oncpu_ns * (1 - rel) <= counter_ns <= oncpu_ns * (1 + rel) + steal_slack
