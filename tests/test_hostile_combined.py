# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Issue 28's combined check: the audit's attacks at once, by nobody, against one root tmabpf run
that samples all of nobody's processes and writes every output: a library whose .strtab claims a
4 GiB sparse hole, a mapped library swapped for a link to a root-only library, a process whose comm
and JIT perf map carry terminal escapes, a newline and bytes that are not UTF-8.  The run's peak
RSS stays under 64 MiB, it writes no file but the outputs asked for, no root-only name reaches any
output, and no text output carries a raw control byte."""
import gzip
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import pytest

from conftest import TMABPF
from test_hostile import AS_NOBODY, NOBODY, nobody_dir  # noqa: F401 (a fixture)
from test_hostile_libraries import HOLE, asm_library, section_headers, start_spinner
from test_hostile_names import assert_clean, assert_no_forged_rows, hostile  # noqa: F401 (a fixture)

pytestmark = pytest.mark.skipif(os.uname().machine != "x86_64", reason="the JIT workload is x86-64 code")

RSS_LIMIT_KIB = 64 * 1024


def hole_library(d):
    """nobody's library whose .strtab claims HOLE bytes of a sparse hole past the file's end."""
    lib = asm_library(d, "libhole.so", "tmabpf_spin")
    with open(lib, "rb") as f:
        sec = dict(section_headers(f.read()))
    size = os.path.getsize(lib)
    with open(lib, "r+b") as f:
        f.seek(sec[".strtab"] + 0x18)
        f.write(struct.pack("<QQ", size, HOLE))
        f.truncate(size + HOLE)
    os.chown(lib, NOBODY, NOBODY)
    return lib


def test_every_attack_at_once(nobody_dir, hostile):
    secret_dir = tempfile.mkdtemp(prefix="tmabpf-rootonly-")  # 0700 root
    out_dir = tempfile.mkdtemp(prefix="tmabpf-outputs-")
    spinners = []
    try:
        secret = asm_library(secret_dir, "libsecret.so", "secret_spin")
        os.chmod(secret, 0o600)
        hole = hole_library(nobody_dir)
        swap = asm_library(nobody_dir, "libswap.so", "tmabpf_spin")
        os.chown(swap, NOBODY, NOBODY)
        spinners = [start_spinner(hole), start_spinner(swap)]
        subprocess.run(AS_NOBODY + [sys.executable, "-c", "import os, sys; os.unlink(sys.argv[1]); "
                                    "os.symlink(sys.argv[2], sys.argv[1])", swap, secret], check=True)
        jit = hostile(seconds=8)
        before = sorted(os.listdir(nobody_dir))
        outs = {k: os.path.join(out_dir, "out." + k) for k in ("json", "folded", "pprof")}
        pids = ",".join(str(p) for p in [s.pid for s in spinners] + [jit])
        # GNU time forks tmabpf from its own small process: a child forked from pytest would count
        # pytest's pages in its peak RSS until its exec
        rss_file = os.path.join(secret_dir, "rss")
        with open(os.path.join(secret_dir, "stdout"), "wb") as so:
            p = subprocess.run(["/usr/bin/time", "-o", rss_file, "-f", "%M", TMABPF, "--sample=199", "-p", pids,
                                "-d", "2", "--json", outs["json"], "--folded", outs["folded"], "--pprof",
                                outs["pprof"]], cwd=out_dir, stdout=so, stderr=subprocess.PIPE, timeout=120)
        err = p.stderr
        stdout = open(os.path.join(secret_dir, "stdout"), "rb").read()
        rss = int(open(rss_file).read().split()[-1])
        print(f"root tmabpf --sample -p (3 hostile processes) -d 2: peak RSS {rss >> 10} MiB")
        assert p.returncode == 0, err[-2000:]
        assert rss < RSS_LIMIT_KIB, f"peak RSS {rss >> 10} MiB"
        assert sorted(os.listdir(out_dir)) == ["out.folded", "out.json", "out.pprof"], os.listdir(out_dir)
        assert sorted(os.listdir(nobody_dir)) == before, "tmabpf wrote into nobody's directory"
        raw = {"report": stdout, "stderr": err, "json": open(outs["json"], "rb").read(),
               "folded": open(outs["folded"], "rb").read(), "pprof": gzip.open(outs["pprof"]).read()}
        for what, data in raw.items():
            assert b"secret_spin" not in data, f"a root-only library's name reached the {what}"
        for what in ("report", "stderr", "folded"):
            assert_no_forged_rows(assert_clean(raw[what], what), what)
        report = json.loads(raw["json"].decode("utf-8"))  # strict: invalid UTF-8 raises
        named = {(s["module"], s["symbol"]) for s in report["samples"]}
        # the attacks were profiled, not skipped: each process' code named from its own file
        assert ("libhole.so", "tmabpf_spin") in named, sorted(named)[:20]
        assert ("libswap.so", "tmabpf_spin") in named, sorted(named)[:20]
    finally:
        for s in spinners:
            s.kill()
            s.wait()
        shutil.rmtree(secret_dir, ignore_errors=True)
        shutil.rmtree(out_dir, ignore_errors=True)
