# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""The daemon's sampled accounting (--accounting=sampled; auto's choice on PMU hosts whose events
need hardware counters): every event sampled with its own period, nothing at context switches.
On this host the events are software events whose truth the ground-truth workload measures
itself: its page faults (one per page it writes) and its CPU time."""
import json
import os
import re
import subprocess
import time

import pytest

from conftest import GROUNDTRUTH, TMABPF, load_json
from daemon_util import Daemon, select

REPEAT = 30
PAGES = 20000


def value(samples, name, **labels):
    ((_, v),) = select(samples, name, **labels)
    return v


def test_estimates_match_ground_truth(tmp_path):
    # every process exported (--top-procs): on a busy host, a process whose slot a busier one takes loses
    # its series, and the samples in it no longer add up to the host's (729 of 730, 1146 of 1170 seen)
    with Daemon("--accounting=sampled", "-e", "page-faults,task-clock", "--min-share", "0", "-I", "500",
                "--top-procs", "100000") as d:
        assert "accounting: sampled (--accounting=sampled;" in d.stderr()
        assert "sampled accounting: 2 events at 50 samples/s each per CPU" in d.stderr()
        out = tmp_path / "gt.json"
        wl = subprocess.run([GROUNDTRUTH, "--delay-ms", "300", "--out", str(out), "--repeat", str(REPEAT),
                             f"fault:{PAGES}", "spin:150"], capture_output=True, text=True, timeout=120)
        assert wl.returncode == 0, wl.stderr
        m = d.metrics_after()  # the exits folded
        assert d.stop() == 0
    truth = load_json(str(out))
    pid = str(truth["pid"])
    faults = value(m, "tmabpf_events_total", pid=pid, event="page-faults")
    cpu = value(m, "tmabpf_events_total", pid=pid, event="task-clock") / 1e9
    n = value(m, "tmabpf_event_samples_total", event="page-faults")
    assert n >= 300, n
    # the process's own accounting (getrusage, setup and exec included) within the sampling error:
    # ~1000 samples of its faults (3/sqrt(1000) = 10 %)
    assert faults == pytest.approx(truth["process_minflt"], rel=0.10), (faults, truth["process_minflt"])
    assert cpu == pytest.approx(truth["process_cpu_ns"] / 1e9, rel=0.10, abs=0.05)
    # the samples behind the process' own estimate: its error follows from them, and every process'
    # (and the [other] rows') add up to the host's
    ps = value(m, "tmabpf_process_event_samples_total", pid=pid, event="page-faults")
    assert 100 <= ps <= n, (ps, n)
    assert abs(faults - truth["process_minflt"]) <= 3 * truth["process_minflt"] / ps ** 0.5, (faults, ps)
    every = sum(v for _, v in select(m, "tmabpf_process_event_samples_total", event="page-faults"))
    assert every == n, (every, n)
    info = select(m, "tmabpf_build_info")[0][0]
    assert info["accounting"] == "sampled"
    assert select(m, "tmabpf_bpf_run_seconds_total", programs="event_sampling")


@pytest.mark.parametrize("args, needle", [
    (["--accounting=sampled", "--uprobe", "/usr/lib/x86_64-linux-gnu/libc.so.6:malloc"],
     "--accounting=sampled: --uprobe needs exact per-switch deltas"),
    (["--events-hz", "0"], "--events-hz"),
    (["--accounting=bogus"], "auto, tasks, sampled or switch"),
])
def test_bad_sampled_options(args, needle):
    r = subprocess.run([TMABPF, "daemon", "--listen", "127.0.0.1:0", "-d", "1", *args], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) <= 2, r.stderr


def test_budget_lowers_the_events_rate():
    """Over --max-overhead even at the stack sampler's lowest rate: the events' rate halves, one line
    each time, never below 10 samples/s per CPU."""
    r = subprocess.run([TMABPF, "daemon", "--listen", "127.0.0.1:0", "-d", "6", "--accounting=sampled",
                        "-e", "page-faults,task-clock", "--max-overhead", "0.001", "--events-hz", "1000"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rates = [float(x) for x in re.findall(r"sampled accounting lowered to (\d+) samples/s per CPU", r.stderr)]
    assert rates and rates == sorted(rates, reverse=True) and rates[0] == 500 and rates[-1] >= 10, r.stderr


def test_profile_has_the_events_sample_types(tmp_path):
    """Sampled accounting: a /debug/pprof/profile carries one sample type per event after samples
    and cpu, its event samples with stacks (taken only while the profile is).  The ground-truth
    workload faults PAGES pages per round inside the profile's window: the page-fault estimates of
    the stacks through gt_fault_pages add up to that within the error of the process' samples,
    and go tool pprof reads the type."""
    import threading
    from test_daemon_pprof import fetch, go_pprof, parse_raw
    repeat = 10
    with Daemon("--accounting=sampled", "-e", "page-faults,task-clock", "--events-hz", "400", "--max-overhead", "5",
                "--min-share", "0", "-I", "500") as d:
        res = []
        t = threading.Thread(target=lambda: res.append(fetch(d, "/debug/pprof/profile?seconds=6")))
        t.start()
        time.sleep(0.5)
        out = tmp_path / "gt.json"
        wl = subprocess.run([GROUNDTRUTH, "--delay-ms", "200", "--out", str(out), "--repeat", str(repeat),
                             f"fault:{PAGES}"], capture_output=True, text=True, timeout=120)
        assert wl.returncode == 0, wl.stderr
        t.join(60)
        m = d.metrics_after()
        assert d.stop() == 0
    status, body, _ = res[0]
    assert status == 200, body[:200]
    truth = load_json(str(out))
    pid = str(truth["pid"])
    prof = tmp_path / "s.pb.gz"
    prof.write_bytes(body)
    raw = go_pprof(["-raw", str(prof)], tmp_path)
    assert re.search(r"samples/count cpu/nanoseconds(\[dflt\])? page-faults/count task-clock/nanoseconds", raw), raw[:300]
    locs, samples = parse_raw(raw)
    mine = [x for x in samples if x["labels"].get("pid") == pid]
    faults = sum(x["values"][2] for x in mine if any(locs.get(l) == "gt_fault_pages" for l in x["locs"]))
    ps = value(m, "tmabpf_process_event_samples_total", pid=pid, event="page-faults")
    assert ps >= 100, ps
    want = PAGES * repeat
    print(f"page faults through gt_fault_pages: {faults} of {want}, {ps:.0f} samples")
    assert abs(faults - want) <= (3 / ps ** 0.5 + 0.02) * want, (faults, want, ps)
    top = go_pprof(["-top", "-sample_index=page-faults", str(prof)], tmp_path)
    assert "Type: page-faults" in top, top[:300]


def fault_rounds(d, tmp_path, repeat, profiles):
    """The ground-truth workload's PAGES page faults a round, repeat rounds, while the profiles
    (their threads) are taken; then their ends, the daemon's metrics once the exits are in, and its
    stop: (the workload's truth, the metrics)."""
    out = tmp_path / "gt.json"
    wl = subprocess.run([GROUNDTRUTH, "--delay-ms", "200", "--out", str(out), "--repeat", str(repeat),
                         f"fault:{PAGES}"], capture_output=True, text=True, timeout=120)
    assert wl.returncode == 0, wl.stderr
    for t in profiles:
        t.join(60)
    m = d.metrics_after()
    assert d.stop() == 0
    return load_json(str(out)), m


def test_concurrent_profiles_each_have_the_events(tmp_path):
    """Sampled accounting, two profiles taken at once (their own slots, asked 0.3 s apart; the old
    daemon refused the second with 429), both over the whole workload: each has the ground-truth
    workload's PAGES page faults per round through gt_fault_pages, within the error of the
    process' samples: the events' stacks stay on while either is taken, and the rows the first
    one's end reads go into it alone (the second gets them at the next drain)."""
    import threading
    from test_daemon_pprof import fetch, go_pprof, parse_raw
    repeat = 10
    with Daemon("--accounting=sampled", "-e", "page-faults,task-clock", "--events-hz", "400", "--max-overhead", "5",
                "--min-share", "0", "-I", "500") as d:
        res = [None, None]

        def one(i, secs):
            res[i] = fetch(d, f"/debug/pprof/profile?seconds={secs}")

        ts = [threading.Thread(target=one, args=(0, 7)), threading.Thread(target=one, args=(1, 6))]
        ts[0].start()
        time.sleep(0.3)
        ts[1].start()
        time.sleep(0.5)
        truth, m = fault_rounds(d, tmp_path, repeat, ts)
    pid = str(truth["pid"])
    ps = value(m, "tmabpf_process_event_samples_total", pid=pid, event="page-faults")
    assert ps >= 100, ps
    want = PAGES * repeat
    for i, (status, body, _) in enumerate(res):
        assert status == 200, (i, status, body[:200])
        prof = tmp_path / f"s{i}.pb.gz"
        prof.write_bytes(body)
        locs, samples = parse_raw(go_pprof(["-raw", str(prof)], tmp_path))
        mine = [x for x in samples if x["labels"].get("pid") == pid]
        faults = sum(x["values"][2] for x in mine if any(locs.get(l) == "gt_fault_pages" for l in x["locs"]))
        print(f"profile {i}: page faults through gt_fault_pages: {faults} of {want}, {ps:.0f} samples")
        assert abs(faults - want) <= (3 / ps ** 0.5 + 0.02) * want, (i, faults, want, ps)


def map_entries(map_id):
    """Entries of a BPF map with 8-byte keys, counted through the bpf syscall (BPF_MAP_GET_FD_BY_ID,
    then BPF_MAP_GET_NEXT_KEY): bpftool's dump prints every 1 KiB stack."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    nr_bpf, get_next_key, get_fd_by_id = 321, 4, 14

    class Attr(ctypes.Structure):	# union bpf_attr: map_fd/map id, pad, key, next_key
        _fields_ = [("fd_or_id", ctypes.c_uint32), ("pad", ctypes.c_uint32), ("key", ctypes.c_uint64),
                    ("next_key", ctypes.c_uint64), ("rest", ctypes.c_char * 96)]

    def bpf(cmd, a):
        return libc.syscall(nr_bpf, cmd, ctypes.byref(a), ctypes.sizeof(a))

    fd = bpf(get_fd_by_id, Attr(fd_or_id=map_id))
    assert fd >= 0, os.strerror(ctypes.get_errno())
    key, nxt, n = ctypes.c_uint64(), ctypes.c_uint64(), 0
    try:
        while bpf(get_next_key, Attr(fd_or_id=fd, key=ctypes.addressof(key) if n else 0,
                                     next_key=ctypes.addressof(nxt))) == 0:
            key.value, n = nxt.value, n + 1
    finally:
        os.close(fd)
    return n


def test_overlapping_profiles_keep_the_store_bounded(tmp_path):
    """Sampled accounting under exec churn (each exec'd process maps its libraries at new addresses:
    new user stacks at most samples) with profiles that overlap for good (20 of 2 s, one asked every
    second, then one of 8 s): the events' stack store was emptied only when a profile began alone,
    so it filled (16384 of 16384) and every new stack was lost: the ground-truth workload run in
    the last profile had no frame of its own in it (0 page faults through gt_fault_pages).  The
    store is collected at each drain as the sampler's is: it stays within three quarters of its
    size, and the workload's PAGES page faults per round are in the last profile within the error
    of its samples."""
    import threading
    from test_daemon_cost import held_map_ids
    from test_daemon_pprof import fetch, go_pprof, parse_raw
    repeat = 10
    with Daemon("--accounting=sampled", "-e", "page-faults,task-clock", "--events-hz", "800", "--max-overhead", "20",
                # every process exported: the churn's thousands would take the workload's slot
                "--top-procs", "100000", "--min-share", "0", "-I", "500") as d:
        held = held_map_ids(d.p.pid)
        maps = json.loads(subprocess.run(["bpftool", "-j", "map", "show"], capture_output=True, text=True).stdout)
        (store,) = [m for m in maps if m["id"] in held and m.get("name") == "sample_stacks" and m["max_entries"] == 16384]
        churn = subprocess.Popen(["sh", "-c", "while :; do /bin/true; done"])
        res, sizes, ts = {}, [], []

        def one(i, secs):
            res[i] = fetch(d, f"/debug/pprof/profile?seconds={secs}")

        try:
            for i in range(20):
                ts.append(threading.Thread(target=one, args=(i, 2)))
                ts[-1].start()
                time.sleep(1)
                sizes.append(map_entries(store["id"]))
        finally:
            churn.kill()
            churn.wait()
        ts.append(threading.Thread(target=one, args=(20, 8)))	# overlaps the last two
        ts[-1].start()
        time.sleep(0.5)
        truth, m = fault_rounds(d, tmp_path, repeat, ts)
    print("events' stacks stored, each second:", sizes)
    # a loaded host's late loop may refuse one (429: its slots still taken); the last one is served
    assert res[20][0] == 200 and {s for s, _, _ in res.values()} <= {200, 429}, {i: r[0] for i, r in res.items()}
    assert max(sizes) <= 0.75 * 16384, sizes
    pid = str(truth["pid"])
    ps = value(m, "tmabpf_process_event_samples_total", pid=pid, event="page-faults")
    assert ps >= 100, ps
    prof = tmp_path / "last.pb.gz"
    prof.write_bytes(res[20][1])
    locs, samples = parse_raw(go_pprof(["-raw", str(prof)], tmp_path))
    faults = sum(x["values"][2] for x in samples
                 if x["labels"].get("pid") == pid and any(locs.get(l) == "gt_fault_pages" for l in x["locs"]))
    want = PAGES * repeat
    print(f"page faults through gt_fault_pages in the last profile: {faults} of {want}, {ps:.0f} samples")
    assert abs(faults - want) <= (3 / ps ** 0.5 + 0.02) * want, (faults, want, ps)
