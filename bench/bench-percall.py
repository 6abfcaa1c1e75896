#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""--per-call cost on llama.cpp (issue: per-token profile).

node-llama-cpp decoding a random GGUF (tests/workloads/llama_decode.mjs, the
real-stack tier's install: scripts/install-realstacks.sh) alone, and under
`tmabpf --per-call libllama:llama_decode` with 10 probes on ggml's graph and
tensor functions, in the same run: every configuration between two baseline
runs and divided by their mean, median over the rounds (bench/benchlib.py).
Prints the tokens/s loss and the probes' calls per token (from the report),
to check the goal's premise (<= 1000 calls per token).  Goal: <= 2 %.

  bench/bench-percall.py [--rounds N] [--tokens N] [--threads N]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TMABPF = os.path.join(ROOT, "build", "tmabpf")
CACHE = os.environ.get("TMABPF_REALSTACKS_CACHE", "/var/cache/tmabpf-realstacks")
BINS = os.path.join(CACHE, "npm", "node_modules", "@node-llama-cpp", "linux-x64", "bins", "linux-x64")
# 5 on ggml's scheduler and tensors (a few calls per token), 5 on the CPU backend's kernels and its
# barrier (hundreds per token: per graph node and thread)
PROBES = ["ggml_backend_sched_graph_compute_async", "ggml_backend_sched_alloc_graph", "ggml_backend_sched_reset",
          "ggml_backend_tensor_set", "ggml_backend_tensor_get"]
CPU_PROBES = ["ggml_barrier", "ggml_compute_forward_mul_mat", "ggml_compute_forward_add",
              "ggml_compute_forward_rms_norm", "ggml_compute_forward_get_rows"]


def cpu_backend(cmd):
    """The libggml-cpu-*.so that llama.cpp loads on this CPU (from a run's maps), or None."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            time.sleep(0.05)
            with open(f"/proc/{p.pid}/maps") as f:
                m = re.search(r"(\S+/libggml-cpu-[\w-]+\.so)", f.read())
            if m:
                return m.group(1)
    finally:
        p.kill()
        p.wait()
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--tokens", type=int, default=96)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    libllama = os.path.join(BINS, "libllama.v0.5.0.so")
    base = os.path.join(BINS, "libggml-base.so")
    if not os.path.exists(libllama) or not os.path.exists(base):
        sys.exit(f"bench-percall: node-llama-cpp is not installed under {CACHE} (scripts/install-realstacks.sh)")
    d = tempfile.mkdtemp(prefix="bench-percall-")
    model = os.path.join(d, "random.gguf")
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tests", "workloads", "gguf_random.py"), model], check=True)
    cmd = ["node", os.path.join(ROOT, "tests", "workloads", "llama_decode.mjs"), os.path.join(CACHE, "npm"), model,
           str(a.tokens), str(a.threads)]
    report = os.path.join(d, "tm.json")
    args = ["--quiet", "--json", report, "--per-call", f"{libllama}:llama_decode"]
    for p in PROBES:
        args += ["--uprobe", f"{base}:{p}"]
    backend = cpu_backend(cmd[:4] + ["100000", cmd[5]])
    if not backend:
        sys.exit("bench-percall: llama.cpp loaded no libggml-cpu-*.so backend")
    for p in CPU_PROBES:
        args += ["--uprobe", f"{backend}:{p}"]
    calls = []

    def on_result(name, r):
        with open(report) as f:
            pc = json.load(f)["per_call"]
        calls.append(sum(v for k, v in pc["calls"].items() if not k.endswith(":llama_decode")))

    configs = [("tmabpf --per-call + 10 probes", lambda: benchlib.run_json([TMABPF, *args, "--", *cmd]))]
    ratios = benchlib.alternate(lambda: benchlib.run_json(cmd), configs, a.rounds, ("tokens_per_s",), on_result)
    name = configs[0][0]
    print(f"per-call overhead: llama.cpp (node-llama-cpp), {a.tokens} tokens, {a.threads} threads, {a.rounds} rounds; "
          "each run divided by the mean of the baseline runs around it")
    print(f"{name:<32} tokens/s loss: {benchlib.loss_summary(ratios[name]['tokens_per_s'])}")
    print(f"probe calls per token (10 probes, median over runs): {sorted(calls)[len(calls) // 2]:.0f}")
    loss = benchlib.median_loss(ratios[name]["tokens_per_s"])
    print(f"goal: <= 2 % tokens/s loss: {loss:.2f} % -> {'met' if loss <= 2 else 'NOT met'} (median; compare with "
          "the spread above)")


if __name__ == "__main__":
    main()
