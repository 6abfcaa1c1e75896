#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""--per-call cost on llama.cpp (issue: per-token profile).

llama.cpp decoding a random GGUF alone, and under
`tmabpf --per-call libllama:llama_decode` with 10 probes on ggml's graph and
tensor functions, in the same run: every configuration between two baseline
runs and divided by their mean, median over the rounds (bench/benchlib.py).
Prints the tokens/s loss and the probes' calls per token (from the report),
to check the goal's premise (<= 1000 calls per token).  Goal: <= 2 %.

llama.cpp's libraries are node-llama-cpp's prebuilt ones (the real-stack
tier's install: scripts/install-realstacks.sh).  The decode loop is
build/bench/llama_step (C, llama.cpp's API from the libraries alone: no node,
less noise around the tokens), or with --driver node
tests/workloads/llama_decode.mjs under node.

  bench/bench-percall.py [--rounds N] [--tokens N] [--threads N] [--driver c|node]
"""
import argparse
import json
import os
import re
import shutil
import statistics
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
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tokens", type=int, default=200)
    # one thread: on 2 vCPUs, two llama threads beside anything else spin at ggml's barrier (20 ms
    # a token against 1.3 ms for one), and the pairs' noise swamps the figure
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--driver", choices=("c", "node"), default="c")
    # a model whose tokens take milliseconds, like a small LLM's (8 layers, 1024 wide: 143 MB of Q8_0,
    # ~5 ms a token on one Zen 4 core); the real-stack tests' default (2 x 128) decodes a token in
    # ~70 us, where one uprobe hit alone is over 2 %
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--embd", type=int, default=1024)
    ap.add_argument("--ff", type=int, default=4096)
    a = ap.parse_args()
    libllama = os.path.join(BINS, "libllama.v0.5.0.so")
    base = os.path.join(BINS, "libggml-base.so")
    if not os.path.exists(libllama) or not os.path.exists(base):
        sys.exit(f"bench-percall: node-llama-cpp is not installed under {CACHE} (scripts/install-realstacks.sh)")
    d = tempfile.mkdtemp(prefix="bench-percall-")
    model = os.path.join(d, "random.gguf")
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tests", "workloads", "gguf_random.py"), model, "--layers",
                    str(a.layers), "--embd", str(a.embd), "--ff", str(a.ff)], check=True)
    if a.driver == "c":
        cmd = [os.path.join(ROOT, "build", "bench", "llama_step"), BINS, model, str(a.tokens), str(a.threads)]
        forever = cmd[:3] + ["100000", cmd[4]]
    else:
        cmd = ["node", os.path.join(ROOT, "tests", "workloads", "llama_decode.mjs"), os.path.join(CACHE, "npm"), model,
               str(a.tokens), str(a.threads)]
        forever = cmd[:4] + ["100000", cmd[5]]
    report = os.path.join(d, "tm.json")
    marker = ["--quiet", "--json", report, "--per-call", f"{libllama}:llama_decode"]
    backend = cpu_backend(forever)
    if not backend:
        sys.exit("bench-percall: llama.cpp loaded no libggml-cpu-*.so backend")
    probes = [(base, p) for p in PROBES] + [(backend, p) for p in CPU_PROBES]
    args = marker + [x for lib, p in probes for x in ("--uprobe", f"{lib}:{p}")]
    # the peer: bpftrace counting the same probes' entries and returns (the same traps, nothing else)
    bt = " ".join(f'uprobe:"{lib}":{p} {{ @c = count(); }} uretprobe:"{lib}":{p} {{ @r = count(); }}'
                  for lib, p in probes)
    calls = []

    def on_result(name, r):
        if name.startswith("tmabpf") and "probes" in name:
            with open(report) as f:
                pc = json.load(f)["per_call"]
            calls.append(sum(v for k, v in pc["calls"].items() if not k.endswith(":llama_decode")))

    configs = [("tmabpf --per-call, marker only", lambda: benchlib.run_json([TMABPF, *marker, "--", *cmd])),
               ("tmabpf --per-call + 10 probes", lambda: benchlib.run_json([TMABPF, *args, "--", *cmd]))]
    if shutil.which("bpftrace"):
        configs.append(("bpftrace: the 10 probes counted",
                        lambda: benchlib.run_json(["bpftrace", "-q", "-e", bt, "-c", " ".join(cmd)])))
    base_runs = []

    def baseline():
        base_runs.append(benchlib.run_json(cmd))
        return base_runs[-1]

    ratios = benchlib.alternate(baseline, configs, a.rounds, ("tokens_per_s",), on_result)
    print(f"per-call overhead: llama.cpp ({'llama_step' if a.driver == 'c' else 'node-llama-cpp'}), "
          f"{a.layers} x {a.embd} model, {a.tokens} tokens, {a.threads} threads, {a.rounds} rounds; "
          "each run divided by the mean of the baseline runs around it")
    for name, _ in configs:
        print(f"{name:<34} tokens/s loss: {benchlib.loss_summary(ratios[name]['tokens_per_s'])}")
    per_token = sorted(calls)[len(calls) // 2]
    print(f"probe calls per token (10 probes, median over runs): {per_token:.0f}")
    loss = benchlib.median_loss(ratios[configs[1][0]]["tokens_per_s"])
    marker_loss = benchlib.median_loss(ratios[configs[0][0]]["tokens_per_s"])
    print(f"goal: <= 2 % tokens/s loss: {loss:.2f} % -> {'met' if loss <= 2 else 'NOT met'} (median; compare with "
          "the spread above)")
    # what one probed call costs, from the tokens' time: the loss past the marker's, per call
    base_s = 1 / statistics.median(r["tokens_per_s"] for r in base_runs)
    if per_token:
        us = (loss - marker_loss) / 100 / (1 - loss / 100) * base_s / per_token * 1e6
        print(f"one probed call (entry and return) costs about {us:.1f} us of the token's time here; 2 % of a "
              f"token allows {per_token:.0f} such calls in tokens of {per_token * us / 0.02 / 1000:.0f} ms or longer")
    if len(configs) > 2:
        bl = benchlib.median_loss(ratios[configs[2][0]]["tokens_per_s"])
        print(f"bpftrace on the same probes: {bl:.2f} % (tmabpf {loss:.2f} %): the traps, not the programs, cost")


if __name__ == "__main__":
    main()
