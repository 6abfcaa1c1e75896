# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Short libFuzzer runs (ASan + UBSan) of every parser that reads what tmabpf does not control:
perf CSV, event specs, --uprobe specs, ELF files, perf maps, /proc/PID/maps, the daemon's config,
--fail-on budgets, diff's reports, HTTP requests.  Longer runs by hand:
build/fuzz/fuzz_X -max_total_time=600 CORPUS_DIR (TMABPF_FUZZ_SECONDS sets the short run)."""
import glob
import json
import os
import re
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
        "fuzz_uprobe_spec": ["libc.so.6:mall*", ":main", "/proc/self/exe:LLVMFuzzer*", "libm:cos"],
    }
    for i, t in enumerate(texts.get(name, [])):
        with open(os.path.join(d, f"seed{i}"), "w") as f:
            f.write(t)
    if name == "fuzz_elfsyms":
        tiny_elf(d, work)
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
    r = subprocess.run([fuzzer, f"-max_total_time={SECONDS}", "-rss_limit_mb=2048", "-print_final_stats=1",
                        str(corpus), *extra], capture_output=True, text=True, timeout=int(SECONDS) + 120)
    assert r.returncode == 0, r.stderr[-3000:]
    runs = re.search(r"stat::number_of_executed_units: (\d+)", r.stderr)
    assert runs and int(runs.group(1)) > 100, r.stderr[-2000:]
    print(f"{os.path.basename(fuzzer)}: {runs.group(1)} runs in {SECONDS} s")


def test_fuzzers_built():
    names = {os.path.basename(f) for f in FUZZERS}
    assert {"fuzz_csv", "fuzz_events", "fuzz_uprobe_spec", "fuzz_elfsyms", "fuzz_perfmap", "fuzz_procmaps",
            "fuzz_daemon_config", "fuzz_fail_on", "fuzz_diff_report", "fuzz_http"} <= names, names
