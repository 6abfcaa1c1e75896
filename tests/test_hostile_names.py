# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Names from another user reach root's terminal and files: a process of nobody's names itself
(comm) with an OSC 52 clipboard write, a newline and a byte that is not UTF-8, and names its JIT
code in its perf map with OSC 52, CSI 2J, a C1 CSI and invalid UTF-8.  Every text output shows
them as ps and top do ('?' for each control character and bad byte): the report, --batch
intervals, --folded, diff, /metrics label values, the live view (raw bytes sent to a tmux pane)
and --dry-run's --uprobe preview of a library's symbols; no newline forges a row.  The JSON report is valid UTF-8 (read back with a strict decoder)
and keeps the names, controls escaped, bad bytes as U+FFFD."""
import json
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest

from conftest import TMABPF, run_tmabpf
from daemon_util import Daemon

NOBODY = 65534
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
# comm: 15 bytes at most
COMM = b"\x1b]52;c;QQ\x07\nX\xff"
SHOWN_COMM = "?]52;c;QQ??X?"
SYM = b"jit\x1b]52;c;SGk=\x07\x1b[2J\xc2\x9b\xff"
SHOWN_SYM = "jit?]52;c;SGk=??[2J??"

# Runs x86-64 code (a counting loop with a frame pointer) from an anonymous mapping named in
# /tmp/perf-PID.map, as a JIT does, under the comm it is given.
WORKLOAD = r"""
import ctypes, mmap, os, sys, time
code = bytes([0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0x5d, 0xc3])
comm, sym, seconds = bytes.fromhex(sys.argv[1]), bytes.fromhex(sys.argv[2]), float(sys.argv[3])
m = mmap.mmap(-1, 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
              prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(code)
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
with open(f"/tmp/perf-{os.getpid()}.map", "wb") as f:
    f.write(b"%x %x " % (addr, len(code)) + sym + b"\n")
ctypes.CDLL(None).prctl(15, ctypes.c_char_p(comm), 0, 0, 0)
spin = ctypes.CFUNCTYPE(ctypes.c_long, ctypes.c_long)(addr)
print("ready", flush=True)
end = time.time() + seconds
while time.time() < end:
    spin(20000000)
"""

pytestmark = pytest.mark.skipif(os.uname().machine != "x86_64", reason="the JIT workload is x86-64 code")


@pytest.fixture
def hostile():
    """Start the workload as nobody; returns start(seconds) -> pid."""
    procs = []

    def start(seconds=6):
        p = subprocess.Popen(AS_NOBODY + [sys.executable, "-c", WORKLOAD, COMM.hex(), SYM.hex(), str(seconds)],
                             stdout=subprocess.PIPE)
        procs.append(p)
        assert p.stdout.readline() == b"ready\n", "the workload did not start"
        return p.pid
    yield start
    for p in procs:
        p.kill()
        p.wait()
        if os.path.exists(f"/tmp/perf-{p.pid}.map"):
            os.unlink(f"/tmp/perf-{p.pid}.map")


def assert_clean(data, what):
    """Valid UTF-8 with no control character but the line break: nothing a terminal obeys."""
    text = data.decode("utf-8")  # strict: invalid UTF-8 raises
    bad = sorted({hex(ord(c)) for c in text if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) < 0xa0})
    assert not bad, f"{what}: raw control characters {bad} in {text[:3000]!r}"
    return text


def assert_no_forged_rows(text, what):
    """The newline in the comm would start a line with its remainder, "X"."""
    forged = [l for l in text.splitlines() if l.startswith("X")]
    assert not forged, f"{what}: forged rows {forged}"


def test_report_folded_json(hostile, tmp_path):
    """The text report, --folded and --json of a run sampling the workload."""
    pid = hostile()
    js, fo = tmp_path / "r.json", tmp_path / "r.folded"
    r = subprocess.run([TMABPF, "--sample=499", "-p", str(pid), "-d", "1", "--json", str(js), "--folded", str(fo)],
                       capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    text = assert_clean(r.stdout, "report")
    assert_no_forged_rows(text, "report")
    assert SHOWN_COMM in text and SHOWN_SYM in text, text
    folded = assert_clean(fo.read_bytes(), "--folded")
    for line in folded.splitlines():
        assert re.fullmatch(r"\S.* \d+", line), line
    assert any(SHOWN_SYM.replace(";", ":") in l for l in folded.splitlines()), folded
    rep = json.loads(js.read_bytes().decode("utf-8"))  # strict UTF-8
    comms = {t["comm"] for t in rep["threads"] if t["pid"] == pid}
    assert comms == {COMM.decode("utf-8", errors="replace")}, comms
    syms = {s["symbol"] for s in rep["samples"] if s["pid"] == pid}
    assert SYM.decode("utf-8", errors="replace") in syms, syms
    assert b"\x1b" not in js.read_bytes() and b"\xc2\x9b" not in js.read_bytes(), "raw controls in the JSON file"


def test_flamegraph_svg(hostile, tmp_path):
    """--flamegraph: the names are in the SVG as the folded lines have them (valid UTF-8, no control
    byte), and the file stays well-formed XML."""
    pid = hostile()
    svg = tmp_path / "r.svg"
    r = subprocess.run([TMABPF, "--sample=499", "-p", str(pid), "-d", "1", "--quiet", "--flamegraph", str(svg)],
                       capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert_clean(svg.read_bytes(), "--flamegraph")
    titles = [t.text for t in ET.parse(svg).getroot().iter("{http://www.w3.org/2000/svg}title")]
    # as in --folded: ';' becomes ':', a line break ' ', a JIT frame gets "_[j]"
    comm, sym = "?]52:c:QQ? X?", SHOWN_SYM.replace(";", ":") + "_[j]"
    assert any(t.startswith(comm + " (") for t in titles) and any(t.startswith(sym + " (") for t in titles), \
        [t for t in titles if "52" in t]


def test_batch_intervals(hostile):
    """-I summaries (--batch) carry the comm."""
    pid = hostile()
    r = subprocess.run([TMABPF, "--batch", "-I", "300", "-p", str(pid), "-d", "1"], capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    text = assert_clean(r.stdout, "--batch")
    assert_no_forged_rows(text, "--batch")
    assert text.count(SHOWN_COMM) >= 2, text


def test_diff(hostile, tmp_path):
    """diff of two reports: rows named by the comm and the JIT symbol."""
    pid = hostile()
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for out in (a, b):
        r = run_tmabpf(["--quiet", "--sample=499", "-p", str(pid), "-d", "0.5", "--json", str(out)])
        assert r.returncode == 0, r.stderr
    r = subprocess.run([TMABPF, "diff", str(a), str(b), "--top", "0"], capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    text = assert_clean(r.stdout, "diff")
    assert_no_forged_rows(text, "diff")
    assert SHOWN_COMM[:-1] + "\ufffd" in text, text  # the report holds U+FFFD for the bad byte


def test_metrics_labels(hostile):
    """/metrics: the comm label value has its newline escaped (\\n) and its other controls as '?'."""
    with Daemon("-I", "250") as d:
        pid = hostile()
        deadline = time.monotonic() + 20
        while True:
            _, _, body = d.request()
            if f'pid="{pid}"' in body or time.monotonic() > deadline:
                break
            time.sleep(0.25)
        assert d.stop() == 0
    assert f'pid="{pid}"' in body, "the workload got no series"
    assert_clean(body.encode(), "/metrics")
    assert 'comm="?]52;c;QQ?\\nX\ufffd"' in body, [l for l in body.splitlines() if f'pid="{pid}"' in l][:3]


def test_live_view(hostile, tmp_path):
    """The live view in tmux: the bytes tmabpf sends to the pane (pipe-pane) hold no OSC 52, and
    the screen no row forged by the newline."""
    from test_live import Tmux
    pid = hostile(seconds=10)
    raw = tmp_path / "pane.raw"
    t = Tmux(tmp_path, width=200, height=50)
    try:
        t.tmux("pipe-pane", "-o", "-t", t.name, f"cat > {raw}")
        t.run(f"{TMABPF} --sample=499 -p {pid} -d 3 -I 300 --json {tmp_path}/live.json")
        screen = t.wait(lambda s: re.search(rf"^\s*{pid}\s+{pid}\s", s, re.M), "the workload's row", timeout=30)
        t.wait(lambda s: t.at_prompt(s) and not t.alternate(), "the end of the run", timeout=60)
    finally:
        t.kill()
    data = raw.read_bytes()
    assert b"\x1b]52" not in data and b"]52;c;QQ\x07" not in data and b"\xc2\x9b" not in data, \
        "terminal controls from the names reached the pane"
    assert_no_forged_rows(screen, "live view")
    assert SHOWN_COMM in screen, screen


def test_uprobe_preview_of_a_hostile_symbol(tmp_path):
    """--dry-run's --uprobe preview lists a library's symbols: one named with OSC 52 and a newline
    (its .strtab written after linking) is shown with '?'."""
    ph = b"evil_PLACEHOLDER_X"
    evil = b"evil\x1b]52;c;QQ\x07\nXYZ"
    assert len(evil) == len(ph)
    src, lib = tmp_path / "e.s", tmp_path / "libevil.so"
    name = ph.decode()
    src.write_text(f".text\n.globl {name}\n.type {name},@function\n{name}:\nret\n.size {name},1\n")
    subprocess.run(["gcc", "-shared", "-nostdlib", "-o", str(lib), str(src)], check=True, capture_output=True)
    lib.write_bytes(lib.read_bytes().replace(ph, evil))
    r = subprocess.run([TMABPF, "--dry-run", "--uprobe", f"{lib}:evil*"], capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    text = assert_clean(r.stdout, "--dry-run")
    assert_no_forged_rows(text, "--dry-run")
    assert "evil?]52;c;QQ??XYZ" in text, text
