# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""'tmabpf diff': the regression gate between two JSON reports.  Real reports of
two ground-truth runs (one spins 60 % longer) and constructed ones (TMA nodes,
same-named threads): identical reports pass, a regression fails with exit 1 and
names its row, budgets that hold pass, malformed budgets and inputs get one
line and exit 2."""
import copy
import json
import os
import re

import pytest

from conftest import GROUNDTRUTH, load_json, run_tmabpf


def report(tmp, name, spin_ms):
    out = str(tmp / f"{name}.json")
    r = run_tmabpf(["--quiet", "--json", out, "--uprobe", ":gt_spin", "--", GROUNDTRUTH, "--out",
                    str(tmp / f"{name}-gt.json"), f"spin:{spin_ms}", "fault:2000", "multi:3:4:16"])
    assert r.returncode == 0, r.stderr
    return out


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("diff")
    return report(tmp, "base", 200), report(tmp, "slow", 320), tmp


def diff(*args):
    return run_tmabpf(["diff", *args])


def broken_rows(stdout):
    """(kind, row, metric, budget) of the BUDGETS BROKEN table."""
    if "BUDGETS BROKEN" not in stdout:
        return []
    table = stdout.split("BUDGETS BROKEN:")[1].splitlines()[2:]
    rows = []
    for line in table:
        if not line.strip() or "budget" in line and "broken" in line:
            break
        f = line.split()
        rows.append((f[0], f[1], f[2], f[-1]))
    return rows


def test_identical_reports_pass(reports):
    base, _, _ = reports
    r = diff(base, base, "--fail-on", "oncpu_ns>+0%,wall_ns>+0%,page-faults>0,calls>0")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no differences" in r.stdout
    assert re.search(r"budgets: all 4 hold \((\d+) row checks\)", r.stdout)
    assert int(re.search(r"\((\d+) row checks\)", r.stdout).group(1)) > 10


def test_regression_fails_and_names_the_row(reports):
    base, slow, _ = reports
    r = diff(base, slow, "--fail-on", "thread.oncpu_ns>+20%,function.wall_ns>+20%")
    assert r.returncode == 1, r.stdout + r.stderr
    rows = broken_rows(r.stdout)
    assert ("thread", "groundtruth/gt-spin", "oncpu_ns", "thread.oncpu_ns>+20%") in rows, r.stdout
    assert ("function", "groundtruth/groundtruth:gt_spin", "wall_ns", "function.wall_ns>+20%") in rows, r.stdout
    # (the short faulting threads' few ms of CPU may move by 20 % too on a shared box:
    # their page faults, exact, do not; see test_budgets_that_hold_pass)
    assert re.search(r"\d+ budgets? broken", r.stdout)
    # the delta shown is the real one: 320 vs 200 ms of CPU, about +60 %
    line = next(l for l in r.stdout.split("BUDGETS BROKEN:")[1].splitlines() if "groundtruth/gt-spin" in l)
    pct = float(re.search(r"([+-][\d.]+)%", line).group(1))
    assert 45 <= pct <= 75, line


def test_budgets_that_hold_pass(reports):
    base, slow, _ = reports
    # a gt-multi thread makes exactly 69 faults in its measured window, and 0-3 more around it
    # (thread start and exit; seen in 12 runs, before and after the uprobe fast path): a run
    # pair differs by up to 3, once by 4 in CI, so +6
    r = diff(base, slow, "--fail-on", "thread[gt-fault].page-faults>+1%,thread[gt-multi*].page-faults>+6,"
             "function[gt_spin].calls>0,thread[gt-spin].oncpu_ns>+90%,thread[gt-spin].page-faults>+5")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "budgets: all 5 hold" in r.stdout


def test_decrease_budget(reports):
    base, slow, _ = reports
    r = diff(slow, base, "--fail-on", "thread[gt-spin].oncpu_ns<-20%")
    assert r.returncode == 1
    assert [x[1] for x in broken_rows(r.stdout)] == ["groundtruth/gt-spin"]


def test_threads_matched_by_comm_not_tid(reports):
    base, slow, _ = reports
    b, s = load_json(base), load_json(slow)
    tids = lambda rep, comm: {t["tid"] for t in rep["threads"] if t["comm"] == comm}
    assert not tids(b, "gt-spin") & tids(s, "gt-spin"), "runs should have different tids"
    r = diff(base, slow, "--top", "0")
    assert r.returncode == 0
    only = [l for l in r.stdout.splitlines() if l.startswith("only in")]
    assert not any("gt-" in l for l in only), only
    assert "groundtruth/gt-spin" in r.stdout


def with_tma(rep, backend, frontend):
    rep = copy.deepcopy(rep)
    p = next(p for p in rep["processes"] if p["comm"] == "groundtruth")
    p["tma"] = {"tma_frontend_bound": frontend, "tma_backend_bound": backend, "tma_retiring": 100 - backend - frontend}
    return rep


def write(tmp, name, rep):
    path = str(tmp / name)
    with open(path, "w") as f:
        json.dump(rep, f)
    return path


def test_tma_budget_in_percentage_points(reports):
    base, _, tmp = reports
    b = load_json(base)
    pb = write(tmp, "tma-base.json", with_tma(b, 30.0, 20.0))
    pn = write(tmp, "tma-new.json", with_tma(b, 36.5, 20.0))
    r = diff(pb, pn, "--fail-on", "tma_backend_bound>+5pp")
    assert r.returncode == 1, r.stdout + r.stderr
    assert broken_rows(r.stdout) == [("process", "groundtruth", "tma_backend_bound", "tma_backend_bound>+5pp")]
    assert "+6.50pp" in r.stdout
    r = diff(pb, pn, "--fail-on", "tma_backend_bound>+7pp,tma_frontend_bound>+0pp")
    assert r.returncode == 0, r.stdout
    r = diff(pb, pn, "--fail-on", "process[groundtruth].tma_retiring<-5pp")
    assert r.returncode == 1 and "-6.50pp" in r.stdout


def test_same_named_threads_ranked_by_first_sight(reports):
    """Two threads with one comm: matched by their order of first sight, shown as name and name#2."""
    base, _, tmp = reports
    b = load_json(base)
    pid = next(p["pid"] for p in b["processes"] if p["comm"] == "groundtruth")
    t = next(t for t in b["threads"] if t["comm"] == "gt-fault")
    first, second = copy.deepcopy(t), copy.deepcopy(t)
    first.update(tid=1, first_seen_ns=100, oncpu_ns=1000)
    second.update(tid=2, first_seen_ns=200, oncpu_ns=5000)
    b["threads"] = [x for x in b["threads"] if x["comm"] != "gt-fault"] + [second, first]
    n = copy.deepcopy(b)
    for x in n["threads"]:
        if x["comm"] == "gt-fault":
            x["tid"] += 1000  # other tids, same order of first sight
            if x["first_seen_ns"] == 200:
                x["oncpu_ns"] = 6000  # the second one regressed by 20 %
    r = diff(write(tmp, "same-b.json", b), write(tmp, "same-n.json", n), "--fail-on", "thread.oncpu_ns>+10%")
    assert r.returncode == 1, r.stdout
    assert [x[1] for x in broken_rows(r.stdout)] == ["groundtruth/gt-fault#2"], r.stdout
    assert pid


@pytest.mark.parametrize("budget,needle", [
    ("oncpu_ns>>5%", "doubled comparison"),
    ("oncpu_ns>5x", "unknown unit"),
    ("tma_backend_bound", "no comparison"),
    (">5%", "no metric"),
    ("oncpu_ns>+5pp", "pp (percentage points) applies to TMA"),
    ("nosuchmetric>+5%", "no row of either report has metric"),
    ("thread[.oncpu_ns>1", "expected thread[GLOB].METRIC"),
    ("oncpu_ns > 5%", "no spaces"),
    ("oncpu_ns>+5%,,wall_ns>1", "empty budget"),
    ("oncpu_ns>abc", "expected a number"),
    ("", "no budget"),
])
def test_malformed_budget_is_one_line_exit_2(reports, budget, needle):
    base, slow, _ = reports
    r = diff(base, slow, "--fail-on", budget)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and needle in lines[0], r.stderr


def test_bad_inputs(reports, tmp_path):
    base, _, _ = reports
    notjson = tmp_path / "x.json"
    notjson.write_text("{ this is not json")
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"tmabpf": {"schema": 2}, "threads": [], "processes": []}))
    for args, needle in [
        ([base], "expected two reports"),
        ([base, "/nonexistent.json"], "cannot read report"),
        ([base, str(notjson)], "cannot read report"),
        ([base, str(other)], "not a tmabpf JSON report of schema 1"),
        ([base, base, "--top", "-1"], "--top"),
        ([base, base, "--bogus"], "unknown option"),
    ]:
        r = diff(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        assert len(lines) == 1 and needle in lines[0], (args, r.stderr)
