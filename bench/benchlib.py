# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Shared method of the overhead benchmarks (bench/bench-*.py).

A profiler's overhead is a few percent or less, while this kind of VM's
speed wanders by several percent over minutes.  So every configuration runs
between two baseline runs and is divided by their mean, configurations take
turns within a round, and the median over the rounds is the figure; the
spread (25th to 75th percentile and min to max) is printed beside it so that
a reader can see whether a difference is larger than the noise.
"""
import json
import math
import statistics
import subprocess
import sys


def run_json(cmd, env=None, timeout=600):
    """Run cmd; return the first stdout line that is a JSON object."""
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if out.returncode != 0:
        sys.exit(f"benchmark: {' '.join(cmd)} failed (exit {out.returncode}): {out.stderr.strip()[-500:]}")
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    sys.exit(f"benchmark: {' '.join(cmd)} printed no JSON line: {out.stdout.strip()[-300:]}")


def alternate(baseline, configs, rounds, keys, on_result=None):
    """baseline(): one baseline run's result (a dict).  configs: [(name, run)]
    where run() returns a dict with the same keys.  Returns {name: {key:
    [ratio per round]}}, each ratio = result[key] / mean(baseline before,
    baseline after).  on_result(name, result) sees every configuration's run."""
    ratios = {name: {k: [] for k in keys} for name, _ in configs}
    for _ in range(rounds):
        before = baseline()
        for name, run in configs:
            r = run()
            after = baseline()
            for k in keys:
                ratios[name][k].append(r[k] / ((before[k] + after[k]) / 2))
            if on_result:
                on_result(name, r)
            before = after
    return ratios


def loss_summary(values):
    """'median loss % [p25 .. p75] (min .. max)' of ratios, as throughput loss."""
    loss = sorted(100.0 * (1.0 - v) for v in values)
    if len(loss) >= 4:
        q = statistics.quantiles(loss, n=4)
        iqr = f" [{q[0]:.2f} .. {q[2]:.2f}]"
    else:
        iqr = ""
    return f"{statistics.median(loss):6.2f} %{iqr} ({loss[0]:.2f} .. {loss[-1]:.2f})"


def median_loss(values):
    return 100.0 * (1.0 - statistics.median(values))


def paired_summary(a, b):
    """Round by round, loss of a minus loss of b (ratios from alternate(), so
    both runs of a round share the baselines around them): 'median pp [p25 ..
    p75]; a lower in k of n rounds (sign test p=...)'.  Slow drift of the
    machine cancels in the difference; the sign test says whether a's lead or
    lag is more than chance."""
    diff = sorted(100.0 * (vb - va) for va, vb in zip(a, b))
    n = len(diff)
    lower = sum(d < 0 for d in diff)
    ties = sum(d == 0 for d in diff)
    m = n - ties
    k = min(lower, m - lower)
    p = min(1.0, 2 * sum(math.comb(m, i) for i in range(k + 1)) / 2 ** m) if m else 1.0
    q = statistics.quantiles(diff, n=4) if n >= 4 else None
    iqr = f" [{q[0]:+.2f} .. {q[2]:+.2f}]" if q else ""
    return f"{statistics.median(diff):+.2f} pp{iqr}; lower in {lower} of {n} rounds (sign test p={p:.2f})"
