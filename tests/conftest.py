"""Shared helpers for tmabpf's tests: paths, running tmabpf and the workloads,
and the check that nothing stays attached after a run."""
import json
import os
import subprocess
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")
TMABPF = os.path.join(BUILD, "tmabpf")
GROUNDTRUTH = os.path.join(BUILD, "tools", "groundtruth")
DECODER = os.path.join(BUILD, "tools", "decoder")
PROG_PREFIX = "tmabpf_"


def tmabpf_progs():
    """Names of loaded BPF programs that belong to tmabpf."""
    out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True, check=True).stdout
    return [p.get("name", "") for p in json.loads(out or "[]") if p.get("name", "").startswith(PROG_PREFIX)]


def tmabpf_links():
    out = subprocess.run(["bpftool", "-j", "link", "show"], capture_output=True, text=True, check=True).stdout
    progs = {p["id"]: p.get("name", "") for p in json.loads(
        subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True, check=True).stdout or "[]")}
    return [l for l in json.loads(out or "[]") if progs.get(l.get("prog_id"), "").startswith(PROG_PREFIX)]


@pytest.fixture(autouse=True)
def nothing_left_attached():
    """Every test must leave no tmabpf program or link behind."""
    yield
    deadline = time.time() + 5
    while time.time() < deadline and (tmabpf_progs() or tmabpf_links()):
        time.sleep(0.1)  # a killed process' fds close asynchronously
    assert tmabpf_progs() == [], "tmabpf BPF programs left loaded"
    assert tmabpf_links() == [], "tmabpf BPF links left attached"


def run_tmabpf(args, timeout=120, **kw):
    return subprocess.run([TMABPF] + args, capture_output=True, text=True, timeout=timeout, **kw)


def load_json(path):
    with open(path) as f:
        return json.load(f)


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
    allow for it: slack() is the steal seen plus one accounting tick."""

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
        return self.ns + 1e9 / os.sysconf("SC_CLK_TCK") if self.ns else 0


def within(actual, expected, rel, abs_slack=0):
    return abs(actual - expected) <= rel * abs(expected) + abs_slack
