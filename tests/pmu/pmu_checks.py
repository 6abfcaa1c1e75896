# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""The emulated-PMU tier's ground truth, guest steps and checks (tests/pmu/pmu_tier.py
runs them; docs/emulated-pmu.md says what each proves).

Truth: tests/pmu/gt_arm64.S retires a number of user-mode instructions known
from its source (the model below); under QEMU's -icount shift=0 the PMU's
instructions and cycles count exactly those.  perf stat, run on the same
command in the guest, checks the model itself.
"""
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from report_schema import check_report, is_report  # noqa: E402  the --json contract, docs/report.schema.json
from percall_windows import rare, torn as torn_windows, untiled  # noqa: E402
from wrapped_text import joined_lines  # noqa: E402  tmabpf check's wrapped lines, joined

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
    return sum(7 + 6 * len(str(a)) for a in (t, r, m, n)) + 12 * t + 19 + top_incl(r, m, n)


def worker(r, m, n):
    return 9 + top_incl(r, m, n)


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
    """3 sigma of a share p over n samples, as the other statistical checks here (1.96, a 95 %
    interval, would fail 1 run in 20 per check from chance alone)."""
    return 3 * math.sqrt(p * (1 - p) / n) if n else 1.0


# ---- -smp 1: exact counts ----

P_PEER = (3, 20, 3, 100)	# T R M N
P_THREADS = (3, 400, 2, 40)	# switch-heavy: a sched_yield per round and thread
P_UPROBES = (2, 30, 3, 50)
P_MUX = (1, 2000, 3, 300)
# 1e8 instructions (0.1 s of guest time: tmabpf, woken by its 50 ms poll, names
# the process' frames while it lives), 100 syscalls: samples land where user code runs
P_SAMPLE = (0, 100, 2, 166666)
P_EVTHREADS = (2, 40, 2, 166666)	# --sample-events with workers: each thread's own estimate
# --sample-events sharing counters: 4 cycle events sampled while perf stat -a holds 6 counters of
# its own (7 counters in all): the kernel rotates them every 4 ms of guest time (4M instructions)
EVMUX_EVENTS = "cycles:u,r11:u,cycles:uh,r11:uh"
P_EVMUX = (0, 1000, 2, 166666)	# 1e9 instructions: 250 rotations (100M, 25 rotations, gave 63-134 %)
EVMUX_PERF = "r8:k,r11:k,r8,r11,r8:u,r11:u"
SAMPLE_HZ = 50000		# 1 per 20,000 cycles of guest time (1 ns per instruction)
P_REENT = (3, 300, 3, 200)
REENT_HZ = 100000
EVSAMPLE_HZ = 40000		# --sample-events: 20,000 samples/s per event (a period of ~50,000 cycles)
P_DAEMON = [(0, 3000, 3, 300), (2, 3000, 3, 300)]
# 10 events on 6 general counters + the cycle counter: multiplexed.  They
# differ in encoding or modifiers only, and all count the same user-mode
# instructions (under shift=0 cycles:u equals instructions:u).
MUX_EVENTS = ["instructions:u", "r8:u", "armv8_pmuv3/event=0x8/u", "instructions:uh", "r8:uh",
              "armv8_pmuv3/event=0x8/uh", "cycles:u", "r11:u", "armv8_pmuv3/event=0x11/u", "cycles:uh"]
# a group of 8 (the cycle counter + 6 general counters take 7)
GROUP = "{cycles:u,instructions:u,r8:u,armv8_pmuv3/event=0x8/u,instructions:uh,r8:uh,armv8_pmuv3/event=0x8/uh,r11:u}"
# the guard's test: 5 counters read per fold, so that a fold is long and a
# sample at 100 kHz often lands inside one
REENT_EVENTS = "instructions:u,r8:u,armv8_pmuv3/event=0x8/u,instructions:uh,r8:uh"
UPROBES = "--uprobe :gt_leaf --uprobe :gt_mid --uprobe :gt_top"

LEFTOVERS = """
# tmabpf programs still loaded (an exited process' fds close asynchronously: poll up to 5 s)
i=0
while [ $i -lt 50 ] && bpftool prog show 2>&1 | grep -q tmabpf; do sleep 0.1; i=$((i + 1)); done
bpftool prog show >/out/leftover_progs.txt 2>&1
bpftool link show >/out/leftover_links.txt 2>&1
"""

EVMUX = f"""
perf stat -a -x, -e {EVMUX_PERF} -o /out/evmux_perf.txt &
ppid=$!
sleep 0.5
{tm("evmux", f"-e {EVMUX_EVENTS} --sample-events={EVSAMPLE_HZ} --quiet", gt_cmd(*P_EVMUX)).rstrip()}
kill -INT $ppid
sleep 0.2
kill -KILL $ppid 2>/dev/null
wait $ppid
"""

DAEMON = f"""
tmabpf daemon -e instructions:u,cycles:u --accounting=switch -I 200 --expire 600 --min-share 0 --no-sample >/out/daemon.out 2>/out/daemon.err &
dpid=$!
i=0
while [ $i -lt 100 ] && ! wget -qO /dev/null http://127.0.0.1:9464/metrics 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
sleep 1
step daemon_gt0 {gt_cmd(*P_DAEMON[0])}
step daemon_gt1 {gt_cmd(*P_DAEMON[1])}
sleep 1
wget -qO /out/metrics.txt http://127.0.0.1:9464/metrics
kill $dpid
wait $dpid
echo $? >/out/daemon.rc
"""

STEPS_SMP1 = "".join([
    f"step perf_peer perf stat -x, -e instructions:u,cycles:u {gt_cmd(*P_PEER)}\n",
    tm("threads", "-e instructions:u,cycles:u", gt_cmd(*P_THREADS)),
    tm("uprobes", f"-e instructions:u,cycles:u --quiet {UPROBES}", gt_cmd(*P_UPROBES)),
    "TMABPF_FORCE_CLASSIC_UPROBES=1 " + tm("uprobes_classic", f"-e instructions:u,cycles:u --quiet {UPROBES}",
                                           gt_cmd(*P_UPROBES)),
    tm("mux", f"-e {','.join(MUX_EVENTS)}", gt_cmd(*P_MUX)),
    f"step group tmabpf -e '{GROUP}' -- {gt_cmd(1, 1, 1, 1)}\n",
    tm("sample", f"-e instructions:u --sample={SAMPLE_HZ} --quiet", gt_cmd(*P_SAMPLE)),
    tm("reentrancy", f"-e {REENT_EVENTS} --sample={REENT_HZ} --quiet {UPROBES}", gt_cmd(*P_REENT)),
    tm("evsample", f"-e cycles:u,instructions:u --sample-events={EVSAMPLE_HZ} --quiet", gt_cmd(*P_SAMPLE)),
    tm("evthreads", f"-e cycles:u --sample-events={EVSAMPLE_HZ} --quiet", gt_cmd(*P_EVTHREADS)),
    EVMUX,
    tm("tma", "--cpu neoverse-n2", gt_cmd(*P_MUX)),
    tm("percall", "-e instructions:u --quiet --per-call :gt_mid --uprobe :gt_leaf", gt_cmd(*P_UPROBES)),
    tm("roofline", "-e instructions:u --quiet --roofline --per-call :gt_mid --uprobe :gt_leaf", gt_cmd(*P_UPROBES)),
    DAEMON,
    "step check tmabpf check\n",
    "step check_n2 tmabpf check --cpu neoverse-n2\n",
    LEFTOVERS,
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
    """Per-thread totals of -e instructions:u,cycles:u against the model; self-cost as a rate."""
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
    s = rep["self"]
    text = o.text("threads.out")
    m = re.search(r"tmabpf: ([\d.]+)% of one CPU \(setup (\d+) ms CPU\)", text)
    res.check("self-cost: a rate over the run, setup apart", m is not None and s["run_cpu_pct"] < 100 and
              s["setup_cpu_ns"] > 0 and abs(float(m.group(1)) - s["run_cpu_pct"]) < 5,
              f"{rep['duration_ns'] / 1e6:.0f} ms run: text {m.group(0) if m else None!r}; JSON run_cpu_pct "
              f"{s['run_cpu_pct']:.2f}, setup_cpu_ns {s['setup_cpu_ns']}")


def uprobe_truth(t, r, m, n):
    """Inclusive and self instructions per call of each function, with the per-hit constants."""
    leaf_incl = leaf(n) + RETURN_HIT
    mid_incl = mid_own(m, n) + m * (ENTRY_HIT + leaf_incl) + RETURN_HIT
    top_inc = top_own(r) + r * (ENTRY_HIT + mid_incl) + RETURN_HIT
    return {"gt_leaf": (leaf_incl, leaf_incl), "gt_mid": (mid_incl, mid_incl - m * leaf_incl),
            "gt_top": (top_inc, top_inc - r * mid_incl)}


def probed_thread_truth(rep, t, r, m, n, calls_per_thread):
    main, workers, want_main, want_worker = thread_truth(rep, t, r, m, n)
    hits = (ENTRY_HIT + RETURN_HIT) * calls_per_thread
    return main + workers, [want_main + hits] + [want_worker + hits] * len(workers)


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
    for ev in ("instructions:u", "cycles:u"):
        for fn, (inc, self_) in uprobe_truth(t, r, m, n).items():
            row = rows.get(fn, {})
            c = calls[fn]
            got = (row.get("counters", {}).get(ev), row.get("self_counters", {}).get(ev))
            res.check(f"{step}: {fn} {ev} inclusive, self", got == (inc * c, self_ * c),
                      f"expected {inc * c}, {self_ * c} ({c} calls x {inc}, {self_}), got {got[0]}, {got[1]}")
    th, want = probed_thread_truth(rep, t, r, m, n, 1 + r + r * m)
    got = [x["counters"]["instructions:u"] for x in th]
    res.check(f"{step}: thread totals exact with {ENTRY_HIT + RETURN_HIT} per probed call", got == want,
              f"expected {want}, got {got}")


def check_uprobes_classic(o, res):
    check_uprobes(o, res, "uprobes_classic")


def check_percall(o, res, step="percall", exact=True, params=P_UPROBES):
    """--per-call :gt_mid on arm64: one iteration per gt_mid call on every thread, M gt_leaf calls in each
    (a probe's calls in a window are the process': one thread only when other threads run on other CPUs),
    also when snapshots were lost (2 CPUs: a call every ~10 us of guest time fills the ring buffer, and an
    entry must pair with its own return), the calling thread's instructions over each window exact
    (gt_mid's inclusive count with the per-hit constants; at least it with 2 CPUs), and every window tiles
    into wall x threads within 1 % (the snapshots read the switch bookkeeping under its seq, whose add must
    be ordered on arm64)."""
    if not o.ran(step, res):
        return
    t, r, m, n = params
    rep = o.json(step + ".json")
    its = rep["iterations"]
    pc = rep["per_call"]
    if exact:
        res.check(f"{step}: one iteration per gt_mid call", len(its) == (t + 1) * r and pc["open"] == 0 and
                  pc["lost"] == 0, f"expected {(t + 1) * r}, got {len(its)} ({pc})")
    else:
        # a call every ~10 us of guest time outruns the ring buffer between two 50 ms drains: snapshots are
        # lost (counted), and an entry pairs only with its own return (their seq), never across a loss
        res.check(f"{step}: iterations of gt_mid calls, snapshots lost counted", 0 < len(its) <= (t + 1) * r and
                  (len(its) == (t + 1) * r or pc["lost"] > 0), f"expected {(t + 1) * r} less losses, got {pc}")
    leaf_calls = sorted({c["calls"] for it in its for k, c in it["calls"].items() if k.endswith(":gt_leaf")})
    if exact or t == 0:
        res.check(f"{step}: gt_leaf calls per iteration exact", leaf_calls == [m], f"expected [{m}], got {leaf_calls}")
    want = uprobe_truth(t, r, m, n)["gt_mid"][0]
    got = sorted({it["counters"]["instructions:u"] for it in its})
    ok = got == [want] if exact else bool(got) and got[0] >= want
    res.check(f"{step}: the calling thread's instructions:u per window {'exact' if exact else 'at least the truth'}",
              ok, f"expected {want}, got {got[:5]}")
    # the process' counters: every thread's; with one thread they are the calling thread's, and on one CPU
    # no other thread runs at a snapshot (nothing unfolded at an edge)
    if t == 0:
        diff = [it["index"] for it in its if it["process_counters"] != it["counters"]]
        res.check(f"{step}: one thread: the process' counters per window are the thread's", not diff and its,
                  f"{len(diff)} windows differ, e.g. {diff[:3]}")
    else:
        low = [it["index"] for it in its
               if it["process_counters"]["instructions:u"] < it["counters"]["instructions:u"]]
        res.check(f"{step}: the process' instructions:u per window at least the calling thread's", not low and its,
                  f"{len(low)} windows below")
    if exact:
        lag = [it["process_counters_unfolded_ns"] for it in its if it["process_counters_unfolded_ns"]]
        res.check(f"{step}: one CPU: no other thread on a CPU at a snapshot, nothing unfolded", not lag,
                  f"{len(lag)} windows with unfolded time, e.g. {lag[:3]}")
    # a window with a torn read is flagged unsure: exactness is for the others, and torn ones must stay rare
    bad, torn = [m[:4] for m in untiled(its) if not m[4]], torn_windows(its)
    res.check(f"{step}: every window without a torn read tiles into wall x threads within 1 %, torn ones "
              f"at most 1 in 1000", not bad and its and rare(len(torn), its),
              f"{len(bad)} of {len(its)} do not: {bad[:3]}; windows with torn reads {len(torn)}: {torn[:3]}")


def check_roofline(o, res):
    """--roofline with --per-call and --uprobe on arm64: the uprobe program with its roofline entry path
    (roof_enter and the ggml node reader, bpf/roof_work.bpf.h) passes arm64's verifier, whose stack
    bound the call chain through percall_emit came near (576 bytes once), and the calls stay exact."""
    if not o.ran("roofline", res):
        return
    t, r, m, n = P_UPROBES
    rep = o.json("roofline.json")
    rows = {f["symbol"]: f["calls"] for f in rep["functions"] if f["tid"] is None}
    res.check("roofline: the uprobe program with the roofline entry path loads; calls exact",
              rep["roofline"] is not None and rows.get("gt_leaf") == (t + 1) * r * m and
              len(rep["iterations"]) == (t + 1) * r,
              f"roofline {rep['roofline'] is not None}, gt_leaf {rows.get('gt_leaf')}, iterations "
              f"{len(rep['iterations'])}")


def check_percall2(o, res):
    check_percall(o, res, "percall2", exact=False, params=P_SMP2)


def check_percall2_one_thread(o, res):
    check_percall(o, res, "percall2_1t", exact=False, params=P_PERCALL_1T)


def check_mux(o, res):
    """10 events on 6 counters: marked scaled, counters_running_pct shown, each within 1 % of the truth."""
    if not o.ran("mux", res):
        return
    rep = o.json("mux.json")
    main, workers, want_main, want_worker = thread_truth(rep, *P_MUX)
    scaled = [e["name"] for e in rep["events"] if e["scaled"]]
    pct = [p for x in main + workers for p in x["counters_running_pct"].values()]
    res.check("mux: events marked scaled, counters_running_pct shown", len(scaled) == len(MUX_EVENTS) and
              pct and max(pct) < 100 and "mux: " in o.text("mux.out") and "*" in o.text("mux.out"),
              f"{len(scaled)} of {len(MUX_EVENTS)} events scaled; running {min(pct):.1f}..{max(pct):.1f} %")
    worst = (0.0, None)
    for x, want in [(x, want_main) for x in main] + [(x, want_worker) for x in workers]:
        for ev in MUX_EVENTS:
            err = abs(x["counters"][ev] - want) / want
            worst = max(worst, (err, f"{ev} tid {x['tid']}: {x['counters'][ev]} vs {want}"))
    res.check("mux: scaled values within 1 % of the truth", worst[0] <= 0.01 and len(workers) == P_MUX[0],
              f"worst {100 * worst[0]:.3f} % ({worst[1]})")


def check_group(o, res):
    """A group that cannot fit: refused with one line, exit status 2."""
    err = [l for l in o.text("group.err").splitlines() if "error:" in l]
    res.check("group of 8 refused with one line", o.rc("group") == 2 and len(err) == 1 and
              "cannot be counted together" in err[0], f"exit {o.rc('group')}, {err}")


def check_sample(o, res):
    """--sample on cycles: per-function shares equal the exact instruction shares within 3 sigma of
    the binomial."""
    if not o.ran("sample", res):
        return
    t, r, m, n = P_SAMPLE
    rep = o.json("sample.json")
    sp = rep["sampling"]
    rows = [s for s in rep["samples"] if s["tid"] is None and s["module"] == "gt_arm64"]
    k = {s["symbol"]: s["count"] for s in rows}
    nu = sum(k.values())
    total = process_total(*P_SAMPLE)
    truth = {"gt_leaf": r * m * leaf(n) / total, "gt_mid": r * mid_own(m, n) / total}
    res.check("sample: on the hardware cycles event", sp["event"] == "cycles" and nu >= 500,
              f"event {sp['event']}, {sp['samples']} samples, {nu} in gt_arm64's code")
    for fn, p in truth.items():
        half = binomial_half(nu, p)
        got = k.get(fn, 0) / nu if nu else 0
        res.check(f"sample: {fn} share = exact instruction share", abs(got - p) <= half,
                  f"{k.get(fn, 0)} of {nu} samples = {100 * got:.2f} %, exact {100 * p:.2f} % +/- {100 * half:.2f}")


def check_evsample(o, res):
    """--sample-events: cycles:u and instructions:u each sampled with its own period; per function, the
    cycles:u estimate (samples x period) equals the exact instruction count within 3/sqrt(samples); the
    process's instructions:u estimate too (QEMU delivers an instructions overflow late, so its samples
    land a little after the function that overflowed: checked per process only)."""
    if not o.ran("evsample", res):
        return
    t, r, m, n = P_SAMPLE
    rep = o.json("evsample.json")
    rows = {s["symbol"]: s for s in rep["samples"] if s["tid"] is None and s["module"] == "gt_arm64"}
    truth = {"gt_leaf": r * m * leaf(n), "gt_mid": r * mid_own(m, n)}
    for fn, want in truth.items():
        row = rows.get(fn, {"counters": {}, "event_samples": {}})
        k = row["event_samples"].get("cycles:u", 0)
        got = row["counters"].get("cycles:u", 0)
        tol = 3 / math.sqrt(k) if k else 1.0
        res.check(f"evsample: {fn} cycles:u estimate = exact instructions", k >= 100 and abs(got - want) <= tol * want,
                  f"{got} from {k} samples, exact {want} (+/- {100 * tol:.1f} %)")
    procs = [p for p in rep["sampled_processes"] if p["comm"] == "gt_arm64"]
    want = process_total(*P_SAMPLE)
    got = procs[0]["counters"].get("instructions:u", 0) if procs else 0
    k = procs[0]["event_samples"].get("instructions:u", 0) if procs else 0
    tol = 3 / math.sqrt(k) if k else 1.0
    res.check("evsample: process instructions:u estimate = exact", k >= 100 and abs(got - want) <= tol * want,
              f"{got} from {k} samples, exact {want} (+/- {100 * tol:.1f} %)")
    res.check("evsample: sampled accounting, no switch program", rep.get("accounting") == "sampled" and
              rep["self"]["switch_run_count"] == 0, f"accounting {rep.get('accounting')}, "
              f"switch program runs {rep['self']['switch_run_count']}")


def check_evthreads(o, res):
    """--sample-events with worker threads and no switch program: each thread's counters are its own
    samples' estimate (task storage), and its cycles:u estimate equals its exact instruction count
    (shift=0: one cycle per instruction) within 3/sqrt(samples).  cycles:u, not instructions:u: with
    instructions:u alone, QEMU raises its overflow interrupt about once a millisecond, not at each
    period (157 samples where 4,800 were due; with cycles:u beside it, as in evsample, it keeps up)."""
    if not o.ran("evthreads", res):
        return
    t, r, m, n = P_EVTHREADS
    rep = o.json("evthreads.json")
    main, workers, want_main, want_worker = thread_truth(rep, t, r, m, n)
    res.check("evthreads: the main thread and every worker reported", len(main) == 1 and len(workers) == t,
              f"{len(main)} main, {len(workers)} workers")
    for x, want in [(x, want_main) for x in main] + [(x, want_worker) for x in workers]:
        k = sum(s["event_samples"]["cycles:u"] for s in rep["samples"] if s["tid"] == x["tid"])
        got = x["counters"]["cycles:u"]
        tol = 3 / math.sqrt(k) if k else 1.0
        res.check(f"evthreads: thread {x['tid']} cycles:u estimate = exact instructions",
                  k >= 100 and abs(got - want) <= tol * want,
                  f"{got} from {k} samples, exact {want} (+/- {100 * tol:.1f} %)")


def check_evmux(o, res):
    """--sample-events with more events than counters (perf stat -a holding 6 of the 7): each event
    samples only while it runs, its periods are scaled by enabled/running, the report says which
    shared counters, and the events' process estimates (each counts the same user cycles, one per
    instruction) have their median within 3/sqrt(samples) + 5 % of the exact count: unscaled, it
    would be ~70 %.  One event may be off more: the hardware cycles event (which can take the
    dedicated cycle counter) read 63 %, 75 % and 83 % of the truth in three runs while the other
    spellings read 78-102 %; not explained yet (docs/emulated-pmu.md)."""
    if not o.ran("evmux", res):
        return
    rep = o.json("evmux.json")
    sp = rep["sampling"]
    ran = {e["name"]: e["running_pct"] for e in sp["events"]}
    res.check("evmux: the events shared counters, and the report says so",
              sp["shared_counters"] != "" and all(p < 95 for p in ran.values()),
              f"shared_counters {sp['shared_counters']!r}, running % {ran}")
    want = process_total(*P_EVMUX)
    procs = [p for p in rep["sampled_processes"] if p["comm"] == "gt_arm64"]
    events = EVMUX_EVENTS.split(",")
    got = {ev: procs[0]["counters"].get(ev, 0) if procs else 0 for ev in events}
    k = min(procs[0]["event_samples"].get(ev, 0) for ev in events) if procs else 0
    tol = (3 / math.sqrt(k) if k else 1.0) + 0.05
    med = sorted(got.values())[len(events) // 2 - 1: len(events) // 2 + 1]
    med = sum(med) / len(med)
    res.check("evmux: the median of the multiplexed, scaled estimates = exact instructions",
              k >= 1000 and abs(med - want) <= tol * want,
              f"median {med:.0f} (+/- {100 * tol:.1f} %), exact {want}; each: " +
              ", ".join(f"{ev} {100 * g / want:.1f} %" for ev, g in got.items()))
    th = threads_of(rep)
    res.check("evmux: the thread's estimates (task storage) are the process's (its rows)",
              bool(procs) and len(th) == 1 and all(abs(th[0]["counters"][ev] - got[ev]) <= 1e-6 * want
                                                   for ev in events),
              f"thread {th[0]['counters'] if th else None}, process {got}")


def check_reentrancy(o, res):
    """Samples at 100 kHz on cycles with --uprobe on a switch-heavy workload: samples land inside folds
    (the guard skips them) and the totals stay exact."""
    if not o.ran("reentrancy", res):
        return
    t, r, m, n = P_REENT
    rep = o.json("reentrancy.json")
    th, want = probed_thread_truth(rep, t, r, m, n, 1 + r + r * m)
    events = REENT_EVENTS.split(",")
    got = [[x["counters"][e] for x in th] for e in events]
    sp = rep["sampling"]
    res.check("reentrancy: samples landed inside folds", sp["folds_interrupted"] > 0,
              f"{sp['folds_interrupted']} of {sp['samples']} samples interrupted a fold")
    res.check("reentrancy: thread totals still exact", all(g == want for g in got),
              f"expected {want} for each of {len(events)} events, got {got}")


def check_tma(o, res):
    """The Neoverse N2 recipe opens its events on armv8_pmuv3; those QEMU does not model read 0, the report
    says so and shows no breakdown."""
    if not o.ran("tma", res):
        return
    rep = o.json("tma.json")
    names = [e["name"] for e in rep["events"]]
    th = threads_of(rep)
    res.check("tma: neoverse-n2 events open on armv8_pmuv3", "STALL_SLOT_BACKEND" in names and
              "CPU_CYCLES" in names and rep["host"]["recipe"] == "neoverse-n2" and
              all(x["counters"]["CPU_CYCLES"] > 0 for x in th), f"events {names}")
    w = [x for x in rep["warnings"] if "read 0 over" in x]
    text = o.text("tma.out")
    ok = (len(w) == 1 and "STALL_SLOT_BACKEND" in w[0] and "not meaningful on this host" in w[0] and
          all(not x["tma"] for x in th) and "tma: off (" in text and "read 0" in text and "Backend_Bound" not in text)
    res.check("tma: zero events named, no clean 0 % breakdown", ok, f"warning {w}; thread tma {[x['tma'] for x in th]}")


def metric(text, name, **labels):
    for line in text.splitlines():
        if line.startswith(name + "{") and all(f'{k}="{v}"' in line for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return None


def check_daemon(o, res):
    """The daemon in the guest, /metrics scraped in the guest after two runs of the workload (1 and 3
    threads).  The daemon counts a pid from its fork, so each process also has the shell's fork child
    before execve: the same code for both; the difference of the two is exact."""
    text = o.text("metrics.txt")
    if not res.check("daemon: serves /metrics in the guest", "tmabpf_events_total" in text and
                     o.text("daemon.rc").strip() == "0", f"{len(text)} bytes; daemon exit {o.text('daemon.rc')!r}; "
                     f"stderr {o.text('daemon.err')[-300:]!r}"):
        return
    got = {}
    for pid, v in re.findall(r'tmabpf_events_total\{[^}]*comm="gt_arm64",pid="(\d+)",event="instructions:u"\} (\S+)',
                             text):
        got[int(pid)] = float(v)
    if not res.check("daemon: a series per workload process", len(got) == 2, f"pids {sorted(got)}"):
        return
    small, big = (got[p] for p in sorted(got))
    want = [process_total(*p) for p in P_DAEMON]
    res.check("daemon: process instructions:u exact (difference of the two runs)", big - small == want[1] - want[0],
              f"model {want[1]} - {want[0]} = {want[1] - want[0]}, daemon {big:.0f} - {small:.0f} = {big - small:.0f}")
    pre = small - want[0]
    res.check("daemon: each process = model + its pre-exec fork child", 0 < pre < 20000 and big - want[1] == pre,
              f"daemon - model: {pre:.0f} and {big - want[1]:.0f} instructions (busybox between fork and execve)")


def check_check(o, res):
    """tmabpf check in the guest: PMU driver found; the calibrated loop agrees with perf stat; with a Neoverse
    recipe, the TMA line says which events read 0."""
    out = o.text("check.out")
    lines = [l for l in joined_lines(out) if l.startswith("PASS")]
    res.check("check: PMU driver and calibrated loop PASS", o.rc("check") == 0 and
              re.search(r"^OK +PMU driver: armv8_pmuv3", out, re.M) is not None and len(lines) == 2,
              "; ".join(lines) or out[-400:])
    out2 = o.text("check_n2.out")
    w = [l for l in joined_lines(out2) if l.startswith("WARN") and "TMA level 1" in l]
    res.check("check --cpu neoverse-n2: TMA L1 not meaningful here, said", o.rc("check_n2") == 0 and len(w) == 1 and
              "STALL_SLOT_BACKEND" in w[0], w[0] if w else out2[-400:])


def check_nothing_left(o, res):
    progs = o.text("leftover_progs.txt")
    links = o.text("leftover_links.txt")
    left = [l for l in progs.splitlines() if "tmabpf" in l]
    res.check("nothing left attached after exit", not left and not links.strip(),
              f"bpftool prog/link show after every run: {left or 'none'}; links: {links.strip()[:200] or 'none'}")


def check_reports_follow_the_schema(o, res):
    """Every --json report the guest wrote (hardware events, TMA, cycles samples) against
    docs/report.schema.json, as conftest.load_json() checks every report of the x86 tests."""
    for name in sorted(n for n in o.f if n.endswith(".json")):
        try:
            doc = json.loads(o.f[name])
        except ValueError:
            continue  # the step's own check reports a broken file
        if not is_report(doc):
            continue
        try:
            check_report(doc, name)
            ok, why = True, ""
        except AssertionError as e:
            ok, why = False, str(e)
        res.check(f"report schema: {name}", ok, why[:2000])


CHECKS_SMP1 = [check_perf_peer, check_threads, check_uprobes, check_uprobes_classic, check_mux, check_group,
               check_sample, check_evsample, check_evthreads, check_evmux, check_reentrancy, check_tma, check_percall, check_roofline, check_daemon, check_check,
               check_reports_follow_the_schema, check_nothing_left]

# ---- -smp 2: migrations and per-CPU behaviour (QEMU's vCPUs share one instruction count: no exact values) ----

P_SMP2 = (3, 2000, 2, 200)	# with "migrate": every thread moves itself to the other CPU 2000 times
P_PERCALL_1T = (0, 8000, 2, 200)	# one thread: a window's probe calls are its own; snapshots are lost
STEPS_SMP2 = "".join([
    tm("smp2", f"-e instructions:u,cycles:u --quiet {UPROBES}", gt_cmd(*P_SMP2) + " migrate"),
    tm("percall2", "-e instructions:u --quiet --per-call :gt_mid --uprobe :gt_leaf", gt_cmd(*P_SMP2) + " migrate"),
    tm("percall2_1t", "-e instructions:u --quiet --per-call :gt_mid --uprobe :gt_leaf",
       gt_cmd(*P_PERCALL_1T) + " migrate"),
    "cat /proc/cpuinfo | grep -c ^processor >/out/ncpus.txt\n",
    LEFTOVERS,
])


def check_smp2(o, res):
    """Two CPUs, every thread moving itself between them after each round: migrations counted, calls exact,
    counts no lower than the truth (the other vCPU's instructions leak into the shared count: only
    bounds)."""
    if not o.ran("smp2", res):
        return
    t, r, m, n = P_SMP2
    rep = o.json("smp2.json")
    # each round is gt_top(1, M, N) and a sched_setaffinity: the plain model of R rounds is a lower bound
    th, want = probed_thread_truth(rep, t, r, m, n, 1 + r + r * m)
    migr = sum(x["migrations"] for x in th)
    res.check("smp2: 2 CPUs, threads migrated", o.text("ncpus.txt").strip() == "2" and migr >= (t + 1) * r // 2 and
              rep["host"]["ncpus"] == 2, f"{o.text('ncpus.txt').strip()} CPUs, {migr} migrations "
              f"({(t + 1) * r} moves asked)")
    rows = {f["symbol"]: f for f in rep["functions"] if f["tid"] is None}
    calls = {"gt_top": (t + 1) * r, "gt_mid": (t + 1) * r, "gt_leaf": (t + 1) * r * m}
    got_calls = {k: rows.get(k, {}).get("calls") for k in calls}
    res.check("smp2: calls exact across migrations", got_calls == calls, f"expected {calls}, got {got_calls}")
    got = [x["counters"]["instructions:u"] for x in th]
    res.check("smp2: per-thread counts at least the truth, at most 4x", len(got) == t + 1 and
              all(w <= g <= 4 * w for g, w in zip(got, want)),
              f"model {want}, got {got}; read errors {rep['self']['counter_read_errors']}")


BOOTS = [(1, STEPS_SMP1, CHECKS_SMP1),
         (2, STEPS_SMP2, [check_smp2, check_percall2, check_percall2_one_thread, check_reports_follow_the_schema,
                          check_nothing_left])]
