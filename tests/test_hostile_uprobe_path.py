# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""--uprobe PATH:FUNC by a root tmabpf, while the owner of PATH swaps it for a symlink to a
root-owned library and back in a tight loop: the probe must land in the file whose symbols were
read, never in the root-owned one (its offset there would be mid-instruction, firing in other
users' processes).  tmabpf probes the user's file or refuses with one line."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from conftest import run_tmabpf
from test_hostile import AS_NOBODY, NOBODY, error_lines, nobody_dir  # noqa: F401 (a fixture)

RUNS = 12

# the user's library: mine_fn after 3 bytes of padding; the root-owned one: other_fn, a 10-byte
# instruction over the user's offset
USER_LIB = ".text\n.byte 0x90,0x90,0x90\n.globl mine_fn\n.type mine_fn,@function\nmine_fn:\nret\n.size mine_fn,1\n"
ROOT_LIB = (".text\n.globl other_fn\n.type other_fn,@function\nother_fn:\nmovabs $0x1122334455667788,%rax\nret\n"
            ".size other_fn,.-other_fn\n")

SWAPPER = """
import os, sys, time
d, root_lib = sys.argv[1], sys.argv[2]
lib = os.path.join(d, "libmine.so")
while True:
    os.symlink(root_lib, os.path.join(d, "t.link"))
    os.rename(os.path.join(d, "t.link"), lib)
    time.sleep(0.002)
    os.link(os.path.join(d, "orig.so"), os.path.join(d, "t.file"))
    os.rename(os.path.join(d, "t.file"), lib)
    time.sleep(0.002)
"""

HOLDER = "import ctypes, sys, time; ctypes.CDLL(sys.argv[1]); print('ready', flush=True); time.sleep(600)"


def build(asm, out):
    src = out + ".s"
    with open(src, "w") as f:
        f.write(asm)
    subprocess.run(["gcc", "-shared", "-nostdlib", "-o", out, src], check=True, capture_output=True)


def uprobe_link_paths():
    r = subprocess.run(["bpftool", "-j", "link", "show"], capture_output=True, text=True)
    try:
        links = json.loads(r.stdout or "[]")
    except ValueError:
        return []
    return [l["path"] for l in links if l.get("type") == "uprobe_multi" and "path" in l]


@pytest.mark.parametrize("mode", ["-p", "--"])
def test_uprobe_path_swapped_for_root_library(nobody_dir, mode):
    """-p: a process of the user maps the library (as orig.so, a second name of the file, which the
    swaps leave alone); --: a command, the library resolved before it runs, mapped by nothing."""
    root_dir = tempfile.mkdtemp(prefix="tmabpf-rootlib-", dir="/tmp")	# root's, 0700
    root_lib = os.path.join(root_dir, "libroot.so")
    build(ROOT_LIB, root_lib)
    orig = os.path.join(nobody_dir, "orig.so")
    build(USER_LIB, orig)
    lib = os.path.join(nobody_dir, "libmine.so")
    os.link(orig, lib)
    for p in (orig, lib, orig + ".s"):
        os.lchown(p, NOBODY, NOBODY)
    holder = subprocess.Popen(AS_NOBODY + [sys.executable, "-c", HOLDER, orig], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().startswith("ready")
    swapper = subprocess.Popen(AS_NOBODY + [sys.executable, "-c", SWAPPER, nobody_dir, root_lib])
    seen, stop = [], threading.Event()

    def watch():
        while not stop.is_set():
            seen.extend(uprobe_link_paths())
            time.sleep(0.01)

    watcher = threading.Thread(target=watch)
    watcher.start()
    probed, refusals = 0, []
    try:
        for _ in range(RUNS):
            target = ["-p", str(holder.pid)] if mode == "-p" else ["--", "sleep", "0.3"]
            r = run_tmabpf(["--batch", "--quiet", "-d", "0.3", "--uprobe", lib + ":mine_fn"] + target)
            if r.returncode == 0:
                probed += 1
            else:
                assert len(error_lines(r.stderr)) == 1, r.stderr
                refusals.append(error_lines(r.stderr)[0])
    finally:
        stop.set()
        watcher.join()
        swapper.kill()
        holder.kill()
        swapper.wait()
        holder.wait()
        shutil.rmtree(root_dir, ignore_errors=True)
    ours = sorted(set(p for p in seen if p.startswith((nobody_dir, root_dir))))
    print(f"{probed} runs probed, {len(refusals)} refused {refusals}; uprobe_multi links seen: {ours}")
    assert ours, "no uprobe_multi link of these runs seen (bpftool link show)"
    assert not [p for p in ours if p.startswith(root_dir)], ours
    # a run that read the root-owned file finds no mine_fn in it: refused (about half the -- runs)
    assert probed >= 2, (probed, refusals)
