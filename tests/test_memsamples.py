# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""--mem-samples: the address path for real with the page-faults source (every fault of
groundtruth's region:PAGES falls in the mapping it created, one per page), per-function
counts, the dry-run event against perf 6.12's own event table (Intel PEBS load latency), AMD IBS,
and bad input / no PMU."""
import json
import os
import re

import pytest

import perf_oracle
from conftest import gt_thread, load_json, run_tmabpf, start_groundtruth
from wrapped_text import joined_lines

PAGES = 300


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mem")
    gt_out, out = str(tmp / "gt.json"), str(tmp / "tm.json")
    gt = start_groundtruth([f"region:{PAGES}", "sleep:300"], gt_out)
    r = run_tmabpf(["-p", str(gt.pid), "--mem-samples=page-faults", "--json", out])
    gt.communicate(timeout=60)
    assert gt.returncode == 0
    assert r.returncode == 0, r.stderr
    return {"gt": load_json(gt_out), "tm": load_json(out), "text": r.stdout, "pid": gt.pid}


def test_region_faults_in_its_mapping(run):
    """Every fault address in the region is binned into the one mapping that holds the region,
    and that mapping's count is the number of pages written."""
    region = gt_thread(run["gt"], "gt-region")["region"]
    ms = run["tm"]["mem_samples"]
    hits = [b for b in ms["by_mapping"] if b["start"] < region["end"] and b["end"] > region["start"]]
    assert len(hits) == 1, hits
    b = hits[0]
    assert b["start"] <= region["start"] and region["end"] <= b["end"]
    assert b["count"] == PAGES
    assert region["start"] <= b["addr_min"] and b["addr_max"] < region["end"]
    assert b["pid"] == run["pid"]
    assert b["mapping"].startswith("[anon:")


def test_counts_agree(run):
    """Function counts add up to the samples; the region's faults are in run_region; the total
    equals the spine's page-faults counter for the process (both count every fault)."""
    ms = run["tm"]["mem_samples"]
    assert sum(f["count"] for f in ms["by_function"]) == ms["samples"]
    assert sum(b["count"] for b in ms["by_mapping"]) == ms["samples"]
    fn = {(f["module"], f["symbol"]): f["count"] for f in ms["by_function"]}
    assert fn.get(("groundtruth", "run_region")) == PAGES, fn
    faults = sum(t["counters"]["page-faults"] for t in run["tm"]["threads"])
    assert abs(ms["samples"] - faults) <= 2, (ms["samples"], faults)
    assert ms["lost"] == 0 and ms["source"] == "page-faults" and ms["sample_period"] == 1


def test_text_tables(run):
    assert "memory samples (--mem-samples: page-faults" in run["text"]
    assert re.search(r"run_region\s+groundtruth\s+%d" % PAGES, run["text"])


@pytest.mark.parametrize("cpu", ["skylakex", "icelakex", "sapphirerapids", "emeraldrapids"])
def test_dry_run_intel_matches_perf(cpu, tmp_path):
    """The PEBS load-latency event --dry-run prints equals perf 6.12's table for that CPU (event,
    umask, ldlat in config1 = MSR 0x3F6, sample period), and perf says it must be precise."""
    why = perf_oracle.perf_missing()
    if why:
        pytest.skip(why)
    r = run_tmabpf(["--dry-run", "--cpu", cpu, "--mem-samples"])
    assert r.returncode == 0, r.stderr
    line = next(l for l in joined_lines(r.stdout) if l.startswith("mem-samples:"))  # (wrapped to 80 columns)
    m = re.search(r"mem-samples: (\S+): pmu=cpu type=4 config=(0x[0-9a-f]+) config1=(0x[0-9a-f]+) precise_ip=(\d)"
                  r" event=(0x[0-9a-f]+),umask=(0x[0-9a-f]+),ldlat=(\d+) sample_period=(\d+)"
                  r" sample_type=IP\|TID\|ADDR", line)
    assert m, line
    ev = perf_oracle.events(perf_oracle.CPUS[cpu][0], tmp_path)[m.group(1).lower()]
    t = perf_oracle.terms(ev["terms"])
    assert int(m.group(5), 16) == t["event"] and int(m.group(6), 16) == t["umask"], (line, ev)
    assert int(m.group(3), 16) == t["ldlat"] == int(m.group(7)), (line, ev)  # ldlat: config1:0-15 (MSR 0x3F6)
    assert int(m.group(2), 16) & 0xffff == t["umask"] << 8 | t["event"]
    assert int(m.group(8)) == t["period"], (line, ev)
    assert int(m.group(4)) >= 1 and "Must be precise" in ev["desc"] and "Supports address" in ev["desc"], ev
    # the kernel's PMU_FL_MEM_LOADS_AUX (arch/x86/events/intel/core.c): Sapphire and Emerald Rapids
    aux_cpu = cpu in ("sapphirerapids", "emeraldrapids")
    assert ("group_leader=mem-loads-aux" in line) == aux_cpu
    if aux_cpu:
        aux = re.search(r"mem-loads-aux\(.* event=(0x[0-9a-f]+),umask=(0x[0-9a-f]+)\)", line)
        assert aux and int(aux.group(1), 16) == 0x03 and int(aux.group(2), 16) == 0x82


def test_dry_run_amd_ibs():
    r = run_tmabpf(["--dry-run", "--cpu", "amdzen4", "--mem-samples"])
    assert r.returncode == 0, r.stderr
    line = next(l for l in joined_lines(r.stdout) if l.startswith("mem-samples:"))  # (wrapped to 80 columns)
    assert "pmu=ibs_op" in line and "cnt_ctl=1 l3missonly=1" in line and "sample_type=IP|TID|ADDR" in line
    m = re.search(r"config=(0x[0-9a-f]+)", line)
    assert int(m.group(1), 16) == (1 << 19) | (1 << 16)


def test_no_pmu_one_line_and_run_goes_on(tmp_path):
    """--mem-samples (pmu) on a host without PMU support: one warning line, exit 0, the rest runs."""
    if os.path.exists("/sys/bus/event_source/devices/cpu/type"):
        pytest.skip("this host has a core PMU")
    out = str(tmp_path / "tm.json")
    r = run_tmabpf(["--mem-samples", "--json", out, "--", "true"])
    assert r.returncode == 0, r.stderr
    lines = [l for l in r.stderr.splitlines() if "--mem-samples" in l]
    assert len(lines) == 1 and "fix:" in lines[0], r.stderr
    tm = load_json(out)
    assert tm["mem_samples"] is None and tm["threads"]
    assert any("--mem-samples" in w for w in tm["warnings"])


@pytest.mark.parametrize("arg", ["--mem-samples=bogus", "--mem-samples=", "--mem-samples=page-faults,x"])
def test_malformed_source(arg):
    r = run_tmabpf([arg, "-d", "1"])
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "--mem-samples" in r.stderr
