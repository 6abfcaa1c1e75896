# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""tmabpf roofs: the host's measured roofs against likwid-bench run independently (the
kernel for the CPU's ISA and the working sets chosen here from /proc/cpuinfo and sysfs, not
read back from tmabpf's file), against mbw for DRAM, the cache file and its refusals."""
import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import TMABPF

pytestmark = pytest.mark.skipif(not shutil.which("likwid-bench"), reason="likwid-bench missing: make deps")

SECONDS = "0.3"
REPEATS = 3


def roofs(*args, timeout=900, env=None):
    return subprocess.run([TMABPF, "roofs", *args], capture_output=True, text=True, timeout=timeout, env=env)


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("roofs") / "roofs.json")
    r = roofs("--one-thread", "--repeats", str(REPEATS), "--seconds", SECONDS, "--quiet", "--file", path)
    assert r.returncode == 0, r.stderr
    with open(path) as f:
        doc = json.load(f)
    return path, doc, r


def figure(doc, kind, level=None, precision=None, threads="1"):
    if kind == "flops":
        e, = [e for e in doc["flops"] if e["precision"] == precision and e["threads"] == threads]
        return e["flop_per_s"]
    e, = [e for e in doc["bandwidth"] if e["kind"] == kind and e["level"] == level and e["threads"] == threads]
    return e["bytes_per_s"]


def isa_suffix(fma):
    """likwid-bench's test suffix for this CPU's widest ISA, from /proc/cpuinfo."""
    with open("/proc/cpuinfo") as f:
        flags = set(re.search(r"^flags\s*:(.*)$", f.read(), re.M).group(1).split())
    if "avx512f" in flags:
        return "_avx512_fma" if fma else "_avx512"
    if "avx2" in flags and "fma" in flags:
        return "_avx_fma" if fma else "_avx"
    return "_sse"


def cache_bytes(level):
    base = "/sys/devices/system/cpu/cpu0/cache"
    for idx in sorted(os.listdir(base)):
        if not idx.startswith("index"):
            continue
        with open(f"{base}/{idx}/level") as f:
            lvl = int(f.read())
        with open(f"{base}/{idx}/type") as f:
            kind = f.read().strip()
        if lvl == level and kind != "Instruction":
            with open(f"{base}/{idx}/size") as f:
                s = f.read().strip()
            return int(s[:-1]) * (1024 * 1024 if s.endswith("M") else 1024)
    return 0


def likwid_median(test, ws_bytes, n=REPEATS):
    """likwid-bench's own figure, per second, median of n runs."""
    key = "MFlops/s" if test.startswith("peakflops") else "MByte/s"
    vals = []
    for _ in range(n):
        r = subprocess.run(["likwid-bench", "-t", test, "-W", f"N:{ws_bytes // 1000}kB:1", "-s", SECONDS],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        vals.append(float(re.search(rf"^{re.escape(key)}:\s*([\d.]+)", r.stdout, re.M).group(1)) * 1e6)
    return sorted(vals)[n // 2]


def mbw_copy_bytes_per_s(mib, n=REPEATS):
    """mbw's one whole-array memcpy (-t0) of a mib-MiB array, as bytes moved per second (read + written:
    mbw states the array's MiB per second), the median of n runs of 10 copies, as likwid_median's."""
    vals = []
    for _ in range(n):
        r = subprocess.run(["mbw", "-q", "-n", "10", "-t0", str(mib)], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        avg = re.search(r"^AVG\s.*Copy:\s*([\d.]+) MiB/s", r.stdout, re.M)
        vals.append(2 * float(avg.group(1)) * 1024 * 1024)
    return sorted(vals)[n // 2]


def agree(ours, theirs, tol=0.10):
    return abs(ours - theirs) <= tol * theirs


def within_tolerance_over_attempts(ours_fn, theirs_fn, tol=0.10, attempts=4):
    """A busy 2-CPU VM gives noisy bandwidths: the two, measured back to back, agree in one of
    up to `attempts` fresh pairs."""
    seen = []
    for _ in range(attempts):
        ours, theirs = ours_fn(), theirs_fn()
        seen.append((ours, theirs))
        if agree(ours, theirs, tol):
            return seen
    pytest.fail(f"no pair within {tol:.0%}: {seen}")


def measure_again(tmp_path, name, kind, level, **which):
    """One figure measured anew by tmabpf roofs --only NAME."""
    first = []

    def ours():
        out = str(tmp_path / f"{name}.json")
        r = roofs("--one-thread", "--only", name, "--repeats", str(REPEATS), "--seconds", SECONDS, "--quiet",
                  "--file", out)
        assert r.returncode == 0, r.stderr
        with open(out) as f:
            doc = json.load(f)
        assert len(doc["bandwidth"]) + len(doc["flops"]) == 1, doc
        return figure(doc, kind, **(which or {"level": level}))["median"]
    return ours


def test_peak_flops_agree_with_likwid_bench(measured, tmp_path):
    _, doc, _ = measured
    for prec, prefix in (("sp", "peakflops_sp"), ("dp", "peakflops")):
        test = prefix + isa_suffix(True)
        ours = figure(doc, "flops", precision=prec)
        assert ours["likwid_test"] == test, ours
        # the suite's figure first, then fresh pairs: a busy VM moves either (CI once: dp 130.4 against
        # likwid-bench's 118.4 GFLOP/s, tmabpf's repeats 107 .. 133)
        figures = [ours["median"]]
        fresh = measure_again(tmp_path, f"peak-fp{32 if prec == 'sp' else 64}", "flops", None, precision=prec)
        within_tolerance_over_attempts(lambda: figures.pop() if figures else fresh(),
                                       lambda: likwid_median(test, cache_bytes(1) // 2))


@pytest.mark.parametrize("level,ws", [("L2", lambda: cache_bytes(2) // 2),
                                      ("DRAM", lambda: max(4 * cache_bytes(3), 256 << 20))])
def test_read_bandwidth_agrees_with_likwid_bench(measured, tmp_path, level, ws):
    _, doc, _ = measured
    test = "load" + isa_suffix(False)
    fig = figure(doc, "read", level=level)
    assert fig["likwid_test"] == test and fig["working_set_bytes"] >= ws() * 0.99, fig
    within_tolerance_over_attempts(measure_again(tmp_path, f"read-{level}", "read", level),
                                   lambda: likwid_median(test, ws()))


def test_dram_copy_against_mbw(measured, tmp_path):
    """mbw (Debian's memory bandwidth benchmark) copies its array with one glibc memcpy, likwid-bench's
    copy_* with ordinary vector stores: the same DRAM traffic (both count what is read and what is
    written, neither the write-allocate), two implementations."""
    _, doc, _ = measured
    fig = figure(doc, "copy", level="DRAM")
    assert fig["likwid_test"] == "copy" + isa_suffix(False), fig
    mib = fig["working_set_bytes"] // 2 // (1 << 20)  # copy's two arrays
    # 6 pairs, not 4: on a 2-vCPU VM at load average 8-12, 3 of 8 pairs agreed within 10 % (ratios 0.39 .. 1.84)
    within_tolerance_over_attempts(measure_again(tmp_path, "copy-DRAM", "copy", "DRAM"),
                                   lambda: mbw_copy_bytes_per_s(mib), attempts=6)


def test_the_file_records_the_host_and_show_prints_it(measured):
    path, doc, r = measured
    with open("/proc/cpuinfo") as f:
        model = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M).group(1)
    assert doc["format"] == 2 and doc["host"]["cpu"] == model and doc["host"]["cpus"] == os.cpu_count()
    assert doc["threads_one"] == 1 and all(e["threads"] == "1" for e in doc["flops"] + doc["bandwidth"])
    for e in doc["flops"] + doc["bandwidth"]:
        f = e.get("flop_per_s") or e["bytes_per_s"]
        assert f["repeats"] == REPEATS and f["min"] <= f["median"] <= f["max"], e
    s = roofs("--show", "--file", path)
    assert s.returncode == 0, s.stderr
    assert s.stdout.splitlines()[0].startswith(f"roofs of {model} ")
    assert re.search(r"^peak fp32 +\S+ GFLOP/s", s.stdout, re.M) and re.search(r"^read DRAM +\S+ GB/s", s.stdout, re.M)
    # what the measuring run printed is what --show prints
    assert r.stdout == s.stdout


def test_show_without_roofs_says_how_to_measure(tmp_path):
    r = roofs("--show", "--file", str(tmp_path / "none.json"))
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [
        f"tmabpf: error: no roofs measured on this host ({tmp_path / 'none.json'}): run 'sudo tmabpf roofs'"]


def test_foreign_and_broken_files_are_refused(measured, tmp_path):
    path, doc, _ = measured
    for what, edit in (("cpu", lambda d: d["host"].update(cpu="Some Other CPU")),
                       ("microcode", lambda d: d["host"].update(microcode="0xdead")),
                       ("cpus", lambda d: d["host"].update(cpus=doc["host"]["cpus"] + 7))):
        d = json.loads(json.dumps(doc))
        edit(d)
        p = tmp_path / f"{what}.json"
        p.write_text(json.dumps(d))
        r = roofs("--show", "--file", str(p))
        assert r.returncode == 1 and r.stdout == "", what
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "measured on another host" in lines[0] and "tmabpf roofs" in lines[0], lines
    for name, text in (("garbage.json", "not json"), ("format.json", json.dumps({**doc, "format": 99})),
                       ("negative.json", json.dumps({**doc, "flops": [{**doc["flops"][0], "flop_per_s": {
                           "median": -1, "min": -1, "max": -1, "repeats": 1}}]}))):
        p = tmp_path / name
        p.write_text(text)
        r = roofs("--show", "--file", str(p))
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 1 and len(lines) == 1 and "not a tmabpf roofs file" in lines[0], (name, lines)
    # format 1 measured copy with non-temporal stores (copy_mem_*): refused, never read as today's copy
    old = {**doc, "format": 1, "bandwidth": [{**e, "bytes_per_s": {**e["bytes_per_s"], "likwid_test": "copy_mem_avx512"}}
                                             if e["kind"] == "copy" else e for e in doc["bandwidth"]]}
    (tmp_path / "format1.json").write_text(json.dumps(old))
    r = roofs("--show", "--file", str(tmp_path / "format1.json"))
    assert r.returncode == 1 and r.stdout == "", r.stdout
    assert r.stderr.strip().splitlines() == [
        f"tmabpf: error: {tmp_path / 'format1.json'}: roofs of format 1, measured by an older tmabpf (its copy "
        "figures used non-temporal stores); this one reads format 2: measure again with 'tmabpf roofs'"]
    os.mkfifo(tmp_path / "fifo")
    r = roofs("--show", "--file", str(tmp_path / "fifo"), timeout=10)
    assert r.returncode == 1 and "not a regular file" in r.stderr


def test_missing_likwid_bench_is_one_line_with_the_fix(tmp_path):
    env = {**os.environ, "PATH": str(tmp_path)}
    r = roofs("--file", str(tmp_path / "r.json"), "--quiet", env=env)
    assert r.returncode == 1 and not (tmp_path / "r.json").exists()
    assert r.stderr.strip().splitlines() == [
        "tmabpf: error: roofs: likwid-bench not found: install Debian's likwid package ('make deps', or "
        "'apt install likwid')"]


@pytest.mark.parametrize("args,msg", [(["--repeats", "0"], "--repeats"), (["--seconds", "x"], "--seconds"),
                                      (["--seconds", "100"], "--seconds"), (["extra"], "unexpected argument"),
                                      (["--bogus"], "--bogus"), (["--only", "read-L4"], "read-L4")])
def test_bad_usage_is_one_line_and_exit_2(args, msg):
    r = roofs(*args)
    assert r.returncode == 2 and r.stdout == "" and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert msg in r.stderr
