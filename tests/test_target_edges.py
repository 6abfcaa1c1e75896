# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""-p at the edges: the slice running at stop is counted, and threads of the target that never ran
are listed, blocked for the whole run."""
import subprocess
import time

from conftest import StealMeter, load_json, run_tmabpf


def test_idle_process_listed_blocked(tmp_path):
    p = subprocess.Popen(["sleep", "30"])
    try:
        time.sleep(0.2)
        out = str(tmp_path / "i.json")
        r = run_tmabpf(["--quiet", "--json", out, "-p", str(p.pid), "-d", "0.5"])
    finally:
        p.kill()
        p.wait()
    assert r.returncode == 0, r.stderr
    rep = load_json(out)
    assert [(t["tid"], t["comm"]) for t in rep["threads"]] == [(p.pid, "sleep")]
    t = rep["threads"][0]
    assert t["oncpu_ns"] == 0 and t["offcpu_blocked_ns"] == rep["duration_ns"]
    assert [x["pid"] for x in rep["processes"]] == [p.pid]


def test_idle_threads_of_a_busy_process(tmp_path):
    code = ("import threading, time\n"
            "for i in range(3): threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
            "print(flush=True)\n"
            "t = time.time()\n"
            "while time.time() - t < 30: pass\n")
    p = subprocess.Popen(["/usr/bin/python3", "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        p.stdout.readline()
        time.sleep(0.2)
        out = str(tmp_path / "b.json")
        with StealMeter() as steal:
            r = run_tmabpf(["--quiet", "--json", out, "-p", str(p.pid), "-d", "3"])
    finally:
        p.kill()
        p.wait()
    assert r.returncode == 0, r.stderr
    rep = load_json(out)
    threads = {t["tid"]: t for t in rep["threads"]}
    assert len(threads) == 4, threads.keys()
    busy = threads[p.pid]
    # the busy thread's whole run is accounted, the slice running at stop included (before: 94-96 %
    # on an idle machine, the last slice lost); under load up to ~1.5 % stays uncounted at the
    # start: a thread waiting in the runqueue at attach gets its wait counted from its first switch
    # (a fixed cost: 3 s make it a smaller share than 1 s did); and on-CPU time is the scheduler's
    # runtime, which leaves out hypervisor steal
    total = busy["oncpu_ns"] + busy["offcpu_runqueue_ns"] + busy["offcpu_blocked_ns"]
    assert total >= 0.98 * rep["duration_ns"] - steal.slack(), (total, rep["duration_ns"], steal.ns)
    for tid, t in threads.items():
        if tid != p.pid:
            assert t["oncpu_ns"] == 0 and t["offcpu_blocked_ns"] == rep["duration_ns"], t


def test_sampled_rows_are_estimates_with_uprobes(tmp_path):
    """Each sample gets its thread's counter delta since the thread's previous sample, whatever
    accounting points fell in between (here 80k uprobe hits a second, each one a fold): a thread's
    sampled rows add up to its totals within a sampling period or two, and a row's task-clock
    matches its samples' periods.  Before, a sample got the delta since the last uprobe hit
    (microseconds): the rows summed to a few % of the thread."""
    code = "import os, time\nt = time.time()\nwhile time.time() - t < 1.5: os.getpid()\n"
    out = str(tmp_path / "s.json")
    hz = 499
    r = run_tmabpf(["--quiet", "--json", out, "--sample=%d" % hz, "--uprobe", "libc.so.6:getpid",
                    "--", "/usr/bin/python3", "-c", code])
    assert r.returncode == 0, r.stderr
    rep = load_json(out)
    main = next(t for t in rep["threads"] if t["tid"] == t["pid"])
    rows = [x for x in rep["samples"] if x["tid"] == main["tid"]]
    period = 1e9 / hz
    summed = sum(x["counters"]["task-clock"] for x in rows)
    assert main["counters"]["task-clock"] - 2 * period <= summed <= main["counters"]["task-clock"] + 1e6, \
        (summed, main["counters"]["task-clock"])
    busiest = max(rows, key=lambda x: x["count"])
    assert abs(busiest["counters"]["task-clock"] - busiest["period"]) <= 0.2 * busiest["period"] + 2 * period, busiest
