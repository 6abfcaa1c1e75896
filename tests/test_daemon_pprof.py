# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""The daemon's GET /debug/pprof/profile?seconds=N: a profile of the next N seconds read by
go tool pprof (Debian's golang-go) as it is, its CPU time per process against the kernel's
own accounting of the workload (/proc/PID/stat), its sample types and labels; bad seconds=,
concurrent requests, a client gone mid-profile and a request while the daemon stops."""
import calendar
import gzip
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

from conftest import GROUNDTRUTH, TMABPF
from daemon_util import Daemon
from test_hostile_names import SHOWN_COMM, SHOWN_SYM, assert_clean, hostile  # noqa: F401 (a fixture)
from thread_windows import all_schedstats


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
    r = subprocess.run([go, "tool", "pprof", *args], capture_output=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    # another user's process name may be any bytes (the profile is system-wide): read, not judged, here
    return r.stdout.decode("utf-8", "replace")


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
                                   "?seconds=301", "?seconds=100000"])
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


def test_clients_gone_as_their_profiles_end(daemon):
    """Clients that close their connection just as their 1 s profile ends (32 of them, 4 at a time,
    closing 0.90 to 1.21 s after asking): a profile answered as its client went away held its slot
    for good (libmicrohttpd closed the connection without calling the handler, and nothing freed
    the slot): 3 of the 4 slots stayed taken, and three of four requests got 429 for good (2 runs of
    2).  Every slot is free again: four profiles are served at once."""
    def gone_at(delay):
        s = open_profile(daemon, 1)
        time.sleep(delay)
        s.close()

    def four_at_once():
        res = []
        ts = [threading.Thread(target=lambda: res.append(fetch(daemon, "/debug/pprof/profile?seconds=1")[0]))
              for _ in range(PROFILES_AT_ONCE)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(30)
        return sorted(res)

    delays = [0.90 + 0.01 * k for k in range(32)]
    for r in range(0, len(delays), PROFILES_AT_ONCE):
        ts = [threading.Thread(target=gone_at, args=(x,)) for x in delays[r:r + PROFILES_AT_ONCE]]
        for t in ts:
            t.start()
        for t in ts:
            t.join(30)
        time.sleep(0.5)	# the loop drops the profiles of the clients gone
    # a slot held for good stays held; one the loop is late to free (a loaded host) is free at a retry
    tries = [four_at_once()]
    while tries[-1] != [200] * PROFILES_AT_ONCE and len(tries) < 3:
        time.sleep(2)
        tries.append(four_at_once())
    assert tries[-1] == [200] * PROFILES_AT_ONCE, tries
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


@pytest.fixture
def fast():
    """A daemon sampling at 499 Hz: short windows of a workload its host lets run on part of a CPU
    still hold enough samples to compare."""
    with Daemon("--sample-hz", "499") as d:
        yield d


class CpuTrack:
    """The workload's CPU time as the kernel counts it (/proc/PID/task/*/schedstat, ns), read every
    10 ms with the wall clock the daemon stamps a profile's start with: its CPU over any window."""

    def __init__(self, pid):
        self.pid, self.points, self.stop = pid, [], threading.Event()
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        while not self.stop.is_set():
            t0 = time.time()
            ns = sum(s[1] for s in all_schedstats([self.pid]).values())
            self.points.append(((t0 + time.time()) / 2, ns))
            time.sleep(0.01)

    def close(self):
        self.stop.set()
        self.t.join(5)

    def at(self, t):
        pts = self.points
        i = next((i for i, (ti, _) in enumerate(pts) if ti >= t), None)
        assert i, f"no CPU reading around {t} (readings from {pts[0][0]} to {pts[-1][0]})"
        (t0, c0), (t1, c1) = pts[i - 1], pts[i]
        return (c0 + (c1 - c0) * (t - t0) / (t1 - t0)) / 1e9

    def over(self, start, seconds):
        return self.at(start + seconds) - self.at(start)


def wall_s(stamp):
    """go tool pprof's 'Time: 2026-11-28 09:54:33.06947456 +0000 UTC' as Unix seconds."""
    day, clock = stamp.split()[:2]
    whole, _, frac = clock.partition(".")
    t = calendar.timegm(time.strptime(f"{day} {whole}", "%Y-%m-%d %H:%M:%S"))
    return t + float("0." + (frac or "0"))


def spin_profiles(d, tmp, windows, pid):
    """Profiles of the given (delay before asking, seconds) taken concurrently: for each, its status
    and, when 200, the workload pid's samples n, CPU seconds cpu, leaf function with the most CPU,
    the sample period (s), and the profile's own start (Unix s) and duration (go tool pprof -raw)."""
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
        head = dict(re.findall(r"^(Period|Time|Duration): (.+)$", raw, re.M))
        locs, samples = parse_raw(raw)
        mine = [x for x in samples if x["labels"].get("pid") == str(pid)]
        leaf = {}
        for x in mine:
            leaf[locs[x["locs"][0]]] = leaf.get(locs[x["locs"][0]], 0) + x["values"][1]
        out.append((status, {"n": sum(x["values"][0] for x in mine), "cpu": sum(x["values"][1] for x in mine) / 1e9,
                             "top": max(leaf, key=leaf.get) if leaf else None, "period": int(head["Period"]) / 1e9,
                             "start": wall_s(head["Time"]), "dur": float(head["Duration"])}))
    return out


def spinning():
    """The spinning workload and its CPU track, once it spins."""
    wl = subprocess.Popen([GROUNDTRUTH, "spin:30000"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    track = CpuTrack(wl.pid)
    time.sleep(0.5)
    return wl, track


def against_truth(p, track):
    """A profile's CPU of the workload, and the kernel's over the profile's window, with the
    binomial error of its samples (3 sigma), 20 ms of the edges and 3 %: (est, truth, tolerance)."""
    truth = track.over(p["start"], p["dur"])
    return p["cpu"], truth, 3 * p["period"] * max(p["n"], 1) ** 0.5 + 0.02 + 0.03 * truth


def test_three_concurrent_profiles_agree(fast, tmp_path):
    """Three profiles of 2 s asked 0.15 s apart (one slot each; the old daemon served one and
    refused the others with 429) of a spinning workload: each is a valid profile whose top
    function in the workload's pid is gt_spin; each one's CPU of the workload is the kernel's
    over that profile's own window (its start and duration), and they agree with each other: two
    profiles differ by what the kernel says the workload ran in the parts of their windows they do
    not share (the rows in the shared part are the same rows, added to each), within the binomial
    error of the samples in those parts (at most 0.3 s and a ~100 ms turn of the loop each)."""
    wl, track = spinning()
    try:
        got = spin_profiles(fast, tmp_path, [(0, 2), (0.15, 2), (0.3, 2)], wl.pid)
    finally:
        track.close()
        wl.kill()
        wl.wait()
    assert [s for s, _ in got] == [200, 200, 200], got
    ps = [p for _, p in got]
    checks = [against_truth(p, track) for p in ps]
    print("workload in each profile: samples", [p["n"] for p in ps], "CPU s and the kernel's, tolerance",
          [tuple(round(x, 3) for x in c) for c in checks], "durations", [p["dur"] for p in ps])
    assert all(p["top"] == "gt_spin" for p in ps), got
    assert min(p["n"] for p in ps) >= 50, ps
    for est, truth, tol in checks:
        assert abs(est - truth) <= tol, checks
    for a in range(3):
        for b in range(a + 1, 3):
            pa, pb = ps[a], ps[b]
            apart = abs(pa["start"] - pb["start"]) + abs(pa["dur"] - pb["dur"]) + 0.1
            unshared = max(pa["n"], pb["n"]) * apart / min(pa["dur"], pb["dur"])	# samples at most
            diff_est = checks[a][0] - checks[b][0]
            diff_truth = checks[a][1] - checks[b][1]
            tol = 3 * pa["period"] * max(unshared, 1) ** 0.5 + 0.04
            assert abs(diff_est - diff_truth) <= tol, (a, b, diff_est, diff_truth, tol)


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
    """A 3 s profile and a 1 s one taken inside it: each has the spinning workload's CPU over its
    own length, the kernel's over its window (schedstat) within the binomial error of its samples,
    so the two are in proportion to their lengths wherever the workload ran at one rate (on a
    quiet host, a whole CPU in both), and follow the rate where the host's load changed it."""
    wl, track = spinning()
    try:
        got = spin_profiles(fast, tmp_path, [(0, 3), (1.0, 1)], wl.pid)
    finally:
        track.close()
        wl.kill()
        wl.wait()
    assert [s for s, _ in got] == [200, 200], got
    (_, long), (_, short) = got
    checks = [against_truth(p, track) for p in (long, short)]
    print("3 s:", long, "1 s:", short, "CPU s, the kernel's, tolerance:", checks)
    assert long["top"] == short["top"] == "gt_spin", got
    assert 3 <= long["dur"] <= 3.3 and 1 <= short["dur"] <= 1.3, got
    assert long["start"] + 0.5 <= short["start"] and short["start"] + short["dur"] <= long["start"] + long["dur"], got
    for est, truth, tol in checks:
        assert abs(est - truth) <= tol, checks


def test_profile_while_stopping():
    """SIGTERM during profiles: each request in flight (one per slot) gets a one-line 503, the daemon
    exits cleanly within its 1 s wait for the answers to go out, and says in one line what it cut
    (it said nothing)."""
    with Daemon() as d:
        res = []
        ts = [threading.Thread(target=lambda: res.append(fetch(d, "/debug/pprof/profile?seconds=60")))
              for _ in range(2)]
        for t in ts:
            t.start()
        time.sleep(1.5)
        t0 = time.monotonic()
        d.p.send_signal(signal.SIGTERM)
        for t in ts:
            t.join(30)
        assert d.stop() == 0, d.stderr()
        took = time.monotonic() - t0
    cut = [l for l in d.lines if "cut short" in l]
    assert len(cut) == 1 and re.fullmatch(r"tmabpf: daemon: stopping: 2 profiles cut short, answered 503 "
                                          r"\(60 s asked \d+\.\d s ago, 60 s asked \d+\.\d s ago\)\n", cut[0]), d.stderr()
    assert took < 20, took
    assert len(res) == 2, res
    for status, body, took in res:
        assert status == 503 and took < 20, (status, body)
        assert body.decode().startswith("503 ") and body.decode().count("\n") == 1


def string_table(pprof_gz):
    """The raw bytes of each string in a gzipped pprof profile's string table (Profile field 6),
    read from the protobuf wire format itself: no decoder between the bytes and the check."""
    buf, i, out = gzip.decompress(pprof_gz), 0, []

    def varint():
        nonlocal i
        v = shift = 0
        while True:
            b = buf[i]
            i += 1
            v |= (b & 0x7f) << shift
            shift += 7
            if b < 0x80:
                return v

    while i < len(buf):
        key = varint()
        field, wire = key >> 3, key & 7
        if wire == 0:
            varint()
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            assert wire == 2, f"wire type {wire} at {i}"
            n = varint()
            if field == 6:
                out.append(buf[i:i + n])
            i += n
    return out


def test_strings_of_another_user_are_utf8(hostile, tmp_path):
    """A process of nobody's named (comm) with OSC 52, a newline and a byte that is not UTF-8, running
    JIT code named in its perf map with OSC 52, CSI 2J, a C1 CSI and invalid UTF-8: a root daemon's
    profile and a root run's --pprof carried the bytes as they were, and protobuf strings must be
    UTF-8 (a strict parser refuses the profile).  Every string of both profiles' tables is valid
    UTF-8 without a control character, the names as ps shows them ('?')."""
    pid = hostile(seconds=10)
    with Daemon("--sample-hz", "499") as d:
        status, body, _ = fetch(d, "/debug/pprof/profile?seconds=2")
    assert status == 200, body[:200]
    out = tmp_path / "r.pb.gz"
    r = subprocess.run([TMABPF, "--quiet", "--sample=499", "-p", str(pid), "-d", "1", "--pprof", str(out)],
                       capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    for what, prof in (("/debug/pprof/profile", body), ("--pprof", out.read_bytes())):
        strs = [assert_clean(x, f"{what} string table") for x in string_table(prof)]
        assert not [x for x in strs if "\n" in x], what
        assert SHOWN_COMM in strs, (what, [x for x in strs if "52" in x])
        assert SHOWN_SYM in strs, (what, [x for x in strs if "jit" in x])
