#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""--roofline's cost: the same probe on cblas_sgemm (8x8x8 GEMMs, tests/workloads/gemmwork.c tiny)
with and without --roofline, N rounds each in turn.  Prints per call, medians over the rounds:
the roofline program's BPF time (kernel BPF stats) against the --uprobe program's, and the
workload's wall time per call under each (traps included) against the workload alone; ratios of
the same run, never a timed assertion."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TMABPF = os.path.join(ROOT, "build", "tmabpf")
WORK = os.path.join(ROOT, "build", "workloads", "gemmwork")
CALLS = int(os.environ.get("CALLS", "200000"))
ROUNDS = int(os.environ.get("N", "5"))
PROBE = ["--uprobe", "libopenblas.so.0:cblas_sgemm"]


def run(extra):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        t0 = time.monotonic()
        r = subprocess.run([TMABPF, "--quiet", "--json", out, *extra, "--", WORK, "tiny", str(CALLS)],
                           capture_output=True, text=True, timeout=600)
        if r.returncode:
            sys.exit(f"bench-roofline: tmabpf failed: {r.stderr.strip()}")
        with open(out) as f:
            rep = json.load(f)
    up = rep["uprobes"]
    fn = [f for f in rep["functions"] if f["symbol"] == "cblas_sgemm"][0]
    rl = rep.get("roofline") or {}
    return {"uprobe_ns_per_call": up["bpf_run_ns"] / max(fn["calls"], 1),
            "roofline_ns_per_call": rl.get("bpf_run_ns", 0) / max(rl.get("calls", 0), 1) if rl else 0,
            "wall_ns_per_call": fn["wall_ns"] / max(fn["calls"], 1)}


def alone():
    t0 = time.monotonic()
    subprocess.run([WORK, "tiny", str(CALLS)], capture_output=True, check=True)
    return (time.monotonic() - t0) * 1e9 / CALLS


res = {"alone": [], "probe": [], "roofline": []}
for i in range(ROUNDS):
    res["alone"].append(alone())
    res["probe"].append(run(PROBE))
    res["roofline"].append(run(PROBE + ["--roofline", "--roofs", "/nonexistent"]))
med = lambda rows, k: statistics.median(r[k] for r in rows)
up = med(res["probe"], "uprobe_ns_per_call")
rl = med(res["roofline"], "roofline_ns_per_call")
up_with = med(res["roofline"], "uprobe_ns_per_call")
print(f"roofline: {CALLS} calls of cblas_sgemm 8x8x8, {ROUNDS} rounds, medians")
print(f"  BPF ns per call: --uprobe program {up:.0f} ({up_with:.0f} beside --roofline), --roofline program {rl:.0f}: "
      f"ratio roofline/uprobe {rl / up:.2f} (the issue's bound: 0.10)")
print(f"  probed call's own wall ns: --uprobe {med(res['probe'], 'wall_ns_per_call'):.0f}, "
      f"with --roofline {med(res['roofline'], 'wall_ns_per_call'):.0f}: ratio "
      f"{med(res['roofline'], 'wall_ns_per_call') / med(res['probe'], 'wall_ns_per_call'):.2f}; "
      f"the workload alone {statistics.median(res['alone']):.0f} ns per call (process wall, start included)")
