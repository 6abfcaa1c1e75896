# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Probe placement (user/sym/probe_place.h): an entry probe past endbr64 onto an emulated
instruction counts the same calls, returns and counter deltas as one at the symbol, against the
workload's own counts, bpftrace on the same run and llama.cpp's prebuilt libraries; a function
whose loop jumps back to the instruction after endbr64 keeps its symbol's address."""
import os
import re
import signal
import subprocess

import pytest

from conftest import BUILD, load_json, run_tmabpf, within
from wrapped_text import joined
from test_realstacks import (LLAMA_BINS, calls, gguf, llama_cmd, loaded_cpu_backend, need, profile,  # noqa: F401
                             stacks)

PLACEMENT = os.path.join(BUILD, "workloads", "placement")
N = 3000
pytestmark = pytest.mark.skipif(os.uname().machine != "x86_64", reason="placement past endbr64 is x86-64 only")


def rows(report):
    return {f["symbol"]: f for f in report["functions"] if f["tid"] is None}


def run_placement(tmp_path, at, n=N, name=None):
    out = str(tmp_path / (name or f"{at}.json"))
    r = run_tmabpf(["--quiet", "--json", out, "-e", "page-faults", "--probe-at", at, "--uprobe", ":pl_*", "--",
                    PLACEMENT, str(n)])
    assert r.returncode == 0, r.stderr
    assert f'{{"calls": {n}, "sum": {3 * n}}}' in r.stdout, r.stdout
    return load_json(out)


def test_dry_run_shows_placement_and_class():
    r = run_tmabpf(["--dry-run", "--uprobe", ":pl_*", "--", PLACEMENT])
    assert r.returncode == 0, r.stderr
    out = joined(r.stdout)  # (its lines wrap to 80 columns)
    assert re.search(r"placement: 3 probed past endbr64 \(emulated: one trap\), 2 endbr64 kept at the symbol\n", out), out
    assert re.search(r"\n  emulated +\S+ us +pl_endbr_mov \(jcc rel after endbr64 and more; probed at \+0x9, past endbr64 "
                     r"and 2 instructions\)", out), out
    assert re.search(r"\n  emulated +\S+ us +pl_endbr_push \(push %rbp after endbr64; probed at \+0x4, past endbr64\)",
                     out), out
    assert re.search(r"\n  single-stepped +\S+ us +pl_loop_back \(endbr64; at the symbol: endbr64 kept: jb at \+0x\w+ "
                     r"targets \+0x4\)", out), out
    assert re.search(r"\n  single-stepped +\S+ us +pl_endbr_sub \(endbr64; at the symbol: endbr64 then opcode 0x83: "
                     r"not emulated\)", out), out
    assert re.search(r"\n  emulated +\S+ us +pl_push \(push %rbp\)\n", out), out
    off = joined(run_tmabpf(["--dry-run", "--probe-at=symbol", "--uprobe", ":pl_*", "--", PLACEMENT]).stdout)
    assert "placement: every probe at the symbol (--probe-at=symbol)" in off
    assert re.search(r"\n  single-stepped +\S+ us +pl_endbr_push \(endbr64; at the symbol: --probe-at=symbol\)", off)


def test_counts_and_deltas_equal_truth_both_placements(tmp_path):
    """Calls and returns equal the workload's N in both placements, pl_loop_back's too (its loop
    turns through the instruction after endbr64 three times a call); pl_endbr_fault's page faults
    equal the 16 pages it faults each 100th call; the JSON says where each probe was."""
    auto, sym = rows(run_placement(tmp_path, "auto")), rows(run_placement(tmp_path, "symbol"))
    for name in ("pl_endbr_push", "pl_push", "pl_endbr_sub", "pl_loop_back", "pl_endbr_mov"):
        for got in (auto, sym):
            assert (got[name]["calls"], got[name]["returns"], got[name]["unmatched"]) == (N, N, 0), (name, got[name])
    faults = 16 * len(range(0, N, 100))
    for got in (auto, sym):
        f = got["pl_endbr_fault"]
        assert (f["calls"], f["returns"]) == (N // 100, N // 100), f
        assert within(f["counters"]["page-faults"], faults, 0.01, 1), f
    assert auto["pl_endbr_fault"]["counters"]["page-faults"] == sym["pl_endbr_fault"]["counters"]["page-faults"]
    for name, moved in (("pl_endbr_push", 4), ("pl_endbr_fault", 4), ("pl_endbr_mov", 9), ("pl_push", 0),
                        ("pl_endbr_sub", 0), ("pl_loop_back", 0)):
        a, s = auto[name], sym[name]
        assert a["probed_offset"] == a["offset"] + moved, a
        assert a["placement"].startswith("past endbr64") if moved else a["placement"].startswith("symbol"), a
        assert s["probed_offset"] == s["offset"] and s["placement"] == "symbol: --probe-at=symbol", s
    assert auto["pl_loop_back"]["placement"] == "symbol: endbr64 kept: jb at +0xc targets +0x4"
    assert auto["pl_endbr_push"]["entry_class"] == "emulated" and sym["pl_endbr_push"]["entry_class"] == "single-stepped"


def bpftrace_start(prog):
    bt = subprocess.Popen(["bpftrace", "-e", prog], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = ""
    while "Attaching" not in line:  # skip warnings (e.g. RLIMIT_MEMLOCK in containers)
        line = bt.stdout.readline()
        assert line, "bpftrace exited before attaching"
    return bt


def bpftrace_stop(bt):
    bt.send_signal(signal.SIGINT)
    try:
        return bt.communicate(timeout=120)[0]
    except subprocess.TimeoutExpired:
        bt.kill()
        bt.communicate()
        raise


def bpftrace_counts(out, pid):
    """{(probe kind, function): count} of the maps @c[pid, func] and @r[pid, func]."""
    got = {}
    for kind, p, fn, n in re.findall(r"@(\w)\[(\d+), (\w+)\]: (\d+)", out):
        if int(p) == pid:
            got[(kind, fn)] = int(n)
    return got


def test_bpftrace_counts_same_run(tmp_path):
    """bpftrace's entry and return probes at the symbols and tmabpf's past endbr64, on one run:
    every count equal, and equal to N."""
    binary = os.path.realpath(PLACEMENT)
    fns = ("pl_endbr_push", "pl_loop_back", "pl_endbr_sub", "pl_endbr_mov")
    bt = bpftrace_start(" ".join(f"uprobe:{binary}:{f} {{ @c[pid, \"{f}\"] = count(); }} "
                                 f"uretprobe:{binary}:{f} {{ @r[pid, \"{f}\"] = count(); }}" for f in fns))
    try:
        report = run_placement(tmp_path, "auto")
    finally:
        out = bpftrace_stop(bt)
    got = rows(report)
    bt_counts = bpftrace_counts(out, got["pl_endbr_push"]["pid"])
    for f in fns:
        assert bt_counts.get(("c", f)) == bt_counts.get(("r", f)) == got[f]["calls"] == got[f]["returns"] == N, \
            (f, bt_counts, got[f])


def test_llama_counts_equal_both_placements_and_bpftrace(stacks, tmp_path, gguf):  # noqa: F811
    """llama.cpp's prebuilt libraries (built with control-flow protection): ggml's scheduler and tensor
    functions probed past endbr64, and ggml_barrier (in the CPU backend the process keeps) past endbr64
    and the loads and compares before its first branch, count what they count at the symbol, and what
    bpftrace counts at the symbol on the same run."""
    need(stacks, "llama")
    base = os.path.join(LLAMA_BINS, "libggml-base.so")
    backend, proc = loaded_cpu_backend(gguf)
    if not backend:
        pytest.skip("node-llama-cpp kept no libggml-cpu-*.so backend")
    proc.kill()
    proc.wait()
    probes = [(base, f) for f in ("ggml_backend_sched_graph_compute_async", "ggml_backend_sched_alloc_graph",
                                  "ggml_backend_sched_reset", "ggml_backend_tensor_set", "ggml_backend_tensor_get")]
    probes.append((backend, "ggml_barrier"))
    fns = sorted({f for _, f in probes})
    args = [x for lib, f in probes for x in ("--uprobe", f"{lib}:{f}")]
    n = 24
    bt = bpftrace_start(" ".join(f"uprobe:\"{lib}\":{f} {{ @c[pid, \"{f}\"] = count(); }} "
                                 f"uretprobe:\"{lib}\":{f} {{ @r[pid, \"{f}\"] = count(); }}" for lib, f in probes))
    try:
        auto, _ = profile(args, llama_cmd(gguf, n), tmp_path, name="auto.json")
    finally:
        out = bpftrace_stop(bt)
    sym, _ = profile(["--probe-at=symbol"] + args, llama_cmd(gguf, n), tmp_path, name="sym.json")
    a, s = rows(auto), rows(sym)
    assert set(a) == set(s) == set(fns), (sorted(a), sorted(s))
    moved = [f for f in fns if a[f]["placement"].startswith("past endbr64")]
    assert "ggml_barrier" in moved and len(moved) >= 5, {f: a[f]["placement"] for f in fns}
    bt_counts = bpftrace_counts(out, a[fns[0]]["pid"])
    for f in fns:
        assert (a[f]["probed_offset"] > a[f]["offset"]) == (f in moved)
        assert s[f]["probed_offset"] == s[f]["offset"]
        assert a[f]["calls"] == a[f]["returns"] == s[f]["calls"] == s[f]["returns"] > 0, (f, a[f], s[f])
        assert bt_counts.get(("c", f)) == bt_counts.get(("r", f)) == a[f]["calls"], (f, bt_counts, a[f])
    assert calls(auto, "ggml_backend_sched_graph_compute_async") >= n


def test_bad_probe_at():
    r = run_tmabpf(["--probe-at=middle", "--uprobe", ":pl_*", "--", PLACEMENT])
    assert r.returncode == 2 and r.stderr.strip() == "tmabpf: error: bad --probe-at 'middle': expected auto or symbol"
