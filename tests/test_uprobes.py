# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Per-function deltas (--uprobe) against ground truth, OpenBLAS and bpftrace;
bad input; nothing left attached."""
import glob
import os
import signal
import subprocess
import time

import pytest

from conftest import (clock_through_steal, gt_thread, BUILD, DECODER, GROUNDTRUTH, ROOT, TMABPF, StealMeter,
                      load_json, run_tmabpf, within)

OPENBLAS_ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", OPENBLAS_CORETYPE="Haswell")


def funcs(report, tid=None):
    """{symbol: row} for the all-threads aggregate (tid None) or one thread."""
    return {f["symbol"]: f for f in report["functions"] if f["tid"] == tid}


@pytest.fixture(scope="module")
def gt_uprobe_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("gtu")
    gt_out, tm_out = str(d / "gt.json"), str(d / "tm.json")
    with StealMeter() as steal:
        r = run_tmabpf(["--quiet", "--json", tm_out, "--uprobe", ":gt_*", "--", GROUNDTRUTH, "--out", gt_out,
                        "outer:400:200", "sleep:300", "recurse:6:20", "longjmp:30", "migrate:200", "multi:3:4:100"])
    assert r.returncode == 0, r.stderr
    tm = load_json(tm_out)
    tm["_steal_slack_ns"] = steal.slack()
    return load_json(gt_out), tm


def test_exact_call_counts(gt_uprobe_run):
    gt, tm = gt_uprobe_run
    f = funcs(tm)
    expected = {}
    for t in gt["threads"]:
        for name, v in t["functions"].items():
            expected[name] = expected.get(name, 0) + v["calls"]
    assert expected["gt_fault_pages"] == 1 + 3 * 4 and expected["gt_recurse"] == 6
    for name, calls in expected.items():
        assert f[name]["calls"] == calls, name


def test_nested_inclusive_and_self(gt_uprobe_run):
    gt, tm = gt_uprobe_run
    f = funcs(tm, gt_thread(gt, "gt-outer")["tid"])
    outer = gt_thread(gt, "gt-outer")["functions"]["gt_outer"]
    # inclusive: the nested gt_fault_pages' 400 faults; self: none of its own
    assert within(f["gt_outer"]["counters"]["page-faults"], outer["minflt"], 0.01, 1)
    assert f["gt_outer"]["self_counters"]["page-faults"] <= 2
    assert within(f["gt_fault_pages"]["counters"]["page-faults"], 400, 0.01, 1)
    assert f["gt_fault_pages"]["self_counters"]["page-faults"] == f["gt_fault_pages"]["counters"]["page-faults"]
    # on-CPU inside, against CLOCK_THREAD_CPUTIME_ID measured around the call
    assert within(f["gt_outer"]["oncpu_ns"], outer["cpu_ns"], 0.02)
    assert within(f["gt_spin"]["oncpu_ns"], 200e6, 0.02)
    assert f["gt_outer"]["self_oncpu_ns"] < 0.05 * f["gt_outer"]["oncpu_ns"]


def sleep_truth(t):
    """gt_sleep's time off CPU as the workload measured it around the call (wall - CPU), not the
    300 ms asked for: timer slack and the wait for a CPU after the wake-up count too."""
    f = t["functions"]["gt_sleep"]
    return f["wall_ns"] - f["cpu_ns"]


def test_sleeping_function_blocked_time(gt_uprobe_run):
    gt, tm = gt_uprobe_run
    t = gt_thread(gt, "gt-sleep")
    f = funcs(tm, t["tid"])["gt_sleep"]
    assert within(f["offcpu_blocked_ns"], sleep_truth(t), 0.02), (f, t["functions"]["gt_sleep"])
    assert f["oncpu_ns"] < 5e6
    assert within(f["wall_ns"], f["oncpu_ns"] + f["offcpu_blocked_ns"] + f["offcpu_runqueue_ns"], 0.02)


def test_migrating_function(gt_uprobe_run):
    gt, tm = gt_uprobe_run
    t = gt_thread(gt, "gt-migrate")
    f = funcs(tm, t["tid"])["gt_migrate"]
    assert t["migrations"] >= 1, "the workload did not migrate"
    assert within(f["oncpu_ns"], t["functions"]["gt_migrate"]["cpu_ns"], 0.02)
    assert clock_through_steal(f["counters"]["task-clock"], f["oncpu_ns"], 0.02, tm["_steal_slack_ns"]), f


def test_missed_switch_ins_are_inferred(tmp_path):
    """Some hosts never trace switches away from certain tasks (CI's sandbox
    agent), so a thread can run with no switch-in seen.  The test hook makes
    the BPF side ignore about 1 in 3 switch-ins; thread and function sums must
    still match ground truth."""
    gt_out, tm_out = str(tmp_path / "gt.json"), str(tmp_path / "tm.json")
    env = dict(os.environ, TMABPF_TEST_DROP_SWITCH_IN="3")
    with StealMeter() as steal:
        r = run_tmabpf(["--quiet", "--json", tm_out, "--uprobe", ":gt_*", "--", GROUNDTRUTH, "--out", gt_out,
                        "outer:400:200", "sleep:300", "migrate:200", "pinned-pair:100"], env=env)
    assert r.returncode == 0, r.stderr
    gt, tm = load_json(gt_out), load_json(tm_out)
    tt = {t["tid"]: t for t in tm["threads"]}
    assert sum(t["missed_switch_in"] for t in tm["threads"]) > 0, "the test hook dropped nothing"
    for comm, fn in (("gt-outer", "gt_outer"), ("gt-migrate", "gt_migrate")):
        t = gt_thread(gt, comm)
        f = funcs(tm, t["tid"])[fn]
        assert within(f["oncpu_ns"], t["functions"][fn]["cpu_ns"], 0.02), comm
        assert clock_through_steal(f["counters"]["task-clock"], f["oncpu_ns"], 0.02, steal.slack()), (comm, f)
    for comm in ("gt-pin0", "gt-pin1", "gt-outer"):
        t = gt_thread(gt, comm)
        assert within(tt[t["tid"]]["oncpu_ns"], t["cpu_ns"], 0.02), comm
        # counts of inferred slices are time-shares of the CPU's delta: looser
        assert clock_through_steal(tt[t["tid"]]["counters"]["task-clock"], tt[t["tid"]]["oncpu_ns"], 0.05,
                                   steal.slack()), (comm, tt[t["tid"]])
    t = gt_thread(gt, "gt-sleep")
    assert within(funcs(tm, t["tid"])["gt_sleep"]["offcpu_blocked_ns"], sleep_truth(t), 0.02)
    # on-CPU + off-CPU adds up to the thread's traced life, inferred switch-ins
    # or not, less hypervisor steal while it ran: on-CPU is the scheduler's
    # runtime, which excludes steal (CI once saw a thread 9 ms short); steal
    # only takes away, so the slack for it is below alone
    for t in gt["threads"]:
        m = tt[t["tid"]]
        life = m["exit_ns"] - m["first_seen_ns"]
        total = m["oncpu_ns"] + m["offcpu_ns"]
        assert life * 0.98 - 1e6 - steal.slack() <= total <= life * 1.02 + 1e6, (t["comm"], m, steal.ns)


def test_missed_switch_ins_keep_faults_exact(tmp_path):
    """A slice whose switch-in went untraced follows an untracked task's run (CI's sandbox agent;
    here busy loops and idle, with TMABPF_TEST_HIDE_SWITCH ignoring 1 in 2 switches from them whole).  Its
    counter delta is time-shared, except page faults: the task's own min_flt/maj_flt say exactly
    how many were its.  A time-share lost 12-25 % of them (CI once: 369 of 400).  The work is long
    enough for tens of preemptions: at 4 x 5000 pages the thread was switched in 2 times in 1 run of 6
    here, and CI once saw the hook drop neither (each is hidden 1 in 2); at 8 x 25000, 42-49 times."""
    gt_out, tm_out = str(tmp_path / "gt.json"), str(tmp_path / "tm.json")
    env = dict(os.environ, TMABPF_TEST_HIDE_SWITCH="2")
    hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(2)]
    try:
        r = run_tmabpf(["--quiet", "--json", tm_out, "--uprobe", ":gt_fault_pages", "--", GROUNDTRUTH,
                        "--out", gt_out, "--repeat", "8", "fault:25000"], env=env)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    assert r.returncode == 0, r.stderr
    gt, tm = load_json(gt_out), load_json(tm_out)
    t = gt_thread(gt, "gt-fault")
    m = {x["tid"]: x for x in tm["threads"]}[t["tid"]]
    assert m["missed_switch_in"] > 0, ("the test hook dropped nothing", m)
    # page-faults counts a fault the kernel retried once, and the task counts it major (CI once: 200012
    # page-faults against 200001 minor faults): the event's truth is minor + major
    f = t["functions"]["gt_fault_pages"]
    assert funcs(tm, t["tid"])["gt_fault_pages"]["counters"]["page-faults"] == f["minflt"] + f["majflt"], f
    # the thread's whole life: its getrusage totals, give or take its exit's faults after the last one
    # and its first slice (18 over in 1 run of 30: a first sight has no switch-out to count its own
    # faults from, so that slice is time-shared)
    assert abs(m["counters"]["page-faults"] - (t["minflt"] + t["majflt"])) <= 0.001 * t["minflt"] + 20, (m, t)


def test_recursion_counts_each_call_once(gt_uprobe_run):
    gt, tm = gt_uprobe_run
    t = gt_thread(gt, "gt-recurse")
    f = funcs(tm, t["tid"])["gt_recurse"]
    assert f["calls"] == 6 and f["returns"] == 6
    # inclusive time of the outermost call only, not 6 nested inclusive times
    assert within(f["oncpu_ns"], t["functions"]["gt_recurse"]["cpu_ns"], 0.02)
    assert within(f["self_oncpu_ns"], f["oncpu_ns"], 0.02)


def test_longjmp_frames_are_unmatched_not_garbage(gt_uprobe_run):
    gt, tm = gt_uprobe_run
    f = funcs(tm)
    assert f["gt_longjmp_leaf"]["calls"] == 30 and f["gt_longjmp_leaf"]["unmatched"] == 30
    assert f["gt_longjmp_leaf"]["returns"] == 0 and f["gt_longjmp_leaf"]["oncpu_ns"] == 0
    assert f["gt_longjmp_outer"]["returns"] == 30 and f["gt_longjmp_outer"]["unmatched"] == 0
    assert f["gt_longjmp_outer"]["oncpu_ns"] < 1e9


def test_several_threads_same_function(gt_uprobe_run):
    gt, tm = gt_uprobe_run
    for i in range(3):
        t = gt_thread(gt, f"gt-multi{i}")
        f = funcs(tm, t["tid"])["gt_fault_pages"]
        assert f["calls"] == 4
        assert within(f["counters"]["page-faults"], 400, 0.01, 1)
    agg = funcs(tm)["gt_fault_pages"]
    assert agg["tid"] is None and within(agg["counters"]["page-faults"], 400 + 3 * 400, 0.01, 2)


def test_call_stack_slots_run_out(tmp_path):
    """--max-stacks 1: one probed thread at a time has a call stack (a slot, kept until its exit).
    The others' calls are still counted exactly, without deltas, and the run says so; a slot given
    back at exit is reused."""
    gt_out, tm_out = str(tmp_path / "gt.json"), str(tmp_path / "tm.json")
    r = run_tmabpf(["--json", tm_out, "--max-stacks", "1", "--uprobe", ":gt_*", "--", GROUNDTRUTH,
                    "--out", gt_out, "outer:200:100", "multi:3:4:100"])
    assert r.returncode == 0, r.stderr
    gt, tm = load_json(gt_out), load_json(tm_out)
    with_deltas = 0
    for i in range(3):
        f = funcs(tm, gt_thread(gt, f"gt-multi{i}")["tid"])["gt_fault_pages"]
        assert f["calls"] == 4 and f["unmatched"] == 0
        pf = f["counters"]["page-faults"]
        # a thread may get the slot mid-way, when its holder exits: 100 faults per call made with it
        assert any(within(pf, 100 * k, 0.01, 1) for k in range(5)), pf
        with_deltas += pf > 0
    outer = funcs(tm, gt_thread(gt, "gt-outer")["tid"])["gt_outer"]
    assert outer["calls"] == gt_thread(gt, "gt-outer")["functions"]["gt_outer"]["calls"]
    with_deltas += outer["counters"]["page-faults"] > 0
    assert with_deltas >= 1, "no thread got the slot"
    if with_deltas < 4:
        assert "call-stack slots taken" in r.stderr and "--max-stacks" in r.stderr, r.stderr


def test_json_function_contract(gt_uprobe_run):
    _, tm = gt_uprobe_run
    keys = {"module", "symbol", "pid", "tid", "calls", "wall_ns", "oncpu_ns", "offcpu_blocked_ns",
            "offcpu_runqueue_ns", "unmatched", "counters", "self_counters", "tma"}
    assert tm["functions"] and all(keys <= f.keys() for f in tm["functions"])
    assert tm["uprobes"]["functions"] == 8 and tm["uprobes"]["bpf_run_count"] > 0


@pytest.mark.skipif(not os.path.exists(DECODER), reason="decoder not built")
def test_openblas_sgemm_calls(tmp_path):
    """The decoder calls cblas_sgemm 6 times per layer per step: 6 * L * (G + 1) (prefill + G decode steps)."""
    tm_out = str(tmp_path / "tm.json")
    layers, gen = 3, 10
    r = run_tmabpf(["--quiet", "--json", tm_out, "--uprobe", "libopenblas.so.0:cblas_sgemm", "--",
                    DECODER, "--layers", str(layers), "--gen", str(gen)], env=OPENBLAS_ENV)
    assert r.returncode == 0, r.stderr
    f = funcs(load_json(tm_out))["cblas_sgemm"]
    assert f["calls"] == 6 * layers * (gen + 1)
    assert "libopenblas" in f["module"]
    assert f["oncpu_ns"] > 0 and f["returns"] == f["calls"]


def openblas_path():
    return os.path.realpath("/usr/lib/x86_64-linux-gnu/libopenblas.so.0")


@pytest.mark.skipif(not os.path.exists(DECODER), reason="decoder not built")
def test_bpftrace_counts_same_probe(tmp_path):
    tm_out = str(tmp_path / "tm.json")
    # counted per pid: other processes on the host may call cblas_sgemm meanwhile
    bt = subprocess.Popen(["bpftrace", "-e", f"uprobe:{openblas_path()}:cblas_sgemm {{ @calls[pid] = count(); }}"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = ""
    while "Attaching" not in line:  # skip warnings (e.g. RLIMIT_MEMLOCK in containers)
        line = bt.stdout.readline()
        assert line, "bpftrace exited before attaching"
    r = run_tmabpf(["--quiet", "--json", tm_out, "--uprobe", "libopenblas.so.0:cblas_sgemm", "--",
                    DECODER, "--layers", "2", "--gen", "7"], env=OPENBLAS_ENV)
    bt.send_signal(signal.SIGINT)
    out = bt.communicate(timeout=30)[0]
    assert r.returncode == 0, r.stderr
    tm = load_json(tm_out)
    pid = next(f["pid"] for f in tm["functions"] if f["symbol"] == "cblas_sgemm")
    bt_calls = int(out.split(f"@calls[{pid}]:")[1].split()[0])
    assert funcs(tm)["cblas_sgemm"]["calls"] == bt_calls == 6 * 2 * 8


@pytest.fixture(scope="module")
def manyfuncs(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("many"))
    subprocess.run([os.path.join(ROOT, "tests", "workloads", "gen_manyfuncs.sh"), "1000", d], check=True,
                   capture_output=True)
    return d


def test_thousand_functions_all_attach_all_counted(manyfuncs, tmp_path):
    tm_out = str(tmp_path / "tm.json")
    r = run_tmabpf(["--quiet", "--json", tm_out, "--uprobe", f"{manyfuncs}/libmanyfuncs.so:manyf_*", "--",
                    f"{manyfuncs}/manyfuncs_driver", "3"])
    assert r.returncode == 0, r.stderr
    tm = load_json(tm_out)
    f = funcs(tm)
    assert tm["uprobes"]["functions"] == 1000
    assert len(f) == 1000 and all(v["calls"] == 3 for v in f.values())


def uprobe_events():
    p = "/sys/kernel/tracing/uprobe_events"
    return open(p).read().strip() if os.path.exists(p) else ""


def test_ctrl_c_during_heavy_probing_leaves_nothing(manyfuncs):
    drv = subprocess.Popen(["sh", "-c", f"while :; do {manyfuncs}/manyfuncs_driver 50 >/dev/null; done"])
    try:
        p = subprocess.Popen([TMABPF, "--quiet", "-a", "--uprobe", f"{manyfuncs}/libmanyfuncs.so:manyf_*"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        t0 = time.time()
        p.send_signal(signal.SIGINT)
        err = p.communicate(timeout=60)[1]
        assert p.returncode == 0, err
        assert time.time() - t0 < 10, "detaching took too long"
    finally:
        drv.kill()
        drv.wait()
    assert uprobe_events() == ""


def test_attach_to_running_pid(tmp_path):
    gt_out, tm_out = str(tmp_path / "gt.json"), str(tmp_path / "tm.json")
    gt = subprocess.Popen([GROUNDTRUTH, "--delay-ms", "1200", "--out", gt_out, "multi:2:5:20"],
                          stderr=subprocess.DEVNULL)
    r = run_tmabpf(["--quiet", "--json", tm_out, "-p", str(gt.pid), "--uprobe", f"{GROUNDTRUTH}:gt_fault_pages"])
    gt.wait()
    assert r.returncode == 0, r.stderr
    assert funcs(load_json(tm_out))["gt_fault_pages"]["calls"] == 10


def assert_one_line_exit2(r, needle):
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and needle in lines[0], r.stderr


@pytest.mark.parametrize("spec,needle", [
    ("libnosuchlib.so.7:foo", "libnosuchlib.so.7"),
    ("libopenblas.so.0", "expected LIB:"),
    ("libopenblas.so.0:", "empty function glob"),
    ("libopenblas.so.0:sgemm_no_such_kernel_*", "stripped"),
    ("libc.so.6:mallocc", "near matches"),
])
def test_bad_uprobe_specs(spec, needle):
    assert_one_line_exit2(run_tmabpf(["-d", "1", "--uprobe", spec]), needle)


def test_jit_address_rejected():
    # an anonymous executable mapping, as a JIT makes (PROT_RWX, MAP_PRIVATE|MAP_ANONYMOUS)
    code = ("import ctypes,time\n"
            "libc=ctypes.CDLL(None); libc.mmap.restype=ctypes.c_void_p\n"
            "a=libc.mmap(None,4096,7,0x22,-1,0)\n"
            "print(flush=True); time.sleep(30)\n")
    p = subprocess.Popen(["/usr/bin/python3", "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        p.stdout.readline()
        jit = [l.split()[0].split("-")[0] for l in open(f"/proc/{p.pid}/maps")
               if l.split()[1] == "rwxp" and len(l.split()) == 5]
        assert jit, "no anonymous executable mapping"
        r = run_tmabpf(["-p", str(p.pid), "-d", "1", "--uprobe", f"0x{jit[0]}:*"])
        assert_one_line_exit2(r, "JIT")
    finally:
        p.kill()
        p.wait()


@pytest.mark.parametrize("force,mode", [("TMABPF_FORCE_CLASSIC_UPROBES", "(classic uprobes)"),
                                        ("TMABPF_NO_UPROBE_SESSION", "(uprobe_multi)")])
def test_uprobe_fallbacks_count_the_same(tmp_path, force, mode):
    """Kernels without uprobe sessions (< 6.13) get an entry and a return uprobe_multi link per
    library; without uprobe_multi (< 6.6), classic per-function uprobes (both forced here)."""
    gt_out, tm_out = str(tmp_path / "gt.json"), str(tmp_path / "tm.json")
    env = dict(os.environ, **{force: "1"})
    r = run_tmabpf(["--json", tm_out, "--uprobe", ":gt_*", "--", GROUNDTRUTH, "--out", gt_out,
                    "outer:100:20", "recurse:4:5"], env=env)
    assert r.returncode == 0, r.stderr
    assert mode in r.stderr
    f = funcs(load_json(tm_out))
    assert f["gt_outer"]["calls"] == 1 and f["gt_recurse"]["calls"] == 4
    assert within(f["gt_outer"]["counters"]["page-faults"], 100, 0.01, 1)


def test_max_rate_detaches_hot_function(manyfuncs, tmp_path):
    """A function firing above --max-rate is detached, said once, and marked in the report."""
    tm_out = str(tmp_path / "tm.json")
    script = f"for i in $(seq 40); do {manyfuncs}/manyfuncs_driver 20 >/dev/null; sleep 0.05; done"
    r = run_tmabpf(["--quiet", "--json", tm_out, "--max-rate", "50",
                    "--uprobe", f"{manyfuncs}/libmanyfuncs.so:manyf_000[0-1]", "--", "sh", "-c", script])
    assert r.returncode == 0, r.stderr
    tm = load_json(tm_out)
    f = funcs(tm)
    assert f["manyf_0000"]["detached"] and f["manyf_0001"]["detached"]
    assert any("--max-rate" in w and "manyf_0000" in w for w in tm["warnings"])
    assert f["manyf_0000"]["calls"] < 40 * 20, "still counted after detaching"
