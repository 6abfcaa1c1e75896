# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""--offcpu-stacks: off-CPU time per (thread, stack at switch-out, blocked/runqueue)
against the ground-truth workload (gt_sleep's wall time, pinned threads that
wait for each other's CPU) and against the spine's per-thread
offcpu_blocked_ns / offcpu_runqueue_ns of the same run; folded lines; JSON."""
import os
import re

import pytest

from conftest import DECODER, gt_thread, load_json, read_folded, run_tmabpf, start_groundtruth, threads_by_tid

MS = 300


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("offcpu")
    gt_out, out, folded = str(tmp / "gt.json"), str(tmp / "tm.json"), str(tmp / "tm.folded")
    gt = start_groundtruth([f"sleep:{MS}", f"pinned-pair:{MS}"], gt_out)
    r = run_tmabpf(["-p", str(gt.pid), "--offcpu-stacks", "--json", out, "--folded", folded, "--top", "50",
                    "--width", "200"])  # each stack on one line
    gt.communicate(timeout=60)
    assert gt.returncode == 0
    assert r.returncode == 0, r.stderr
    return {"gt": load_json(gt_out), "tm": load_json(out), "folded": read_folded(folded), "text": r.stdout}


def stacks_of(tm, tid, reason=None):
    return [s for s in tm["offcpu_stacks"] if s["tid"] == tid and (reason is None or s["reason"] == reason)]


def test_sleep_blocked_on_its_stack(run):
    """gt-sleep: ~MS blocked, on the stack run_sleep -> clock_nanosleep -> the kernel's nanosleep.
    gt_sleep itself is not in the user stack: glibc's clock_nanosleep keeps no frame pointer, so a
    frame-pointer walk goes from it straight to gt_sleep's caller (perf --call-graph fp does the same)."""
    t = gt_thread(run["gt"], "gt-sleep")
    truth = t["functions"]["gt_sleep"]["wall_ns"]
    on_chain = sum(s["ns"] for s in stacks_of(run["tm"], t["tid"], "blocked")
                   if "clock_nanosleep" in s["frames"] and "run_sleep" in s["frames"]
                   and "do_nanosleep_[k]" in s["frames"]
                   and s["frames"].index("clock_nanosleep") < s["frames"].index("run_sleep"))
    assert abs(on_chain - truth) <= 0.03 * truth + 2e6, (on_chain, truth)


def test_pinned_pair_runqueue_on_spin_stacks(run):
    """gt-pin0/1 share one CPU: each waits in the runqueue about as long as the other spins,
    and that time is on their spin stacks (run_spin -> gt_spin or its clock reads)."""
    for comm in ("gt-pin0", "gt-pin1"):
        t = gt_thread(run["gt"], comm)
        rows = stacks_of(run["tm"], t["tid"], "runqueue")
        total = sum(s["ns"] for s in rows)
        on_spin = sum(s["ns"] for s in rows if "run_spin" in s["frames"])
        assert total > 0.5 * MS * 1e6, (comm, total)
        assert on_spin >= 0.95 * total, (comm, on_spin, total)
        assert not stacks_of(run["tm"], t["tid"], "blocked") or \
            sum(s["ns"] for s in stacks_of(run["tm"], t["tid"], "blocked")) < 0.05 * total


def test_totals_match_spine(run):
    """Per thread, blocked and runqueue sums over the stacks equal the spine's counters of the same
    run: both measure switch-out to switch-in, and both infer the switch-ins this host does not
    trace.  The spine also counts each thread from the window's start: a thread blocked at attach
    is blocked from then (no stack has it: a stack is taken at a switch-out), the workers until the
    start barrier lets them go (their start_mono_ns), the main thread until it does."""
    tm = run["tm"]
    first_in = {t["tid"]: t["start_mono_ns"] for t in run["gt"]["threads"]}
    for tid, t in threads_by_tid(tm).items():
        waited = max(0, first_in.get(tid, min(first_in.values())) - tm["start_ns"])
        for reason, key in (("blocked", "offcpu_blocked_ns"), ("runqueue", "offcpu_runqueue_ns")):
            got = sum(s["ns"] for s in stacks_of(tm, tid, reason)) + (waited if reason == "blocked" else 0)
            assert abs(got - t[key]) <= 0.03 * t[key] + 2e6, (t["comm"], reason, got, t[key])
    assert tm["offcpu"]["blocked_ns"] == sum(s["ns"] for s in tm["offcpu_stacks"] if s["reason"] == "blocked")
    assert tm["offcpu"]["rows_full"] == 0 and tm["offcpu"]["stack_errors"] == 0


def test_folded_lines(run):
    """Off-CPU folded lines: root marker [blocked]/[runqueue], thread name, user frames root first,
    kernel frames (_[k]) last, weights in microseconds that add up to the JSON's nanoseconds;
    the tracepoint's own frames are not in them."""
    lines = run["folded"]
    assert lines and all(f[0] in ("[blocked]", "[runqueue]") for f, _ in lines)
    tm = run["tm"]
    for reason in ("blocked", "runqueue"):
        us = sum(c for f, c in lines if f[0] == f"[{reason}]")
        ns = tm["offcpu"][f"{reason}_ns"]
        assert abs(us * 1000 - ns) <= 1000 * len(lines) + 1, (reason, us, ns)
    sleep = [f for f, _ in lines if f[1] == "gt-sleep" and f[0] == "[blocked]"]
    assert sleep
    for f in sleep:
        assert f.index("run_sleep") < f.index("clock_nanosleep") < f.index("do_nanosleep_[k]")
        assert not any(x.startswith(("bpf_prog_", "bpf_trace_run", "__traceiter_")) for x in f)


def test_text_table(run):
    assert "off-CPU stacks (--offcpu-stacks" in run["text"]
    assert any("gt-sleep" in l and "blocked" in l and "clock_nanosleep <- run_sleep" in l
               for l in run["text"].splitlines())


def test_with_sample_one_folded_file(tmp_path):
    """--sample and --offcpu-stacks together: one folded file holds both kinds of lines."""
    folded, out = str(tmp_path / "f"), str(tmp_path / "tm.json")
    r = run_tmabpf(["--sample=199", "--offcpu-stacks", "--quiet", "--json", out, "--folded", folded, "--",
                    "sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; sleep 0.2"])
    assert r.returncode == 0, r.stderr
    lines = read_folded(folded)
    assert any(f[0] == "[blocked]" for f, _ in lines)
    assert any(f[0] not in ("[blocked]", "[runqueue]") for f, _ in lines)
    tm = load_json(out)
    assert tm["samples"] and tm["offcpu_stacks"]
    assert any(s["reason"] == "blocked" and s["ns"] > 150e6 for s in tm["offcpu_stacks"])


def test_off_by_default(tmp_path):
    out = str(tmp_path / "tm.json")
    r = run_tmabpf(["--quiet", "--json", out, "--", "true"])
    assert r.returncode == 0, r.stderr
    tm = load_json(out)
    assert tm["offcpu_stacks"] == [] and "offcpu" not in tm


@pytest.mark.skipif(not os.path.exists(DECODER), reason="decoder not built")
def test_folded_unknown_frames_merge(tmp_path):
    """OpenBLAS' worker threads block in its stripped code: --folded names those frames [unknown], one
    box as perf's flame graph has, where each address was its own ("libopenblasp-r0.3.21.so+0x17261a");
    the JSON stacks keep module+0xOFF."""
    folded, js = str(tmp_path / "off.folded"), str(tmp_path / "off.json")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="2", OPENBLAS_CORETYPE="Haswell")
    r = run_tmabpf(["--quiet", "--offcpu-stacks", "--folded", folded, "--json", js, "--",
                    DECODER, "--layers", "4", "--gen", "300"], env=env)  # enough blocking in stripped code
    assert r.returncode == 0, r.stderr
    frames = {f for st, _ in read_folded(folded) for f in st}
    assert not [f for f in frames if re.search(r"\+0x[0-9a-f]+$", f)], sorted(frames)[:10]
    kept = [f for s in load_json(js)["offcpu_stacks"] for f in s["frames"] if "+0x" in f]
    assert kept, "no unnamed frame in the run: nothing was exercised"
