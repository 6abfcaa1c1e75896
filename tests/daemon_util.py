# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Helpers for the daemon tests: run 'tmabpf daemon', talk HTTP to it, parse the
Prometheus text format, run a real Prometheus against it, cgroup v2 sandboxes."""
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request

from conftest import BUILD, TMABPF

CHURN = os.path.join(BUILD, "workloads", "churn")
PROMETHEUS = "/usr/bin/prometheus"
PROMTOOL = "/usr/bin/promtool"

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def unescape(v):
    return re.sub(r'\\(.)', lambda m: {"n": "\n"}.get(m.group(1), m.group(1)), v)


def parse_exposition(text):
    """{(name, frozenset(labels)): value} of every sample; raises on a malformed line."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, f"malformed sample line: {line!r}"
        labels = frozenset((k, unescape(v)) for k, v in LABEL.findall(m.group(2) or ""))
        key = (m.group(1), labels)
        assert key not in out, f"duplicate series: {line!r}"
        out[key] = float(m.group(3))
    return out


def select(samples, name, **labels):
    """Samples of one metric whose labels include the given ones: [(labels dict, value)]."""
    want = set(labels.items())
    return [(dict(l), v) for (n, l), v in samples.items() if n == name and want <= set(l)]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    """'tmabpf daemon' in the background; waits for its 'serving' line."""

    def __init__(self, *args, listen="127.0.0.1:0", timeout=60, exe=TMABPF, wrap=()):
        cmd = [*wrap, exe, "daemon"] + (["--listen", listen] if listen else []) + list(args)
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines = []
        self._ready = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._ready.wait(timeout)
        m = next((re.search(r"serving http://(\S+)/metrics", l) for l in self.lines if "serving" in l), None)
        if not m:
            self.kill()
            raise AssertionError(f"daemon did not start: rc={self.p.poll()} stderr={self.stderr()!r}")
        self.addr = m.group(1)
        host, port = self.addr.rsplit(":", 1)
        self.host, self.port = host.strip("[]"), int(port)

    def _read(self):
        for line in self.p.stderr:
            self.lines.append(line)
            if "serving http://" in line:
                self._ready.set()
        self._ready.set()

    def stderr(self):
        return "".join(self.lines)

    def request(self, method="GET", path="/metrics", timeout=10):
        c = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            c.request(method, path)
            r = c.getresponse()
            return r.status, dict(r.getheaders()), r.read().decode("utf-8")
        finally:
            c.close()

    def metrics(self):
        status, _, body = self.request()
        assert status == 200, status
        return parse_exposition(body)

    def metrics_after(self, refreshes=2, timeout=30):
        """/metrics once the daemon has drained its maps `refreshes` more times than when called
        (tmabpf_refreshes_total), so what happened before the call is in, however late a loaded box
        runs the refreshes; at the deadline, the last read, for the caller's check to say what is
        missing.  Two: the first may have been under way at the call."""
        want = select(self.metrics(), "tmabpf_refreshes_total")[0][1] + refreshes
        deadline = time.monotonic() + timeout
        while True:
            time.sleep(0.1)
            m = self.metrics()
            if select(m, "tmabpf_refreshes_total")[0][1] >= want or time.monotonic() > deadline:
                return m

    def alive(self):
        return self.p.poll() is None

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.p.poll() is None:
            self.p.send_signal(sig)
        rc = self.p.wait(timeout)
        self._reader.join(5)
        return rc

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait(10)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill()


class Prometheus:
    """A real Prometheus on loopback scraping one target every second."""

    def __init__(self, tmp, target, interval="1s", rules=None):
        self.port = free_port()
        cfg = os.path.join(tmp, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write(f"global:\n  scrape_interval: {interval}\n  evaluation_interval: {interval}\n"
                    + (f"rule_files: ['{rules}']\n" if rules else "")
                    + f"scrape_configs:\n  - job_name: tmabpf\n    static_configs:\n"
                    f"      - targets: ['{target}']\n")
        self.log = open(os.path.join(tmp, "prometheus.log"), "w")
        self.p = subprocess.Popen([PROMETHEUS, f"--config.file={cfg}", f"--storage.tsdb.path={tmp}/data",
                                   f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
                                  stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 90
        while time.time() < deadline:
            assert self.p.poll() is None, f"prometheus exited: see {self.log.name}"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.3)
        raise AssertionError("prometheus did not become ready")

    def query(self, q):
        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode({"query": q})
        with urllib.request.urlopen(url, timeout=10) as r:
            d = json.load(r)
        assert d["status"] == "success", d
        return [(x["metric"], float(x["value"][1])) for x in d["data"]["result"]]

    def wait_value(self, q, ok, timeout=60, settle=2.5):
        """Poll q until its single value satisfies ok and stays the same for `settle` s."""
        deadline, last, since = time.time() + timeout, None, None
        while time.time() < deadline:
            res = self.query(q)
            v = res[0][1] if len(res) == 1 else None
            if v is not None and ok(v):
                if v != last:
                    last, since = v, time.time()
                elif time.time() - since >= settle:
                    return v
            time.sleep(0.5)
        raise AssertionError(f"{q}: no settled value satisfying the check (last {last}, now {self.query(q)})")

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(30)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.log.close()


def cgroup2_mount():
    with open("/proc/self/mounts") as f:
        for line in f:
            fields = line.split()
            if fields[2] == "cgroup2":
                return fields[1]
    return None


class Cgroup:
    """A fresh cgroup v2 directory; processes started with start() run in it."""

    def __init__(self, name):
        self.mnt = cgroup2_mount()
        self.rel = f"/{name}-{os.getpid()}"
        self.path = self.mnt + self.rel if self.mnt else None
        if self.path:
            os.makedirs(self.path, exist_ok=True)

    def join(self, pid):
        with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
            f.write(str(pid))

    def remove(self):
        if not self.path:
            return
        for _ in range(50):
            try:
                os.rmdir(self.path)
                return
            except OSError:
                time.sleep(0.1)
