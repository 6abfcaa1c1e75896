# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""The daemon's GET /debug/pprof/profile?seconds=N: a profile of the next N seconds read by
go tool pprof (Debian's golang-go) as it is, its CPU time per process against the kernel's
own accounting of the workload (/proc/PID/stat), its sample types and labels; bad seconds=,
concurrent requests, a client gone mid-profile and a request while the daemon stops."""
import http.client
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time

import pytest

from conftest import GROUNDTRUTH
from daemon_util import Daemon


def fetch(d, path, timeout=60):
    """(status, body bytes, seconds it took)."""
    t0 = time.monotonic()
    c = http.client.HTTPConnection(d.host, d.port, timeout=timeout)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read(), time.monotonic() - t0
    finally:
        c.close()


def proc_cpu_s(pid):
    """utime + stime of a process, in seconds (the kernel's accounting, tick resolution)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def go_pprof(args, tmp):
    go = shutil.which("go")
    if not go:
        pytest.skip("go tool pprof: Debian's golang-go is not installed (make deps installs it)")
    env = dict(os.environ, HOME=str(tmp), GOCACHE=str(tmp / "gocache"))
    r = subprocess.run([go, "tool", "pprof", *args], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout


def parse_raw(raw):
    """go tool pprof -raw: ({location id: function}, [{values, locs (leaf first), labels}])."""
    locs, samples, cur, sect = {}, [], None, None
    for line in raw.splitlines():
        if line.startswith(("Samples:", "Locations", "Mappings")):
            sect = line.split(":")[0].split()[0]
            continue
        if sect == "Samples":
            m = re.match(r"\s+(\d+(?:\s+\d+)*): ([\d ]+)$", line)
            if m:
                cur = {"values": tuple(int(x) for x in m.group(1).split()),
                       "locs": [int(x) for x in m.group(2).split()], "labels": {}}
                samples.append(cur)
            elif cur is not None:
                cur["labels"].update(re.findall(r"(\w+):\[([^\]]*)\]", line))
        elif sect == "Locations":
            # a location in no mapping (an [unknown] frame: a walk that left executable memory) has no M=
            m = re.match(r"\s+(\d+): 0x[0-9a-f]+ (?:M=\d+ )?(\S+)", line)
            if m:
                locs[int(m.group(1))] = m.group(2)
    return locs, samples


@pytest.fixture
def daemon():
    with Daemon("--sample-hz", "199") as d:
        yield d


def test_profile_read_by_go_tool_pprof(daemon, tmp_path):
    """A 6 s profile (past the 5 s request deadline) of a spinning workload: go tool pprof -top
    names gt_spin first within its pid, and the pid's CPU time is the kernel's for that window
    within the binomial error of its samples; one sample type per value, the four labels."""
    wl = subprocess.Popen([GROUNDTRUTH, "spin:20000"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        time.sleep(0.5)
        cpu0 = proc_cpu_s(wl.pid)
        status, body, took = fetch(daemon, "/debug/pprof/profile?seconds=6")
        cpu1 = proc_cpu_s(wl.pid)
    finally:
        wl.kill()
        wl.wait()
    assert status == 200, body[:200]
    assert took >= 6, "the profile covers the seconds asked"
    prof = tmp_path / "d.pb.gz"
    prof.write_bytes(body)
    raw = go_pprof(["-raw", str(prof)], tmp_path)
    assert re.search(r"samples/count cpu/nanoseconds", raw), raw[:300]
    for label in ("pid:[", "thread:[", "comm:[", "cgroup:["):
        assert label in raw, label
    locs, samples = parse_raw(raw)
    mine = [x for x in samples if x["labels"].get("pid") == str(wl.pid)]
    n = sum(x["values"][0] for x in mine)
    est_s = sum(x["values"][1] for x in mine) / 1e9
    leaf = {}
    for x in mine:
        leaf[locs[x["locs"][0]]] = leaf.get(locs[x["locs"][0]], 0) + x["values"][1]
    assert max(leaf, key=leaf.get) == "gt_spin", leaf
    truth = cpu1 - cpu0		# over a window a little wider than the profile's (the request's round trip)
    assert n >= 300
    rel = 3 / n ** 0.5 + 0.03
    assert truth * (1 - rel) - 0.05 <= est_s <= truth * (1 + rel) + 0.05, (est_s, truth, n)
    # -top: the same share of gt_spin in the whole profile as its samples say (every process'
    # gt_spin: the profile is system-wide, and another groundtruth may be running)
    total = sum(x["values"][1] for x in samples)
    spin_all = sum(x["values"][1] for x in samples if locs[x["locs"][0]] == "gt_spin")
    top = go_pprof(["-top", "-sample_index=cpu", str(prof)], tmp_path)
    line = next(l for l in top.splitlines() if l.split()[-1:] == ["gt_spin"])
    assert float(line.split()[1].rstrip("%")) == pytest.approx(100.0 * spin_all / total, abs=0.01), top


@pytest.mark.parametrize("query", ["", "?seconds=", "?seconds=0", "?seconds=-1", "?seconds=99999999999",
                                   "?seconds=nan", "?seconds=1.5", "?seconds=abc", "?seconds=3601",
                                   "?seconds=301"])
def test_bad_seconds(daemon, query):
    status, body, _ = fetch(daemon, "/debug/pprof/profile" + query)
    assert status == 400
    text = body.decode()
    assert text.startswith("400 ") and text.endswith("\n") and text.count("\n") == 1, text


def test_concurrent_requests_and_scrapes(daemon):
    """Two profiles at once: both served, or the second refused with 429; /metrics is served
    meanwhile, at once."""
    res = []

    def one():
        res.append(fetch(daemon, "/debug/pprof/profile?seconds=2")[0])

    ts = [threading.Thread(target=one) for _ in range(2)]
    for t in ts:
        t.start()
    time.sleep(0.5)
    status, _, took = fetch(daemon, "/metrics")
    assert status == 200 and took < 2
    for t in ts:
        t.join(30)
    assert sorted(res) in ([200, 200], [200, 429]), res
    assert daemon.alive()


def profiles_total(d, result, want):
    """tmabpf_profiles_total{result=...}, once it reads want (the exposition is published at each
    refresh), or what it reads after 5 s."""
    for _ in range(50):
        m = re.search(r'^tmabpf_profiles_total\{result="%s"\} (\S+)$' % result, fetch(d, "/metrics")[1].decode(), re.M)
        if float(m.group(1)) == want:
            break
        time.sleep(0.1)
    return float(m.group(1))


def test_client_gone_mid_profile(daemon):
    """A client that disconnects during a long profile is noticed: the profile is dropped (counted
    as abandoned) and the next request is served at once, not refused with 429 until the first
    one's 60 s are over."""
    s = socket.create_connection((daemon.host, daemon.port))
    s.sendall(b"GET /debug/pprof/profile?seconds=60 HTTP/1.1\r\nHost: x\r\n\r\n")
    time.sleep(1.0)
    s.close()
    assert profiles_total(daemon, "abandoned", 1) == 1
    status, body, took = fetch(daemon, "/debug/pprof/profile?seconds=1")
    assert status == 200 and body[:2] == b"\x1f\x8b" and took < 10, (status, took)
    assert profiles_total(daemon, "served", 1) == 1 and profiles_total(daemon, "refused", 0) == 0
    assert daemon.alive()


def open_profile(d, seconds):
    """A profile request left pending on a raw connection (closed by the caller)."""
    s = socket.create_connection((d.host, d.port))
    s.sendall(b"GET /debug/pprof/profile?seconds=%d HTTP/1.1\r\nHost: x\r\n\r\n" % seconds)
    return s


def test_profile_cap_and_retry_after(daemon):
    """seconds=3600 held every other profile request off with 429 for an hour: the longest is now
    300 s (3600 gets 400); PROFILES_AT_ONCE are taken at once, and a request past them is told when to
    come back (Retry-After: the seconds left of the one that ends first, plus one), not when the
    first one asked ends."""
    status, body, _ = fetch(daemon, "/debug/pprof/profile?seconds=3600")
    assert status == 400 and b"from 1 to 300" in body, (status, body)
    socks = [open_profile(daemon, 30)]
    try:
        time.sleep(0.3)
        socks += [open_profile(daemon, n) for n in (30, 10, 30)[:PROFILES_AT_ONCE - 1]]
        time.sleep(1.0)
        c = http.client.HTTPConnection(daemon.host, daemon.port, timeout=10)
        c.request("GET", "/debug/pprof/profile?seconds=5")
        r = c.getresponse()
        body = r.read()
        c.close()
        assert r.status == 429, (r.status, body)
        assert body.decode().startswith("429 ") and body.decode().count("\n") == 1, body
        after = int(r.getheader("Retry-After"))
        assert 8 <= after <= 11, after		# the 10 s one's, asked ~1 s ago
    finally:
        for s in socks:
            s.close()
    assert daemon.alive()


PROFILES_AT_ONCE = 4	# daemon_http.h HTTP_PROFILES_AT_ONCE, as man/tmabpf-daemon.8.md says


def spin_profiles(d, tmp, windows, pid):
    """Profiles of the given (delay before asking, seconds) taken concurrently: for each, its status
    and, when 200, the workload pid's (samples, CPU seconds, leaf function with the most CPU) and
    the profile's own duration (go tool pprof -raw)."""
    res = [None] * len(windows)

    def one(i, delay, secs):
        time.sleep(delay)
        res[i] = fetch(d, f"/debug/pprof/profile?seconds={secs}")

    ts = [threading.Thread(target=one, args=(i, *w)) for i, w in enumerate(windows)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    out = []
    for i, (status, body, _) in enumerate(res):
        if status != 200:
            out.append((status, None))
            continue
        prof = tmp / f"p{i}.pb.gz"
        prof.write_bytes(body)
        raw = go_pprof(["-raw", str(prof)], tmp)
        dur = re.search(r"^Duration: (\S+)", raw, re.M)
        locs, samples = parse_raw(raw)
        mine = [x for x in samples if x["labels"].get("pid") == str(pid)]
        leaf = {}
        for x in mine:
            leaf[locs[x["locs"][0]]] = leaf.get(locs[x["locs"][0]], 0) + x["values"][1]
        out.append((status, {"n": sum(x["values"][0] for x in mine), "cpu": sum(x["values"][1] for x in mine) / 1e9,
                             "top": max(leaf, key=leaf.get) if leaf else None, "dur": dur.group(1) if dur else None}))
    return out


@pytest.fixture
def fast():
    """A daemon sampling at 499 Hz: short windows of a workload its host lets run on part of a CPU
    still hold enough samples to compare."""
    with Daemon("--sample-hz", "499") as d:
        yield d


def spinning():
    wl = subprocess.Popen([GROUNDTRUTH, "spin:30000"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(0.5)
    return wl


def test_three_concurrent_profiles_agree(fast, tmp_path):
    """Three profiles of 2 s asked at once (one slot each; the old daemon served one and refused the
    others with 429) of a spinning workload: each is a valid profile whose top function in the
    workload's pid is gt_spin, and their samples of it agree within what 2 s windows starting up to
    0.3 s (and one ~100 ms turn of the loop) apart allow: the binomial error and 15 %."""
    wl = spinning()
    try:
        got = spin_profiles(fast, tmp_path, [(0, 2), (0.15, 2), (0.3, 2)], wl.pid)
    finally:
        wl.kill()
        wl.wait()
    assert [s for s, _ in got] == [200, 200, 200], got
    n = [p["n"] for _, p in got]
    print("samples of the workload in each profile:", n, [p["dur"] for _, p in got])
    assert all(p["top"] == "gt_spin" for _, p in got), got
    assert min(n) >= 200, n
    mean = sum(n) / 3
    assert max(n) - min(n) <= 3 * mean ** 0.5 + 0.15 * mean, n


def test_profiles_past_the_bound(daemon):
    """PROFILES_AT_ONCE + 1 asked at once: exactly one gets 429 with Retry-After (at most the
    profiles' 3 s plus one), the others are served."""
    res = []
    lock = threading.Lock()

    def one():
        c = http.client.HTTPConnection(daemon.host, daemon.port, timeout=30)
        c.request("GET", "/debug/pprof/profile?seconds=3")
        r = c.getresponse()
        r.read()
        with lock:
            res.append((r.status, r.getheader("Retry-After")))
        c.close()

    ts = [threading.Thread(target=one) for _ in range(PROFILES_AT_ONCE + 1)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(30)
    assert sorted(s for s, _ in res) == [200] * PROFILES_AT_ONCE + [429], res
    ((_, after),) = [x for x in res if x[0] == 429]
    assert after is not None and 1 <= int(after) <= 4, res
    assert daemon.alive()


def test_overlapping_windows_of_different_lengths(fast, tmp_path):
    """A 3 s profile and a 1 s one taken inside it: each has the spinning workload's CPU in
    proportion to its own length (both windows are within the workload's spin, which keeps one
    CPU busy as far as the host lets it): the CPU per second of each within the binomial error of
    its samples and 15 % of the other's (per second of each profile's own duration, which the
    loop's ~100 ms turns may lengthen)."""
    wl = spinning()
    try:
        got = spin_profiles(fast, tmp_path, [(0, 3), (1.0, 1)], wl.pid)
    finally:
        wl.kill()
        wl.wait()
    assert [s for s, _ in got] == [200, 200], got
    (_, long), (_, short) = got
    print("3 s:", long, "1 s:", short)
    assert long["top"] == short["top"] == "gt_spin", got
    assert short["n"] >= 100 and long["dur"] and short["dur"], got
    assert 3 <= float(long["dur"]) <= 3.3 and 1 <= float(short["dur"]) <= 1.3, got
    rate_long, rate_short = long["cpu"] / float(long["dur"]), short["cpu"] / float(short["dur"])
    rel = 3 * (1 / short["n"] + 1 / long["n"]) ** 0.5 + 0.15
    assert abs(rate_short - rate_long) <= rel * rate_long, (rate_short, rate_long, rel)


def test_profile_while_stopping():
    """SIGTERM during profiles: each request in flight (one per slot) gets a one-line 503 and the
    daemon exits cleanly."""
    with Daemon() as d:
        res = []
        ts = [threading.Thread(target=lambda: res.append(fetch(d, "/debug/pprof/profile?seconds=60")))
              for _ in range(2)]
        for t in ts:
            t.start()
        time.sleep(1.5)
        d.p.send_signal(signal.SIGTERM)
        for t in ts:
            t.join(30)
        assert d.stop() == 0, d.stderr()
    assert len(res) == 2, res
    for status, body, took in res:
        assert status == 503 and took < 20, (status, body)
        assert body.decode().startswith("503 ") and body.decode().count("\n") == 1
