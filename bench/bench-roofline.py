#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""--roofline's cost: the same probe on cblas_sgemm (8x8x8 GEMMs, tests/workloads/gemmwork.c tiny)
with and without --roofline, N rounds each in turn.  With --roofline the probed entry reads the
arguments itself (bpf/uprobes.bpf.c), so the cost is what it adds to the --uprobe program's BPF
time per call (kernel BPF stats; the issue's bound: 10 %), and no --roofline program runs on that
address.  Prints per call, medians over the rounds, and the workload's wall time per call under
each (traps included) against the workload alone; ratios of the same run, never a timed
assertion."""
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
print(f"  the --uprobe program's BPF ns per call: {up:.0f} alone, {up_with:.0f} reading the arguments (--roofline): "
      f"ratio {up_with / up:.3f} (the issue's bound: 1.10); the --roofline program on other addresses {rl:.0f} "
      f"ns per call of its own")
print(f"  probed call's own wall ns: --uprobe {med(res['probe'], 'wall_ns_per_call'):.0f}, "
      f"with --roofline {med(res['roofline'], 'wall_ns_per_call'):.0f}: ratio "
      f"{med(res['roofline'], 'wall_ns_per_call') / med(res['probe'], 'wall_ns_per_call'):.2f}; "
      f"the workload alone {statistics.median(res['alone']):.0f} ns per call (process wall, start included)")
