#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Sampling overhead benchmark (issue: sampling).

Throughput of a CPU-bound loop (build/workloads/hotfuncs bench: one thread,
pinned to one CPU) alone, under `tmabpf --sample=HZ` and under `perf record
-e cpu-clock -F HZ -g` (both take stacks), at 49, 99 and 999 Hz, and under
tmabpf without --sample (the spine alone).  All in this one run, in ROUNDS
rounds; in each round every configuration runs between two baseline runs
and is divided by their mean, so that the machine's own drift (a shared VM's
speed wanders by several percent over minutes) cancels; the median loss
over the rounds is printed with its spread (bench/benchlib.py).  Two throughputs:
  - per wall second: what the issue asks for; other load on the machine
    preempts the loop and adds noise of several percent;
  - per CPU second of the loop's thread: interrupts (the sample handlers,
    BPF included) are charged to the thread they interrupt (no
    IRQ_TIME_ACCOUNTING), preemption by other load is not; far less noisy.
Also tmabpf's sample-program BPF time (kernel BPF stats) as a share of the
loop's CPU time: the profiler's own cost, free of noise.

  bench/bench-sampling.py [--seconds S] [--rounds N] [--cpu C] [--rates 49,99,999] [--no-spine]

"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOTFUNCS = os.path.join(ROOT, "build", "workloads", "hotfuncs")
TMABPF = os.path.join(ROOT, "build", "tmabpf")
RATES = (49, 99, 999)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=1.5)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--cpu", type=int, default=os.cpu_count() - 1)
    ap.add_argument("--rates", default=",".join(map(str, RATES)), help="comma-separated rates (Hz)")
    ap.add_argument("--no-spine", action="store_true", help="skip tmabpf without --sample")
    a = ap.parse_args()
    rates = [int(x) for x in a.rates.split(",")]
    tmp = tempfile.mkdtemp(prefix="bench-sampling-")
    work = ["taskset", "-c", str(a.cpu), HOTFUNCS, "--seconds", str(a.seconds), "bench"]
    configs = [("baseline", work, None)]
    if not a.no_spine:
        configs.append(("tmabpf (no --sample)", [TMABPF, "--quiet", "--", *work], None))
    for hz in rates:
        js = os.path.join(tmp, f"tm{hz}.json")
        configs.append((f"tmabpf --sample={hz}", [TMABPF, f"--sample={hz}", "--quiet", "--json", js, "--", *work], js))
        configs.append((f"perf record -F {hz} -g", ["perf", "record", "-q", "-e", "cpu-clock", "-F", str(hz), "-g",
                                                     "-o", os.path.join(tmp, "perf.data"), "--", *work], None))
    bpf = {}
    keys = ("units_per_s", "units_per_cpu_s")

    def on_result(name, r):
        js = dict((n, j) for n, _, j in configs)[name]
        if js:
            with open(js) as f:
                rep = json.load(f)
            s, oncpu = rep["sampling"], sum(t["oncpu_ns"] for t in rep["threads"])
            bpf.setdefault(name, []).append((100.0 * s["bpf_run_ns"] / oncpu if oncpu else 0.0,
                                             s["bpf_ns_per_sample"]))

    runs = [(name, (lambda c=cmd: benchlib.run_json(c))) for name, cmd, _ in configs[1:]]
    res = benchlib.alternate(lambda: benchlib.run_json(work), runs, a.rounds, keys, on_result)
    ratios = {name: (res[name][keys[0]], res[name][keys[1]]) for name in res}
    print(f"sampling overhead: hotfuncs bench pinned to CPU {a.cpu}, {a.seconds:g} s runs, {a.rounds} rounds; "
          f"each run divided by the mean of the baseline runs around it")
    print(f"{'config':<24} {'loss per wall s: median [p25 .. p75] (min .. max)':<52} {'loss per CPU s':<40} "
          "tmabpf BPF time / loop CPU time")
    for name, _, js in configs[1:]:
        extra = ""
        if js:
            share = statistics.median(x[0] for x in bpf[name])
            ns = statistics.median(x[1] for x in bpf[name])
            extra = f"{share:.4f} % ({ns:.0f} ns per sample, idle CPUs' included)"
        print(f"{name:<24} {benchlib.loss_summary(ratios[name][0]):<52} {benchlib.loss_summary(ratios[name][1]):<40} "
              f"{extra}")
    for hz in rates:
        t, p = ratios[f"tmabpf --sample={hz}"], ratios[f"perf record -F {hz} -g"]
        print(f"{hz:>4} Hz median loss (wall / cpu): tmabpf {benchlib.median_loss(t[0]):.2f} % / "
              f"{benchlib.median_loss(t[1]):.2f} %, perf record {benchlib.median_loss(p[0]):.2f} % / "
              f"{benchlib.median_loss(p[1]):.2f} %")
    subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
