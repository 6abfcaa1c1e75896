# SPDX-License-Identifier: MIT
"""The emulated-PMU tier's ground truth, guest steps and checks (tools/pmu/test_pmu.py
runs them; docs/emulated-pmu.md says what each proves).

Truth: tools/pmu/gt_arm64.S retires a number of user-mode instructions known
from its source (the model below); under QEMU's -icount shift=0 the PMU's
instructions and cycles count exactly those.  perf stat, run on the same
command in the guest, checks the model itself.
"""
import math
import re

GT = "/gt_arm64"

# ---- the workload's exact user-mode instruction counts (gt_arm64.S's header) ----


def leaf(n):
    return 2 * n + 2


def mid_own(m, n):
    return 2 * n + 4 * m + 9


def top_own(r):
    return 7 * r + 11


def top_incl(r, m, n):
    return top_own(r) + r * (mid_own(m, n) + m * leaf(n))


def main_thread(t, r, m, n):
    return sum(7 + 6 * len(str(a)) for a in (t, r, m, n)) + 12 * t + 15 + top_incl(r, m, n)


def worker(r, m, n):
    return 8 + top_incl(r, m, n)


def process_total(t, r, m, n):
    return main_thread(t, r, m, n) + t * worker(r, m, n)


# Constants per probe hit (measured here, docs/emulated-pmu.md): the entry
# probe's BRK retires at EL0 before the entry reading, in the caller's window;
# the return trampoline's BRK retires before the return reading, in the
# callee's window.  The probed first instruction, stepped out of line,
# retires once as without the probe.  A context switch retires nothing at EL0.
ENTRY_HIT = 1
RETURN_HIT = 1
PER_SWITCH = 0


def gt_cmd(t, r, m, n):
    return f"{GT} {t} {r} {m} {n}"


def tm(name, args, cmd):
    """A step running tmabpf with a JSON report into /out/NAME.json."""
    return f"step {name} tmabpf {args} --json /out/{name}.json -- {cmd}\n"


def threads_of(rep):
    return sorted((t for t in rep["threads"] if t["comm"] == "gt_arm64"), key=lambda t: t["tid"])


def thread_truth(rep, t, r, m, n):
    """(main thread, workers) of the report, with their exact counts."""
    th = threads_of(rep)
    main = [x for x in th if x["tid"] == x["pid"]]
    return main, [x for x in th if x["tid"] != x["pid"]], main_thread(t, r, m, n), worker(r, m, n)


def binomial_half(n, p):
    return 1.96 * math.sqrt(p * (1 - p) / n) if n else 1.0


# ---- -smp 1: exact counts ----

P_PEER = (3, 20, 3, 100)	# T R M N
P_THREADS = (3, 400, 2, 40)	# switch-heavy: a sched_yield per round and thread
P_UPROBES = (2, 30, 3, 50)

STEPS_SMP1 = "".join([
    f"step perf_peer perf stat -x, -e instructions:u,cycles:u {gt_cmd(*P_PEER)}\n",
    tm("threads", "-e instructions:u,cycles:u --quiet", gt_cmd(*P_THREADS)),
    tm("uprobes", "-e instructions:u,cycles:u --quiet --uprobe :gt_leaf --uprobe :gt_mid --uprobe :gt_top",
       gt_cmd(*P_UPROBES)),
    "TMABPF_FORCE_CLASSIC_UPROBES=1 " +
    tm("uprobes_classic", "-e instructions:u,cycles:u --quiet --uprobe :gt_leaf --uprobe :gt_mid "
       "--uprobe :gt_top", gt_cmd(*P_UPROBES)),
    "bpftool prog show > /out/leftover_progs.txt 2>&1; bpftool link show > /out/leftover_links.txt 2>&1\n",
])


def check_perf_peer(o, res):
    """perf stat on the same command: the model is right (or the emulator is not exact)."""
    if not o.ran("perf_peer", res):
        return
    want = process_total(*P_PEER)
    got = {}
    for line in o.text("perf_peer.err").splitlines():
        f = line.split(",")
        if len(f) > 3 and f[2] in ("instructions:u", "cycles:u"):
            got[f[2]] = int(f[0])
    for ev in ("instructions:u", "cycles:u"):
        res.check(f"model vs perf stat {ev}", got.get(ev) == want,
                  f"gt_arm64 {' '.join(map(str, P_PEER))}: expected {want}, perf stat {got.get(ev)}")


def check_threads(o, res):
    """Per-thread totals of -e instructions:u,cycles:u against the model."""
    if not o.ran("threads", res):
        return
    rep = o.json("threads.json")
    main, workers, want_main, want_worker = thread_truth(rep, *P_THREADS)
    switches = sum(x["switches_voluntary"] + x["switches_involuntary"] for x in main + workers)
    res.check("threads: all seen", len(main) == 1 and len(workers) == P_THREADS[0],
              f"main {len(main)}, workers {len(workers)} (expected 1 and {P_THREADS[0]})")
    for ev in ("instructions:u", "cycles:u"):
        got = [x["counters"][ev] for x in main + workers]
        want = [want_main] + [want_worker] * len(workers)
        res.check(f"threads: {ev} per thread exact", got == want and switches > P_THREADS[1],
                  f"expected {want}, got {got}; {switches} context switches (constant per switch {PER_SWITCH})")


def check_uprobes(o, res, step="uprobes"):
    """--uprobe: calls exact; self and inclusive instructions of nested functions exact within the per-hit
    constants; thread totals exact with them."""
    if not o.ran(step, res):
        return
    t, r, m, n = P_UPROBES
    rep = o.json(step + ".json")
    rows = {f["symbol"]: f for f in rep["functions"] if f["tid"] is None}
    nthreads = t + 1
    calls = {"gt_top": nthreads, "gt_mid": nthreads * r, "gt_leaf": nthreads * r * m}
    got_calls = {k: rows.get(k, {}).get("calls") for k in calls}
    res.check(f"{step}: calls exact", got_calls == calls, f"expected {calls}, got {got_calls}")
    leaf_incl = leaf(n) + RETURN_HIT
    mid_incl = mid_own(m, n) + m * (ENTRY_HIT + leaf_incl) + RETURN_HIT
    top_inc = top_own(r) + r * (ENTRY_HIT + mid_incl) + RETURN_HIT
    want = {
        "gt_leaf": (leaf_incl, leaf_incl),
        "gt_mid": (mid_incl, mid_incl - m * leaf_incl),
        "gt_top": (top_inc, top_inc - r * mid_incl),
    }
    for ev in ("instructions:u", "cycles:u"):
        for fn, (inc, self_) in want.items():
            row = rows.get(fn, {})
            c = calls[fn]
            got = (row.get("counters", {}).get(ev), row.get("self_counters", {}).get(ev))
            res.check(f"{step}: {fn} {ev} inclusive, self", got == (inc * c, self_ * c),
                      f"expected {inc * c}, {self_ * c} ({c} calls x {inc}, {self_}), got {got[0]}, {got[1]}")
    main, workers, want_main, want_worker = thread_truth(rep, t, r, m, n)
    hits = ENTRY_HIT + RETURN_HIT
    per_thread = 1 + r + r * m
    got = [x["counters"]["instructions:u"] for x in main + workers]
    want = [want_main + hits * per_thread] + [want_worker + hits * per_thread] * t
    res.check(f"{step}: thread totals exact with {hits} per probed call", got == want,
              f"expected {want}, got {got}")


def check_uprobes_classic(o, res):
    check_uprobes(o, res, "uprobes_classic")


def check_nothing_left(o, res):
    progs = o.text("leftover_progs.txt")
    links = o.text("leftover_links.txt")
    left = [l for l in (progs + links).splitlines() if "tmabpf" in l]
    res.check("nothing left attached after exit", not left and "name" not in links,
              f"bpftool prog/link show after every run: {left or 'none'}")


CHECKS_SMP1 = [check_perf_peer, check_threads, check_uprobes, check_uprobes_classic, check_nothing_left]

BOOTS = [(1, STEPS_SMP1, CHECKS_SMP1)]
