# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Short libFuzzer runs (ASan + UBSan, a report ends the run) of every parser that reads what tmabpf
does not control: perf CSV, event specs, --uprobe specs, ELF files, perf maps, /proc/PID/maps, the
daemon's config, --fail-on budgets, diff's reports, HTTP requests, ld.so.cache, /proc/kallsyms,
build-id notes and debug links, cgroup mounts and paths.  Longer runs by hand:
build/fuzz/fuzz_X -max_total_time=600 CORPUS_DIR (TMABPF_FUZZ_SECONDS sets the short run)."""
import glob
import json
import os
import re
import struct
import subprocess

import pytest

from conftest import BUILD, ROOT

FUZZERS = sorted(f for f in glob.glob(os.path.join(BUILD, "fuzz", "fuzz_*")) if not f.endswith(".d"))
SECONDS = os.environ.get("TMABPF_FUZZ_SECONDS", "8")

REPORT = {"tmabpf": {"version": "0.1.0", "schema": 1}, "duration_ns": 1000,
          "threads": [{"pid": 1, "tid": 1, "comm": "a", "first_seen_ns": 5, "oncpu_ns": 3,
                       "counters": {"task-clock": 3}, "tma": {"tma_retiring": 40.5}},
                      {"pid": 1, "tid": 2, "comm": "a", "first_seen_ns": 6, "oncpu_ns": 4}],
          "processes": [{"pid": 1, "comm": "a", "oncpu_ns": 7, "counters": {"task-clock": 7}, "tma": {}}],
          "functions": [{"module": "/lib/libc.so.6", "symbol": "malloc", "pid": 1, "tid": None, "calls": 2},
                        {"module": "/lib/libc.so.6", "symbol": "malloc", "pid": 1, "tid": 1, "calls": 2}]}


def tiny_elf(d, work):
    """A small shared library (functions, a versioned symbol, a SONAME, a build-id) in d."""
    src, ver, lib = os.path.join(work, "t.s"), os.path.join(work, "t.map"), os.path.join(d, "libt.so")
    with open(src, "w") as f:
        f.write(".text\n" + "".join(f".globl f{i}\n.type f{i},@function\nf{i}:\nret\n.size f{i},1\n" for i in range(4)))
    with open(ver, "w") as f:
        f.write("V_1 { global: f0; f1; local: *; };\nV_2 { global: f2; } V_1;\n")
    subprocess.run(["gcc", "-shared", "-nostdlib", "-Wl,-soname,libt.so.1", "-Wl,--build-id",
                    "-Wl,--version-script=" + ver, "-o", lib, src], check=True, capture_output=True)


def ldcache(entries, old=0):
    """An ld.so.cache in glibc's new format (after an old-format table of old entries when old):
    entries (key, value, hwcap)."""
    strings, offs = b"", []
    hdr_len, ent_len = 48, 24
    base = hdr_len + ent_len * len(entries)
    for key, value, _ in entries:
        offs.append((base + len(strings), base + len(strings) + len(key) + 1))
        strings += key.encode() + b"\0" + value.encode() + b"\0"
    new = struct.pack("<17s3sIIB3xI12x", b"glibc-ld.so.cache", b"1.1", len(entries), len(strings), 0, 0)
    for (k, v), (_, _, hwcap) in zip(offs, entries):
        new += struct.pack("<iIIIQ", 0x303, k, v, 0, hwcap)
    new += strings
    if not old:
        return new
    head = b"ld.so-1.7.0\0" + struct.pack("<I", old) + b"\0" * 12 * old
    return head + b"\0" * (-len(head) % 8) + new


def seeds(name, d, work):
    """Seed inputs for one target: files in d (a corpus directory), so that the short run starts
    past the basics; corpus directories to read."""
    texts = {
        "fuzz_perfmap": ["7f0000001000 40 jit_fn\n0x7f0000001020 10 inner code [x]\n\ngarbage\n7f00 0 z\n"],
        "fuzz_daemon_config": ["# tmabpf\nlisten = 127.0.0.1:9464\ninterval = 500\nevent = task-clock\n"
                               "uprobe = libc.so.6:malloc\nmax-overhead = 0.5\naccounting = tasks\nno-sample\n"],
        "fuzz_fail_on": ["tma_backend_bound>+5pp,wall_ns>+5%,thread[gt-*].oncpu_ns>=+10%,function.calls<-3"],
        "fuzz_diff_report": [json.dumps(REPORT, indent=1)],
        "fuzz_http": ["\x00127.0.0.1:9464", "\x00[::1]:0", "\x01GET\n/metrics", "\x01POST\n/",
                      "\x02GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", "\x02GET / HTTP/1.0\r\n\r\n"],
        "fuzz_uprobe_spec": ["libz.so.1:inflate*", ":deflate", "libelf:elf_[bg]*", "x:json_object_get_*",
                             "libstdc++.so.6:std::vector*", "a:elf_begn", "/lib/../usr/lib/./x86_64-linux-gnu/libz.so:crc*",
                             "/proc/self/exe:main"],
        "fuzz_kallsyms": ["ffffffff81000000 T _stext\nffffffff81000100 t __pfx_do_thing\nffffffff81000110 t do_thing\n"
                          "ffffffff81000110 T do_thing_alias\nffffffff81000200 D some_data\n"
                          "ffffffffc0001000 t nvme_probe\t[nvme]\nffffffffc0002000 t bpf_prog_x\t[bpf]\n",
                          "0000000000000000 T _stext\n", "ffffffff81000200 D some_data\n"],
        "fuzz_cgroup_path": ["cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n\0/sys/fs/cgroup/system.slice/x.service\n"
                             "/sys/fs/cgroup\n/sys/fs/cgroupx\n/other\n",
                             "proc /proc proc rw 0 0\ncgroup2 /a\\040b cgroup2 rw 0 0\n\0/a b/c\n"],
    }
    for i, t in enumerate(texts.get(name, [])):
        with open(os.path.join(d, f"seed{i}"), "w") as f:
            f.write(t)
    if name in ("fuzz_elfsyms", "fuzz_debugfile"):
        tiny_elf(d, work)
    if name == "fuzz_debugfile":    # one with a .gnu_debuglink too
        subprocess.run(["objcopy", "--add-gnu-debuglink=" + os.path.join(d, "libt.so"), os.path.join(d, "libt.so"),
                        os.path.join(d, "libt-link.so")], check=True, capture_output=True)
    elif name == "fuzz_ldcache":
        lib = [("libx.so.1", "/l/libx.so.1", 0), ("libx.so.1", "/l/libx.so.1", 1 << 62), ("liby.so", "y", 0)]
        for i, (want, cache) in enumerate([("libx.so", ldcache(lib)), ("libx.so.1", ldcache(lib, old=2)),
                                           ("libc.so.6", open("/etc/ld.so.cache", "rb").read())]):
            with open(os.path.join(d, f"cache{i}"), "wb") as f:
                f.write(want.encode() + b"\0" + cache)
    elif name == "fuzz_kallsyms":
        with open("/proc/kallsyms") as src:   # the core kernel's first lines, the modules' last
            lines = src.readlines()
        with open(os.path.join(d, "kallsyms"), "w") as f:
            f.writelines(lines[:100] + lines[-100:])
    elif name == "fuzz_cgroup_path":
        with open("/proc/self/mounts") as src, open(os.path.join(d, "mounts"), "w") as f:
            f.write(src.read() + "\0" + "/sys/fs/cgroup/user.slice\n")
    elif name == "fuzz_procmaps":
        with open("/proc/self/maps") as src, open(os.path.join(d, "maps"), "w") as f:
            f.write(src.read())
    return [d] + ([os.path.join(ROOT, "tests", "data")] if name == "fuzz_csv" else [])


@pytest.mark.parametrize("fuzzer", FUZZERS, ids=[os.path.basename(f) for f in FUZZERS])
def test_fuzz_short_run(fuzzer, tmp_path):
    corpus, seed_dir = tmp_path / "corpus", tmp_path / "seeds"
    corpus.mkdir()
    seed_dir.mkdir()
    extra = seeds(os.path.basename(fuzzer), str(seed_dir), str(tmp_path))
    # a crashing input is written to tmp_path (named in the report), not to the repository
    r = subprocess.run([fuzzer, f"-max_total_time={SECONDS}", "-rss_limit_mb=2048", "-print_final_stats=1",
                        f"-artifact_prefix={tmp_path}/", str(corpus), *extra], capture_output=True, text=True,
                       timeout=int(SECONDS) + 120)
    assert r.returncode == 0, r.stderr[-3000:]
    runs = re.search(r"stat::number_of_executed_units: (\d+)", r.stderr)
    assert runs and int(runs.group(1)) > 100, r.stderr[-2000:]
    print(f"{os.path.basename(fuzzer)}: {runs.group(1)} runs in {SECONDS} s")


def test_fuzzers_built():
    names = {os.path.basename(f) for f in FUZZERS}
    assert {"fuzz_csv", "fuzz_events", "fuzz_uprobe_spec", "fuzz_elfsyms", "fuzz_perfmap", "fuzz_procmaps",
            "fuzz_daemon_config", "fuzz_fail_on", "fuzz_diff_report", "fuzz_http", "fuzz_ldcache", "fuzz_kallsyms",
            "fuzz_debugfile", "fuzz_cgroup_path"} <= names, names
