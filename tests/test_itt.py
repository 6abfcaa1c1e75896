# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""--itt: the ITT API's spans (itt/tmabpf_itt.c) as rows of kind 'i', against peers and ground truth.

- oneDNN (Debian's libdnnl, tests/workloads/dnnlwork.c): the calling thread's span calls per
  primitive kind equal the executions DNNL_VERBOSE=1 prints in the same run, exactly; each span
  of --trace lasts DNNL_VERBOSE's own time of that execution within 5 % where it is over 1 ms
  (oneDNN times the execution inside the span: the span adds the verbose line's printing).
- OpenMP on libiomp5 (tests/workloads/ompbarrier.c: N explicit barriers in T threads): every
  thread has exactly N "sync:OMP Barrier" spans (libomp's __itt_sync_prepare ... _acquired).
- PyTorch (Debian's python3-torch, tests/workloads/convnet.py): every oneDNN span of the calling
  thread lies inside a probed at::_ops::convolution::call span, and its convolution spans equal
  DNNL_VERBOSE's convolution executions (5 of the 10 torch convolutions).
- Bad input: a program without ITT gets one line at the end; a collector the user named already
  is said, and the run goes on; a tmabpf without its collector says where it looked and goes on.
"""
import os
import re
import shutil
import subprocess
import time

import pytest

from conftest import BUILD, ROOT, TMABPF, load_json, run_tmabpf

DNNLWORK = os.path.join(BUILD, "workloads", "dnnlwork")
OMPBARRIER = os.path.join(BUILD, "workloads", "ompbarrier")
COLLECTOR = os.path.join(BUILD, "libtmabpf-itt.so")
KINDS = ("convolution", "matmul", "reorder")

pytestmark = pytest.mark.skipif(not os.path.exists(DNNLWORK), reason="build/workloads/dnnlwork not built "
                                "(libdnnl-dev missing: make deps)")


def verbose_execs(stdout):
    """[(primitive kind, ms)] of DNNL_VERBOSE's exec lines, in order."""
    out = []
    for line in stdout.splitlines():
        f = line.split(",")
        if len(f) > 4 and f[0] in ("onednn_verbose", "dnnl_verbose") and f[1] == "exec":
            out.append((f[3], float(f[-1])))
    return out


def span_kind(name):
    """'dnnl::primitive::execute:convolution' -> 'convolution'."""
    return name.rsplit(":", 1)[-1]


@pytest.fixture(scope="module")
def dnnl_run(tmp_path_factory):
    """One run, the workload at a real-time priority: other work on the host (a build) preempting
    it between the span's begin and oneDNN's own timing would part the two clocks (2.4 ms against
    7.3 ms once, at load 3.5 on 2 CPUs)."""
    d = tmp_path_factory.mktemp("itt")
    js, tr = str(d / "r.json"), str(d / "t.json")
    r = run_tmabpf(["--itt", "--json", js, "--trace", tr, "--",
                    "chrt", "-f", "1", "env", "DNNL_VERBOSE=1", DNNLWORK, "4", "5", "6", "160"])
    assert r.returncode == 0, r.stderr
    return r, load_json(js), load_json(tr)


def test_span_calls_equal_dnnl_verbose(dnnl_run):
    r, rep, _ = dnnl_run
    execs = verbose_execs(r.stdout)
    want = {k: sum(1 for kind, _ in execs if kind == k) for k in KINDS}
    assert want == {"convolution": 4, "matmul": 5, "reorder": 6}, r.stdout[-2000:]
    pid = rep["processes"][0]["pid"]
    itt = [f for f in rep["functions"] if f["module"] == os.path.realpath(COLLECTOR)]
    main = {span_kind(f["symbol"]): f["calls"] for f in itt if f["tid"] == pid}
    assert main == want, (main, want)
    for f in itt:
        assert f["symbol"].startswith("dnnl::primitive::execute:") and f["unmatched"] == 0, f
    assert "no ITT events" not in r.stderr


def test_span_times_match_dnnl_verbose(dnnl_run):
    r, rep, trace = dnnl_run
    execs = verbose_execs(r.stdout)
    pid = rep["processes"][0]["pid"]
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    spans = sorted((e for e in events if e.get("ph") == "X" and e.get("tid") == pid
                    and e["name"].startswith("dnnl::primitive::execute:")), key=lambda e: e["ts"])
    assert [span_kind(e["name"]) for e in spans] == [k for k, _ in execs]
    checked = 0
    for e, (kind, ms) in zip(spans, execs):
        span_ms = e["dur"] / 1e3
        if ms > 1.0:
            checked += 1
            assert abs(span_ms - ms) <= 0.05 * ms, (kind, span_ms, ms)
        assert span_ms >= ms * 0.999, (kind, span_ms, ms)	# the span holds oneDNN's own timing
    assert checked >= 4, execs


def step_execs(stdout):
    """[{primitive kind: executions}] per dnnlwork_step, from DNNL_VERBOSE's lines after each
    'dnnlwork: step i' line."""
    steps = []
    for line in stdout.splitlines():
        if line.startswith("dnnlwork: step "):
            steps.append({})
        elif steps:
            for kind, _ in verbose_execs(line):
                steps[-1][kind] = steps[-1].get(kind, 0) + 1
    return steps


def per_call_run(tmp_path, args, env=()):
    js = str(tmp_path / "r.json")
    r = run_tmabpf([*args, "--per-call", f"{DNNLWORK}:dnnlwork_step", "--json", js, "--",
                    "env", "DNNL_VERBOSE=1", *env, DNNLWORK, "1", "2", "3", "16", "6"])
    assert r.returncode == 0, r.stderr
    truth = step_execs(r.stdout)
    assert len(truth) == 6 and [t["matmul"] for t in truth] == [2, 3] * 3, r.stdout[-2000:]
    return truth, load_json(js)["iterations"]


def test_per_call_tokens_count_their_spans(tmp_path):
    """--per-call's per-token totals take spans (function ids past 64, given a slot at their first
    return): each token's span calls per primitive kind equal its DNNL_VERBOSE executions, exactly
    (DNNL_ITT_TASK_LEVEL=1: the calling thread's spans only, as DNNL_VERBOSE counts executions)."""
    truth, its = per_call_run(tmp_path, ["--itt"], ["DNNL_ITT_TASK_LEVEL=1"])
    prefix = os.path.realpath(COLLECTOR) + ":"
    got = [{span_kind(k): v["calls"] for k, v in it["calls"].items() if k.startswith(prefix)} for it in its]
    assert got == truth, (got, truth)


def test_per_call_tokens_count_functions_past_64(tmp_path):
    """Every function of libdnnl's C API probed (197 ids): dnnl_primitive_execute, past id 64, is
    counted per token, its calls equal to the token's DNNL_VERBOSE executions."""
    truth, its = per_call_run(tmp_path, ["--uprobe", "libdnnl.so.2:dnnl_*"])
    got = [sum(v["calls"] for k, v in it["calls"].items() if k.endswith(":dnnl_primitive_execute")) for it in its]
    assert got == [sum(t.values()) for t in truth], (got, truth)


def test_openmp_barrier_spans_equal_the_barriers(tmp_path):
    n, t = 40, 3
    js = str(tmp_path / "r.json")
    r = run_tmabpf(["--itt", "--json", js, "--", OMPBARRIER, str(n), str(t)])
    assert r.returncode == 0, r.stderr
    rep = load_json(js)
    per_thread = {f["tid"]: f["calls"] for f in rep["functions"]
                  if f["symbol"] == "sync:OMP Barrier" and f["tid"] is not None}
    assert sorted(per_thread.values()) == [n] * t, per_thread
    assert all(f["unmatched"] == 0 for f in rep["functions"]), rep["functions"]
    assert "spans/s" not in r.stderr, r.stderr


def test_pid_that_loaded_the_collector_is_picked_up(tmp_path):
    """-p on a process started with INTEL_LIBITTNOTIFY64 (as a service's unit would): its pairs were
    named before tmabpf attached, so their names come from the collector's table in the process."""
    js = str(tmp_path / "r.json")
    env = dict(os.environ, INTEL_LIBITTNOTIFY64=COLLECTOR)
    w = subprocess.Popen([DNNLWORK, "400000", "0", "0", "16"], env=env, stdout=subprocess.DEVNULL)
    try:
        for _ in range(200):	# until it has loaded the collector (at its first primitive): names made
            with open(f"/proc/{w.pid}/maps") as f:
                if os.path.realpath(COLLECTOR) in f.read():
                    break
            time.sleep(0.05)
        time.sleep(0.2)
        r = run_tmabpf(["-p", str(w.pid), "--itt", "-d", "1", "--json", js])
    finally:
        w.kill()
        w.wait()
    assert r.returncode == 0, r.stderr
    rows = [f for f in load_json(js)["functions"] if f["tid"] == w.pid]
    assert [f["symbol"] for f in rows] == ["dnnl::primitive::execute:convolution"], rows
    assert rows[0]["calls"] > 0 and rows[0]["unmatched"] == 0, rows	# 61 to thousands a second, as loaded
    assert "not loaded the ITT collector" not in r.stderr and "no ITT events" not in r.stderr, r.stderr


def test_pid_without_the_collector_is_told_how_to_start_it():
    w = subprocess.Popen(["sleep", "30"])
    try:
        r = run_tmabpf(["-p", str(w.pid), "--itt", "-d", "0.3"])
    finally:
        w.kill()
        w.wait()
    assert r.returncode == 0, r.stderr
    lines = [l for l in r.stderr.splitlines() if "ITT" in l and "spans of the ITT collector" not in l]
    assert len(lines) == 1, r.stderr
    assert f"pid {w.pid} has not loaded the ITT collector" in lines[0]
    assert f"INTEL_LIBITTNOTIFY64={os.path.realpath(COLLECTOR)}" in lines[0], lines


def torch_available():
    return subprocess.run(["/usr/bin/python3", "-c", "import torch"], capture_output=True).returncode == 0


@pytest.mark.skipif(not torch_available(), reason="python3-torch is not installed (scripts/install-realstacks.sh)")
def test_torch_convolutions_hold_their_onednn_spans(tmp_path):
    js, tr = str(tmp_path / "r.json"), str(tmp_path / "t.json")
    r = run_tmabpf(["--itt", "--json", js, "--trace", tr,
                    "--uprobe", "libtorch_cpu.so:at::_ops::convolution::call", "--",
                    "env", "DNNL_VERBOSE=1", "/usr/bin/python3", os.path.join(ROOT, "tests", "workloads", "convnet.py"),
                    "5"], timeout=300)
    assert r.returncode == 0, r.stderr
    execs = verbose_execs(r.stdout)
    pid = load_json(js)["processes"][0]["pid"]
    trace = load_json(tr)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    main = [e for e in events if e.get("ph") == "X" and e.get("tid") == pid]
    ops = [e for e in main if e["name"].startswith("at::_ops::convolution::call")]
    spans = [e for e in main if e["name"].startswith("dnnl::primitive::execute:")]
    convs = [e for e in spans if span_kind(e["name"]) == "convolution"]
    # torch runs the 3-channel first layer without oneDNN: 5 of the 10 convolutions execute a primitive
    assert len(ops) == 10 and len(convs) == sum(1 for k, _ in execs if k == "convolution") == 5, \
        (len(ops), len(convs), r.stdout[-2000:])
    outside = [e for e in spans
               if not any(o["ts"] <= e["ts"] and e["ts"] + e["dur"] <= o["ts"] + o["dur"] for o in ops)]
    assert not outside, outside


@pytest.mark.parametrize("collector", ["ours", "another"])
def test_pid_started_with_the_variable(collector):
    """A process whose environment names the collector loads it at its first ITT call: not told
    (the end's 'no ITT events' line covers a program that never makes one); one that names
    another collector is told how to start it."""
    other = "/nonexistent/libother_collector.so"
    env = dict(os.environ, INTEL_LIBITTNOTIFY64=COLLECTOR if collector == "ours" else other)
    w = subprocess.Popen(["sleep", "30"], env=env)
    try:
        r = run_tmabpf(["-p", str(w.pid), "--itt", "-d", "0.3"])
    finally:
        w.kill()
        w.wait()
    assert r.returncode == 0, r.stderr
    told = [l for l in r.stderr.splitlines() if f"pid {w.pid}" in l]
    if collector == "ours":
        assert not told and "no ITT events" in r.stderr, r.stderr
    else:
        assert len(told) == 1 and other in told[0] and os.path.realpath(COLLECTOR) in told[0], r.stderr


def test_hot_spans_are_said_once():
    """The hot-probe guard counts spans like calls: barriers back to back (no work between) cost
    the target far more than 5 % of its CPU time (16 % here); 40 barriers (the test above) are not
    said.  -p for 2.5 s on a process started with the variable: the guard looks once a second, and
    a command of fixed length may end before it looks."""
    env = dict(os.environ, INTEL_LIBITTNOTIFY64=COLLECTOR)
    w = subprocess.Popen([OMPBARRIER, "100000000", "2", "0"], env=env, stdout=subprocess.DEVNULL)
    try:
        deadline = time.time() + 10  # the collector is loaded at the runtime's first ITT call
        while "libtmabpf-itt.so" not in open(f"/proc/{w.pid}/maps").read() and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        r = run_tmabpf(["-p", str(w.pid), "--itt", "-d", "2.5"])
    finally:
        w.kill()
        w.wait()
    assert r.returncode == 0, r.stderr
    hot = [l for l in r.stderr.splitlines() if "spans/s" in l]
    assert len(hot) == 1 and "itt: sync:OMP Barrier:" in hot[0] and "DNNL_ITT_TASK_LEVEL" in hot[0], r.stderr
    assert "--max-rate" not in hot[0]	# a span is not detached alone


def test_no_itt_in_target_is_said():
    r = run_tmabpf(["--itt", "--", "/bin/true"])
    assert r.returncode == 0, r.stderr
    assert "no ITT events: the program's libraries do not carry ITT" in r.stderr, r.stderr
    assert len([l for l in r.stderr.splitlines() if "no ITT events" in l]) == 1


def test_collector_named_by_the_user_is_said_and_run_goes_on(tmp_path):
    js = str(tmp_path / "r.json")
    env = dict(os.environ, INTEL_LIBITTNOTIFY64="/nonexistent/libother_collector.so")
    r = run_tmabpf(["--itt", "--json", js, "--", DNNLWORK, "1", "1", "1", "16"], env=env)
    assert r.returncode == 0, r.stderr
    line = [l for l in r.stderr.splitlines() if "INTEL_LIBITTNOTIFY64 names another ITT collector" in l]
    assert len(line) == 1 and "/nonexistent/libother_collector.so" in line[0], r.stderr
    assert "no ITT events" not in r.stderr
    rep = load_json(js)
    assert rep["processes"] and not [f for f in rep["functions"] if f["module"].endswith("libtmabpf-itt.so")]


def test_missing_collector_is_said_and_run_goes_on(tmp_path):
    if os.path.exists("/usr/lib/tmabpf/libtmabpf-itt.so"):
        pytest.skip("an installed collector (/usr/lib/tmabpf) would be found")
    lone = str(tmp_path / "tmabpf")
    shutil.copy(TMABPF, lone)
    r = subprocess.run([lone, "--itt", "--", "/bin/true"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    line = [l for l in r.stderr.splitlines() if "the ITT collector libtmabpf-itt.so is neither beside tmabpf" in l]
    assert len(line) == 1 and "make install" in line[0] and "going on without ITT spans" in line[0], r.stderr
