# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""'tmabpf daemon --itt': the ITT spans of the host's processes started with INTEL_LIBITTNOTIFY64
naming tmabpf's collector (as a service's unit would) are function series, "domain:task" with the
collector as their module, against the truth of tests/test_itt.py:

- oneDNN (Debian's libdnnl, tests/workloads/dnnlwork.c, one OpenMP thread: oneDNN tags a primitive
  on every thread that runs it) started after the daemon: the span calls per primitive kind in
  /metrics and in the last JSON line equal the executions DNNL_VERBOSE=1 prints, exactly.  The
  daemon starts with no function at all: each span gets its id as its name comes.
- A process that loaded the collector before the daemon started: its spans, named before the
  daemon attached, are read from the collector's table in the process.
- A process that maps a library carrying ITT but not the collector gets one line in the daemon's
  log, once, saying how to start it; one started with the collector gets none.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import ROOT, TMABPF
from daemon_util import Daemon, parse_exposition, select
from test_hostile import AS_NOBODY, NOBODY, nobody_dir  # noqa: F401 (a fixture)
from test_itt import COLLECTOR, DNNLWORK, KINDS, span_kind, verbose_execs

pytestmark = pytest.mark.skipif(not os.path.exists(DNNLWORK), reason="build/workloads/dnnlwork not built "
                                "(libdnnl-dev missing: make deps)")

MODULE = os.path.realpath(COLLECTOR)


def with_collector(**more):
    return dict(os.environ, INTEL_LIBITTNOTIFY64=COLLECTOR, **more)


def spans(m):
    """{primitive kind: calls} of the collector's function series."""
    return {span_kind(l["symbol"]): v for l, v in select(m, "tmabpf_function_calls_total", module=MODULE)}


def test_span_calls_equal_dnnl_verbose(tmp_path):
    jsonl = tmp_path / "d.jsonl"
    with Daemon("-I", "200", "--itt", "--jsonl", str(jsonl), "--max-overhead", "100") as d:
        w = subprocess.run([DNNLWORK, "4", "5", "6", "64"], env=with_collector(DNNL_VERBOSE="1", OMP_NUM_THREADS="1"),
                           capture_output=True, text=True, timeout=120)
        assert w.returncode == 0, w.stderr
        m = d.metrics_after(3)
        assert d.stop() == 0
    execs = verbose_execs(w.stdout)
    want = {k: sum(1 for kind, _ in execs if kind == k) for k in KINDS}
    assert want == {"convolution": 4, "matmul": 5, "reorder": 6}, w.stdout[-2000:]
    assert spans(m) == want, (spans(m), d.stderr())
    last = json.loads(jsonl.read_text().splitlines()[-1])
    got = {span_kind(f["symbol"]): f["calls"] for f in last["functions"] if f["module"] == MODULE}
    assert got == want, last["functions"]
    assert "accounting: per-switch (--itt" in d.stderr()


def wait_mapped(pid, timeout=20):
    """Until process pid has loaded the collector (at its first ITT call)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open(f"/proc/{pid}/maps") as f:
            if MODULE in f.read():
                return
        time.sleep(0.05)
    raise AssertionError(f"pid {pid} never loaded {MODULE}")


def test_process_that_loaded_the_collector_before_the_daemon():
    w = subprocess.Popen([DNNLWORK, "400000", "0", "0", "16"], env=with_collector(OMP_NUM_THREADS="1"),
                         stdout=subprocess.DEVNULL)
    try:
        wait_mapped(w.pid)
        time.sleep(0.2)
        with Daemon("-I", "200", "--itt", "--max-overhead", "100") as d:
            m = d.metrics_after(3)
            assert d.stop() == 0
    finally:
        w.kill()
        w.wait()
    got = spans(m)
    assert list(got) == ["convolution"] and got["convolution"] > 0, (got, d.stderr())
    assert f"pid {w.pid}" not in d.stderr(), d.stderr()


def wait_libdnnl(pid, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open(f"/proc/{pid}/maps") as f:
            if "libdnnl" in f.read():
                return
        time.sleep(0.05)
    raise AssertionError(f"pid {pid} never mapped libdnnl")


def test_process_without_the_collector_is_told_once():
    """One running before the daemon (read from /proc at its start) and one started after (the
    kernel's mapping records) are told once each; one started with the collector is not.  All run
    for the whole check: a process gone before the daemon reads its environment is not told
    (nothing is known of it then)."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    work = [DNNLWORK, "400000", "0", "0", "16"]
    early = subprocess.Popen(work, env=env, stdout=subprocess.DEVNULL)
    procs = [early]
    try:
        wait_libdnnl(early.pid)
        with Daemon("-I", "200", "--itt", "--max-overhead", "100") as d:
            bare = subprocess.Popen(work, env=env, stdout=subprocess.DEVNULL)
            ours = subprocess.Popen(work, env=with_collector(OMP_NUM_THREADS="1"), stdout=subprocess.DEVNULL)
            procs += [bare, ours]
            wait_mapped(ours.pid)
            deadline = time.time() + 20
            while f"pid {bare.pid} " not in d.stderr() and time.time() < deadline:
                time.sleep(0.1)
            m = d.metrics_after(3)
            assert d.stop() == 0
    finally:
        for p in procs:
            p.kill()
            p.wait()
    for p in (early, bare):
        told = [l for l in d.stderr().splitlines() if f"pid {p.pid} " in l]
        assert len(told) == 1, (p.pid, d.stderr())
        assert "has not loaded the ITT collector" in told[0] and f"INTEL_LIBITTNOTIFY64={MODULE}" in told[0], told
    assert not [l for l in d.stderr().splitlines() if f"pid {ours.pid} " in l], d.stderr()
    assert spans(m).get("convolution", 0) > 0, spans(m)	# the one started with it is seen


@pytest.mark.parametrize("accounting, needle", [
    ("sampled", "--accounting=sampled: --itt needs exact per-switch deltas"),
    ("tasks", "--accounting=tasks: --itt needs exact per-switch deltas"),
])
def test_itt_needs_switch_accounting(accounting, needle):
    r = subprocess.run([TMABPF, "daemon", "--listen", "127.0.0.1:0", "-d", "1", "--itt", f"--accounting={accounting}"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) <= 2, r.stderr


# ---- a user's mapped files against the root daemon's --itt watcher ----

MARKERS = b"INTEL_LIBITTNOTIFY64\0__itt_api_init\0"	# what the watcher looks for in a mapped file

TRUNCATER = """
import mmap, os, sys, time
path, size, until = sys.argv[1], int(sys.argv[2]), time.time() + float(sys.argv[3])
cycles = 0
while time.time() < until:
    p = f"{path}.{cycles}"                                  # a new file each time: each is scanned
    fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o644)
    os.ftruncate(fd, size)                                  # a sparse file, no disk used
    m = mmap.mmap(fd, size, mmap.MAP_PRIVATE, mmap.PROT_READ | mmap.PROT_EXEC)  # a mapping record
    time.sleep(0.1)
    os.ftruncate(fd, 0)                                     # its pages gone under any reader's mapping
    time.sleep(0.005)
    m.close()
    os.close(fd)
    os.unlink(p)
    cycles += 1
print(cycles)
"""


def rchar(pid):
    with open(f"/proc/{pid}/io") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("rchar:"))


def test_file_truncated_while_the_watcher_scans_it(nobody_dir):
    """nobody maps a new 512 MiB sparse file executable and truncates it to nothing 100 ms after
    mapping it, one after the other for 4 s, while root 'tmabpf daemon --itt' scans each newly
    mapped file for ITT's names.  The watcher mapped the file whole and searched it: the truncation under its mapping
    killed the daemon with SIGBUS.  Now it reads the file (the daemon's read count grows by
    megabytes), the truncation ends the read, and the daemon lives on and keeps serving /metrics."""
    path = os.path.join(nobody_dir, "libtrunc.so")
    with Daemon("-I", "200", "--itt", "--max-overhead", "100") as d:
        before = rchar(d.p.pid)
        t = subprocess.run(AS_NOBODY + [sys.executable, "-c", TRUNCATER, path, str(512 << 20), "4"],
                           capture_output=True, text=True, timeout=60)
        assert t.returncode == 0, t.stderr
        time.sleep(0.5)
        assert d.alive(), f"the daemon died (rc {d.p.returncode}) while nobody truncated a mapped file: {d.stderr()}"
        read = rchar(d.p.pid) - before
        m = d.metrics_after(2)
        assert select(m, "tmabpf_refreshes_total"), "no /metrics"
        assert d.stop() == 0, d.stderr()
    print(f"{t.stdout.strip()} truncations; the daemon read {read >> 20} MiB")
    assert int(t.stdout) >= 10, t.stdout
    assert read > 16 << 20, f"the daemon read {read} bytes: the file was never scanned"


SWAPPER = """
import mmap, os, sys, time
path, link_to = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_RDONLY)
m = mmap.mmap(fd, 4096, mmap.MAP_PRIVATE, mmap.PROT_READ | mmap.PROT_EXEC)  # a mapping record naming path
os.rename(path, path + ".old")                              # the mapped file stays, another path names it
os.symlink(link_to, path)                                   # path names root's file now
print("swapped", flush=True)
time.sleep(60)
"""

HONEST = """
import mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
m = mmap.mmap(fd, 4096, mmap.MAP_PRIVATE, mmap.PROT_READ | mmap.PROT_EXEC)
print("mapped", flush=True)
time.sleep(60)
"""


def test_path_swapped_for_a_root_only_file(nobody_dir):
    """nobody maps its own file without ITT's names, then at once renames it and plants at its path
    a link to a root-only (0600, in a 0700 directory) file carrying both names.  The watcher read
    the path: root's file made nobody's process 'carry ITT', and the daemon's log (its journal)
    told what root's file holds.  Now only the mapped inode is read: that process is never named,
    while another of nobody's processes mapping its own file with the names is (the watcher was
    looking)."""
    secret_dir = tempfile.mkdtemp(prefix="tmabpf-rootonly-")  # 0700 root
    procs = []
    try:
        secret = os.path.join(secret_dir, "libsecret.so")
        with open(secret, "wb") as f:
            f.write(MARKERS.ljust(4096, b"\0"))
        os.chmod(secret, 0o600)
        plain, marked = os.path.join(nobody_dir, "libplain.so"), os.path.join(nobody_dir, "libmarked.so")
        with open(plain, "wb") as f:
            f.write(b"\0" * 4096)
        with open(marked, "wb") as f:
            f.write(MARKERS.ljust(4096, b"\0"))
        for p in (plain, marked):
            os.chown(p, NOBODY, NOBODY)
        with Daemon("-I", "200", "--itt", "--max-overhead", "100") as d:
            for script, args, said in ((SWAPPER, [plain, secret], "swapped"), (HONEST, [marked], "mapped")):
                procs.append(subprocess.Popen(AS_NOBODY + [sys.executable, "-c", script] + args,
                                              stdout=subprocess.PIPE, text=True))
                assert procs[-1].stdout.readline().strip() == said
            swapper, honest = procs
            deadline = time.time() + 20
            while f"pid {honest.pid} " not in d.stderr() and time.time() < deadline:
                time.sleep(0.1)
            d.metrics_after(2)
            assert d.stop() == 0, d.stderr()
        assert f"pid {honest.pid} has not loaded the ITT collector" in d.stderr(), d.stderr()
        assert f"pid {swapper.pid} " not in d.stderr(), "the root-only file at the swapped path was read"
    finally:
        for p in procs:
            p.kill()
            p.wait()
        subprocess.run(["rm", "-rf", secret_dir])


def watch_files_bound():
    with open(os.path.join(ROOT, "user", "collect", "itt_watch.h")) as f:
        return int(re.search(r"#define ITT_WATCH_FILES (\d+)", f.read()).group(1))


MAPPER = """
import mmap, os, sys
for path in sys.argv[1:]:
    fd = os.open(path, os.O_RDONLY)
    mmap.mmap(fd, 4096, mmap.MAP_PRIVATE, mmap.PROT_READ | mmap.PROT_EXEC).close()  # a mapping record
    os.close(fd)
"""


def test_watcher_remembers_a_bounded_number_of_files(nobody_dir):
    """The watcher remembered every file ever mapped on the host, for the daemon's life.  nobody
    maps a 64 MiB file 'first', then short-lived processes (100 files each, paced to the mapping
    records' ring) map ITT_WATCH_FILES + 1000 distinct files, the last of them a 64 MiB file
    'last'; then each big one is mapped again.  The daemon's read count (/proc/PID/io rchar) says
    which it read again: 'last', used recently, is remembered (read once); 'first', the least
    recently used, was forgotten and is read again (the old table read it once: it never forgot)."""
    bound = watch_files_bound()
    big = {k: os.path.join(nobody_dir, f"lib{k}.so") for k in ("first", "last")}
    small = [os.path.join(nobody_dir, f"lib{i:05d}.so") for i in range(bound + 1000)]
    for p in small:
        with open(p, "wb") as f:
            f.write(b"\0" * 4096)
    for p in big.values():
        with open(p, "wb") as f:
            f.truncate(64 << 20)
    subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", nobody_dir], check=True)

    def map_files(paths, d):
        """Mapped by nobody, then the daemon's bytes read once it has taken them in."""
        before = rchar(d.p.pid)
        subprocess.run(AS_NOBODY + [sys.executable, "-c", MAPPER] + paths, check=True, timeout=60)
        d.metrics_after(2)
        return rchar(d.p.pid) - before

    with Daemon("-I", "200", "--itt", "--max-overhead", "100") as d:
        first = map_files([big["first"]], d)
        for i in range(0, len(small), 100):
            map_files(small[i:i + 100] + ([big["last"]] if i + 100 >= len(small) else []), d)
        again = {k: map_files([p], d) for k, p in big.items()}
        assert d.stop() == 0, d.stderr()
    print(f"first read {first >> 20} MiB; mapped again: {({k: v >> 20 for k, v in again.items()})} MiB")
    assert first >= 64 << 20, "the first file was not read"
    assert again["last"] < 32 << 20, "the file mapped last was forgotten: read again"
    assert again["first"] >= 64 << 20, f"the least recently used of {bound + 1002} files was remembered"


HOLDER = """
import mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
m = mmap.mmap(fd, 4096, mmap.MAP_PRIVATE, mmap.PROT_READ | mmap.PROT_EXEC)  # a mapping record
print("mapped", flush=True)
time.sleep(60)
"""


def test_huge_sparse_file_is_searched_only_to_a_bound(nobody_dir):
    """nobody maps a 1 TiB sparse file (no disk used).  The watcher read it whole, searching for
    ITT's names: minutes of root's daemon reading zeros (here, tens of GB in the seconds the test
    waits).  Now it stops at 2 GiB, says so in one line naming the file, and goes on (searching
    50 ms a poll: the line comes within seconds, once 2 GiB are read)."""
    path = os.path.join(nobody_dir, "libhuge.so")
    with open(path, "wb") as f:
        f.truncate(1 << 40)
    os.chown(path, NOBODY, NOBODY)
    with Daemon("-I", "200", "--itt", "--max-overhead", "100") as d:
        before = rchar(d.p.pid)
        holder = subprocess.Popen(AS_NOBODY + [sys.executable, "-c", HOLDER, path], stdout=subprocess.PIPE,
                                  text=True)
        try:
            assert holder.stdout.readline().strip() == "mapped"
            deadline = time.monotonic() + 60
            while "libhuge.so" not in d.stderr() and time.monotonic() < deadline:
                time.sleep(0.2)
            time.sleep(1)	# and then no more of it
            read = rchar(d.p.pid) - before
            assert d.alive(), d.stderr()
            m = d.metrics_after(2, timeout=20)
            assert select(m, "tmabpf_refreshes_total"), "no /metrics"
        finally:
            holder.kill()
            holder.wait()
        rc = d.stop()
        said = [l for l in d.stderr().splitlines() if "libhuge.so" in l]
    print(f"the daemon read {read >> 20} MiB; said: {said}")
    # 2 GiB of it, and what else the daemon reads meanwhile (/proc, the other tests of a loaded host)
    assert read <= 3 << 30, f"the daemon read {read >> 20} MiB of a sparse file"
    assert read >= 1 << 30, f"the daemon read {read >> 20} MiB: the file was never searched"
    assert len(said) == 1 and "only its first 2 GiB" in said[0], said
    assert rc == 0, d.stderr()


def test_huge_files_do_not_hold_up_the_refreshes(nobody_dir):
    """nobody maps three 1 TiB sparse files, then another of its processes maps a file carrying
    ITT's names.  The watcher searched each huge file's first 2 GiB in one go in the daemon's loop
    (~3 s a file here): the refresh age reached 10 s.  Now it searches for 50 ms a poll at most, in
    the order mapped: for 10 s every scrape's refresh age stays under 2 intervals + 0.5 s; each
    huge file is said in one line once searched to the bound, and the process with ITT's names is
    told how to start its collector."""
    interval = 0.25
    huge = [os.path.join(nobody_dir, f"libhuge{i}.so") for i in range(3)]
    for path in huge:
        with open(path, "wb") as f:
            f.truncate(1 << 40)
    marked = os.path.join(nobody_dir, "libmarked.so")
    with open(marked, "wb") as f:
        f.write(MARKERS.ljust(4096, b"\0"))
    for path in huge + [marked]:
        os.chown(path, NOBODY, NOBODY)
    procs, ages = [], []
    with Daemon("-I", str(int(interval * 1000)), "--itt", "--max-overhead", "100") as d:
        try:
            for path in huge + [marked]:
                procs.append(subprocess.Popen(AS_NOBODY + [sys.executable, "-c", HOLDER, path],
                                              stdout=subprocess.PIPE, text=True))
                assert procs[-1].stdout.readline().strip() == "mapped"
            t_end = time.monotonic() + 10
            while time.monotonic() < t_end:
                status, _, body = d.request(timeout=10)
                assert status == 200, status
                ages.append(select(parse_exposition(body), "tmabpf_refresh_age_seconds")[0][1])
                time.sleep(0.1)
            # each huge file takes 2 GiB of reads at 50 ms a poll: under the full suite's load the three
            # took over 30 s (one said, two not yet); the bound on the refresh age is the test
            deadline = time.monotonic() + 150
            while (f"pid {procs[-1].pid} " not in d.stderr() or any(p not in d.stderr() for p in huge)) \
                    and time.monotonic() < deadline:
                time.sleep(0.2)
            d.metrics_after(2)
        finally:
            for p in procs:
                p.kill()
                p.wait()
        assert d.stop() == 0, d.stderr()
    said = {os.path.basename(p): [l for l in d.stderr().splitlines() if p in l] for p in huge}
    print(f"{len(ages)} scrapes in 10 s: refresh age at most {max(ages):.2f} s; said: {said}")
    assert max(ages) < 2 * interval + 0.5, f"a refresh waited {max(ages):.2f} s"
    assert all(len(l) == 1 and "only its first 2 GiB" in l[0] for l in said.values()), said
    assert f"pid {procs[-1].pid} has not loaded the ITT collector" in d.stderr(), d.stderr()


FIFO_SWAPPER = """
import mmap, os, sys, time
path = sys.argv[1]
fd = os.open(path, os.O_RDONLY)
m = mmap.mmap(fd, 4096, mmap.MAP_PRIVATE, mmap.PROT_READ | mmap.PROT_EXEC)  # a mapping record naming path
os.rename(path, path + ".old")                              # the mapped file stays, another path names it
os.mkfifo(path)                                             # a FIFO at its path, no writer ever
print("swapped", flush=True)
time.sleep(60)
"""


def test_fifo_swapped_in_at_a_mapped_path(nobody_dir):
    """nobody maps its own file, then at once renames it and makes a FIFO at its path.  The watcher
    opened the path for reading to search it: the open of a FIFO with no writer never returned, and
    the daemon's loop stopped (no refresh again).  Now a path is opened as a user's file (O_PATH,
    then a regular file only): the refreshes go on."""
    path = os.path.join(nobody_dir, "libfifo.so")
    with open(path, "wb") as f:
        f.write(b"\0" * 4096)
    os.chown(path, NOBODY, NOBODY)
    with Daemon("-I", "200", "--itt", "--max-overhead", "100") as d:
        p = subprocess.Popen(AS_NOBODY + [sys.executable, "-c", FIFO_SWAPPER, path], stdout=subprocess.PIPE, text=True)
        try:
            assert p.stdout.readline().strip() == "swapped"
            before = select(d.metrics(), "tmabpf_refreshes_total")[0][1]
            time.sleep(3)
            after = select(d.metrics(), "tmabpf_refreshes_total")[0][1]
        finally:
            p.kill()
            p.wait()
        assert d.stop(timeout=10) == 0, d.stderr()
    print(f"refreshes {before} -> {after} in 3 s")
    assert after >= before + 5, f"{after - before} refreshes in 3 s at 200 ms"
