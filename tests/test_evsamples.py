# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Event sampling (--sample-events): every event sampled with its own period, each sample
weighted by it.  On this host (no PMU) the events are software events whose truth the
ground-truth workload measures itself: its page faults per function (exact: one per page it
writes) and its threads' CPU time.  Estimates must fall within the binomial error of their
sample counts.  --pprof: the same samples as a pprof profile, read by go tool pprof (Debian's
golang-go) as it is.

Nothing runs at context switches: the threads' times and switches come from the task iterator
and their exits, their counts are the estimates of their own event samples (kept in each
thread's task storage), unless a feature that needs per-switch deltas is asked for too."""
import json
import math
import re
import os
import shutil
import signal
import subprocess
import time

import pytest

from conftest import GROUNDTRUTH, ROOT, TMABPF, load_json, run_tmabpf, start_groundtruth, gt_thread, threads_by_tid

REPEAT = 30
FAULT_PAGES = 20000
SPIN_MS = 150


def rel_err(samples):
    """Relative error bound of an estimate from `samples` samples: 3 sigma of a binomial/Poisson
    count (1/sqrt(n)), plus 1 % for the periods' first interval (set before the rate is known)."""
    return 3.0 / math.sqrt(max(samples, 1)) + 0.01


@pytest.fixture(scope="module")
def ev_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("evsamples")
    out, prof = str(tmp / "tm.json"), str(tmp / "tm.pb.gz")
    wl = start_groundtruth([f"fault:{FAULT_PAGES}", f"spin:{SPIN_MS}"], str(tmp / "truth.json"), delay_ms=1500,
                           extra=("--repeat", str(REPEAT)))
    tm = run_tmabpf(["-p", str(wl.pid), "-e", "page-faults,task-clock", "--sample-events",
                     "--json", out, "--pprof", prof], timeout=300)
    _, wl_err = wl.communicate(timeout=300)
    assert wl.returncode == 0, wl_err
    assert tm.returncode == 0, tm.stderr
    return {"pid": wl.pid, "tm": load_json(out), "truth": load_json(str(tmp / "truth.json")), "pprof": prof,
            "stderr": tm.stderr, "tmp": tmp}


def thread_samples(tm, tid, event):
    """The samples of event behind a thread's estimate: its sample rows' (the same samples)."""
    return sum(r["event_samples"][event] for r in tm["samples"] if r["tid"] == tid)


def rows(tm, symbol, tid=None):
    return [r for r in tm["samples"] if r["symbol"] == symbol and r["tid"] == tid]


def test_page_faults_per_function_within_binomial_error(ev_run):
    """gt_fault_pages' estimated page faults = the pages it wrote (exact truth), within the
    binomial error of its samples; gt_spin, which faults nothing, gets no fault samples."""
    tm, truth = ev_run["tm"], ev_run["truth"]
    true_faults = gt_thread(truth, "gt-fault")["functions"]["gt_fault_pages"]["minflt"]
    # the pages it wrote, give or take a page the kernel charged it besides (test_spine's thread once 3001)
    assert REPEAT * FAULT_PAGES <= true_faults <= REPEAT * FAULT_PAGES + 8, true_faults
    (row,) = rows(tm, "gt_fault_pages")
    n = row["event_samples"]["page-faults"]
    assert n >= 100, f"too few page-fault samples ({n}) for a meaningful check"
    est = row["counters"]["page-faults"]
    assert abs(est - true_faults) <= rel_err(n) * true_faults, (est, true_faults, n)
    for r in rows(tm, "gt_spin"):
        assert r["event_samples"]["page-faults"] == 0


def test_task_clock_per_thread_within_binomial_error(ev_run):
    """The spinning thread's estimated task-clock (all its rows: the samples whose leaf is in
    the kernel's timer path too) = its own CLOCK_THREAD_CPUTIME_ID of the work, within the
    binomial error (the work window is all it did while tmabpf watched, but for its setup
    before the barrier, which is microseconds)."""
    tm, truth = ev_run["tm"], ev_run["truth"]
    spin = gt_thread(truth, "gt-spin")
    thr = [r for r in tm["samples"] if r["tid"] == spin["tid"]]
    n = sum(r["event_samples"]["task-clock"] for r in thr)
    est = sum(r["counters"]["task-clock"] for r in thr)
    assert n >= 100
    assert abs(est - spin["cpu_ns"]) <= rel_err(n) * spin["cpu_ns"], (est, spin["cpu_ns"], n)
    gt_spin = sum(r["counters"]["task-clock"] for r in rows(tm, "gt_spin", spin["tid"]))
    assert gt_spin >= 0.5 * spin["cpu_ns"], "most of the spinning thread's samples name gt_spin"


def test_samples_per_event_reported(ev_run):
    """Each event's samples are counted (its error bar) and add up to the process's samples; the
    per-CPU rate is split between the events; no event shares a counter (software events)."""
    tm = ev_run["tm"]
    s = tm["sampling"]
    assert s["events_hz"] == 100 and s["events_freq"] == 50
    by_name = {e["name"]: e for e in s["events"]}
    assert set(by_name) == {"page-faults", "task-clock"}
    assert all(e["sampled"] and e["running_pct"] == 100 for e in by_name.values())
    assert s["shared_counters"] == ""
    (proc,) = [p for p in tm["sampled_processes"] if p["pid"] == ev_run["pid"]]
    for name, e in by_name.items():
        assert proc["event_samples"][name] == e["samples"] > 0
    assert proc["count"] == sum(proc["event_samples"].values())
    assert "sample-events: 2 events at 50 samples/s each per CPU" in ev_run["stderr"]


def go_pprof(args, tmp):
    go = shutil.which("go")
    if not go:
        pytest.skip("go tool pprof: Debian's golang-go is not installed (make deps installs it)")
    env = dict(os.environ, HOME=str(tmp), GOCACHE=str(tmp / "gocache"), GOFLAGS="")
    r = subprocess.run([go, "tool", "pprof", *args], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout


def top_flat(out):
    """{function: flat %} from go tool pprof -top."""
    shares = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 6 and f[1].endswith("%") and f[0][0].isdigit():
            shares[" ".join(f[5:])] = float(f[1].rstrip("%"))
    return shares


def test_go_tool_pprof_reads_the_profile(ev_run):
    """go tool pprof -top lists the hot functions with the shares of the JSON report, for each
    sample type; -raw shows one sample type per event, the labels and build ids."""
    tm, tmp, prof = ev_run["tm"], ev_run["tmp"], ev_run["pprof"]
    raw = go_pprof(["-raw", prof], tmp)
    assert re.search(r"samples/count page-faults/count(\[dflt\])? task-clock/nanoseconds", raw), raw[:300]
    for label in ("pid:[", "thread:[", "comm:["):
        assert label in raw
    exe = [line for line in raw.splitlines() if line.rstrip().endswith("[FN]") and "groundtruth" in line]
    assert exe and re.search(r" [0-9a-f]{40} \[FN\]$", exe[0].rstrip()), "the workload's mapping carries its build id"
    procs = {p["pid"]: p for p in tm["sampled_processes"]}
    for event, hot in (("page-faults", "gt_fault_pages"), ("task-clock", "gt_spin")):
        top = go_pprof(["-top", f"-sample_index={event}", prof], tmp)
        assert f"Type: {event}" in top
        shares = top_flat(top)
        (row,) = rows(tm, hot)
        want = 100.0 * row["counters"][event] / procs[ev_run["pid"]]["counters"][event]
        assert max(shares, key=shares.get) == hot, top
        assert shares[hot] == pytest.approx(want, abs=0.5), top


def test_pprof_format_reads_the_profile(ev_run):
    """pprof-format (the pprof reader of Pyroscope's Node.js SDK, from npm) reads the same profile:
    one sample type per event, each type's total equal to the report's estimate for the process,
    the hot function of each event, the pid/thread/comm labels and the workload's build id."""
    r = subprocess.run([os.path.join(ROOT, "scripts", "install-realstacks.sh"), "pprof"], capture_output=True,
                       text=True, timeout=600)
    m = re.search(r"realstacks: pprof (ok|installed|unavailable)(?:: (.*))?", r.stdout)
    if not m or m.group(1) == "unavailable":
        pytest.skip(f"pprof-format: {m.group(2) if m else r.stdout.strip()}")
    cache = os.environ.get("TMABPF_REALSTACKS_CACHE", "/var/cache/tmabpf-realstacks")
    got = subprocess.run(["node", os.path.join(ROOT, "tests", "pprof_format_read.mjs"),
                          os.path.join(cache, "npm-pprof", "node_modules"), ev_run["pprof"]],
                         capture_output=True, text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    prof = json.loads(got.stdout)
    tm = ev_run["tm"]
    assert prof["types"] == ["samples/count", "page-faults/count", "task-clock/nanoseconds"]
    assert prof["labels"] == ["comm", "pid", "thread"]
    procs = tm["sampled_processes"]
    assert prof["totals"][0] == sum(p["count"] for p in procs)
    for i, event in ((1, "page-faults"), (2, "task-clock")):
        assert prof["totals"][i] == sum(p["counters"][event] for p in procs), (event, prof["totals"])
    leaves = prof["leaves"]
    assert max(leaves, key=lambda f: leaves[f][1]) == "gt_fault_pages"
    assert max(leaves, key=lambda f: leaves[f][2]) == "gt_spin"
    assert any(m["file"].endswith("groundtruth") and re.fullmatch(r"[0-9a-f]{40}", m["build_id"])
               for m in prof["mappings"]), prof["mappings"]


@pytest.mark.parametrize("args, needle", [
    (["--sample-events=0"], "--sample-events rate (Hz)"),
    (["--sample-events=x"], "--sample-events rate (Hz)"),
    (["--pprof", "/tmp/i20-unused.pb.gz"], "--pprof FILE needs --sample or --sample-events"),
])
def test_bad_sample_events_options(args, needle):
    r = run_tmabpf([*args, "-d", "1"])
    assert r.returncode == 2
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def link_tracepoints(pid):
    """The tracepoints the BPF links held by process pid attach to (from /proc/PID/fdinfo)."""
    tps = []
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                info = dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
        except OSError:
            continue
        if "link_type" in info and "tp_name" in info:
            tps.append(info["tp_name"])
    return tps


def test_nothing_runs_at_context_switches(tmp_path):
    """While --sample-events runs, the links tmabpf holds are the task programs' (exit, free),
    the fork follower, exec notices, the iterator and the sampling events: none on sched_switch;
    the report says accounting "sampled" and no switch program ran."""
    out = str(tmp_path / "tm.json")
    # the work starts once the links are seen: the workload cannot end before they are read
    wl = start_groundtruth(["spin:300"], str(tmp_path / "truth.json"), delay_ms=0, extra=["--wait-signal"])
    tm = subprocess.Popen([TMABPF, "-p", str(wl.pid), "-e", "page-faults,task-clock", "--sample-events",
                           "--json", out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    tps = []
    for _ in range(200):
        time.sleep(0.05)
        tps = link_tracepoints(tm.pid)
        if ("sched_process_free" in tps and "sched_process_fork" in tps) or tm.poll() is not None:
            break
    wl.send_signal(signal.SIGUSR1)
    _, err = tm.communicate(timeout=120)
    wl.communicate(timeout=120)
    assert tm.returncode == 0, err
    assert "sched_process_free" in tps and "sched_process_fork" in tps, tps
    assert "sched_switch" not in tps, tps
    assert "accounting: sampled" in err and "nothing runs at context switches" in err, err
    rep = load_json(out)
    assert rep["accounting"] == "sampled"
    assert rep["self"]["switch_run_count"] == 0


def test_thread_counts_are_their_estimates(ev_run):
    """Each thread's counters are its own samples' estimate: the faulting thread's page faults
    and the spinning thread's task-clock equal their truth within the binomial error of their
    samples; the same thread's on-CPU time (task iterator) is its CLOCK_THREAD_CPUTIME_ID."""
    tm, truth = ev_run["tm"], ev_run["truth"]
    assert tm["accounting"] == "sampled" and tm["self"]["thread_estimate_samples_lost"] == 0
    thr = threads_by_tid(tm)
    fault, spin = gt_thread(truth, "gt-fault"), gt_thread(truth, "gt-spin")
    for t, event, want in ((fault, "page-faults", REPEAT * FAULT_PAGES), (spin, "task-clock", spin["cpu_ns"])):
        n = thread_samples(tm, t["tid"], event)
        got = thr[t["tid"]]["counters"][event]
        assert n >= 20, (event, n)
        assert abs(got - want) <= rel_err(n) * want, (t["comm"], event, got, want, n)
    for t in (fault, spin):
        assert abs(thr[t["tid"]]["oncpu_ns"] - t["cpu_ns"]) <= 0.01 * t["cpu_ns"] + 5e6, (thr[t["tid"]], t)


def test_children_followed_and_exits_kept(tmp_path):
    """-- sh -c CMD: the shell's child is followed through the fork program (no switch program),
    and its threads, all exited before the run ends, keep their times and estimates: the
    faulting thread's page faults within the binomial error of the pages it wrote."""
    out, truth_path = str(tmp_path / "tm.json"), str(tmp_path / "truth.json")
    pages = 40000
    r = run_tmabpf(["-e", "page-faults", "--sample-events", "--quiet", "--json", out, "--", "sh", "-c",
                    f"{GROUNDTRUTH} --delay-ms 10 --out {truth_path} fault:{pages}; true"], timeout=120)
    assert r.returncode == 0, r.stderr
    tm, truth = load_json(out), load_json(truth_path)
    assert tm["accounting"] == "sampled"
    fault = gt_thread(truth, "gt-fault")
    (row,) = [t for t in tm["threads"] if t["tid"] == fault["tid"]]
    assert row["exited"], row
    n = thread_samples(tm, fault["tid"], "page-faults")
    assert n >= 100
    assert abs(row["counters"]["page-faults"] - pages) <= rel_err(n) * pages, (row, n)
    assert abs(row["oncpu_ns"] - fault["cpu_ns"]) <= 0.01 * fault["cpu_ns"] + 5e6, (row, fault)


def test_switch_program_kept_when_a_feature_needs_it(tmp_path):
    """--offcpu-stacks (and --uprobe, --per-call, --mem-samples) need per-switch data: the spine
    stays, said in one line, and the threads' counts are exact."""
    out = str(tmp_path / "tm.json")
    r = run_tmabpf(["-e", "page-faults", "--sample-events", "--offcpu-stacks", "--json", out, "--",
                    GROUNDTRUTH, "--delay-ms", "10", "--out", str(tmp_path / "truth.json"), "fault:5000"])
    assert r.returncode == 0, r.stderr
    assert "accounting: per-switch (--offcpu-stacks needs the per-switch program" in r.stderr, r.stderr
    tm, truth = load_json(out), load_json(str(tmp_path / "truth.json"))
    assert tm["accounting"] == "switch" and tm["self"]["switch_run_count"] > 0
    fault = gt_thread(truth, "gt-fault")
    exact = threads_by_tid(tm)[fault["tid"]]["counters"]["page-faults"]
    assert abs(exact - (fault["minflt"] + fault["majflt"])) <= 20, (exact, fault)
