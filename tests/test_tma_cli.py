# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""The TMA engine through the CLI: list, --dry-run (no PMU needed), analyze of perf stat CSVs.
The formulas and encodings themselves are checked against perf 6.12 in tests/test_tma_perf.py."""
import json
import os

import pytest

from conftest import ROOT, load_json, run_tmabpf
from wrapped_text import joined_lines

DATA = os.path.join(ROOT, "tests", "data")
CPUS = ["skylake", "skylakex", "cascadelakex", "icelakex", "sapphirerapids", "emeraldrapids", "amdzen4", "amdzen5",
        "neoverse-v1", "neoverse-n2", "neoverse-v2"]


def test_list_shows_host_and_recipes():
    r = run_tmabpf(["list"])
    assert r.returncode == 0, r.stderr
    assert "host CPU:" in r.stdout and "sapphirerapids" in r.stdout


@pytest.mark.parametrize("cpu", CPUS)
def test_dry_run_every_cpu(cpu):
    r = run_tmabpf(["--dry-run", "--cpu", cpu, "--tma=1"])
    assert r.returncode == 0, r.stderr
    lines = [l for l in joined_lines(r.stdout) if l.startswith("[")]  # (wrapped to 80 columns)
    assert lines, r.stdout
    assert all("config=" in l and "need=" in l and "leader=" in l for l in lines)
    assert sum("leader=yes" in l for l in lines) >= 1


def test_dry_run_user_events_with_libpfm_and_raw_names():
    r = run_tmabpf(["--dry-run", "--cpu", "skylakex", "-e",
                    "core_power.lvl2_turbo_license,r01c2,cpu/event=0xa3,umask=0x14,cmask=20/"])
    assert r.returncode == 0, r.stderr
    out = r.stdout.lower()
    assert "config=0x2028" in out  # CORE_POWER.LVL2_TURBO_LICENSE: event 0x28, umask 0x20
    assert "config=0x1c2" in out and "config=0x140014a3" in out


def test_dry_run_without_recipe_lists_software_defaults(tmp_path):
    """A CPU without a recipe (Rocket Lake, family 6 model 167), whatever this host is."""
    info = tmp_path / "cpuinfo"
    info.write_text("vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 167\nstepping\t: 1\n")
    r = run_tmabpf(["--dry-run"], env=dict(os.environ, TMABPF_CPUINFO=str(info)))
    assert r.returncode == 0, r.stderr
    assert "CPU (none)" in r.stdout and "task-clock" in r.stdout and "page-faults" in r.stdout, r.stdout


def test_analyze_llm_decode_profile_json():
    r = run_tmabpf(["analyze", os.path.join(DATA, "skx_llm_decode.csv"), "--cpu", "skylakex", "--tma=3", "--json"])
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)
    assert m["tma_backend_bound"] > 50 and m["tma_dram_bound"] > m["tma_l3_bound"]
    total = m["tma_frontend_bound"] + m["tma_bad_speculation"] + m["tma_backend_bound"] + m["tma_retiring"]
    assert abs(total - 100) < 0.5


def test_analyze_text_names_bottleneck_path():
    r = run_tmabpf(["analyze", os.path.join(DATA, "skx_llm_decode.csv"), "--cpu", "skylakex", "--tma=3"])
    assert r.returncode == 0, r.stderr
    assert "Backend_Bound" in r.stdout and "›" in r.stdout


@pytest.mark.parametrize("args,needle", [
    (["analyze", "/nonexistent.csv", "--cpu", "skylakex"], "nonexistent"),
    (["analyze", os.path.join(DATA, "bad_line.csv"), "--cpu", "skylakex"], "line"),
    (["analyze", os.path.join(DATA, "skx_llm_decode.csv"), "--cpu", "pentium4"], "pentium4"),
    (["--dry-run", "--cpu", "pentium4"], "unknown CPU"),
])
def test_tma_cli_errors(args, needle):
    r = run_tmabpf(args)
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and needle in lines[0], r.stderr


def test_no_pmu_run_says_tma_skipped_and_has_no_hardware_numbers(tmp_path):
    out = str(tmp_path / "r.json")
    r = run_tmabpf(["--tma=2", "-d", "0.3", "--json", out, "--quiet"])
    rep = load_json(out)
    if rep["host"]["pmu"]:
        pytest.skip("host has a PMU")
    assert r.returncode == 0, r.stderr
    assert any(w.startswith("hardware counters unavailable") for w in rep["warnings"]) and r.stderr == "", r.stderr
    assert all(t["tma"] == {} for t in rep["threads"])
    assert all(e["type"] == "software" for e in rep["events"])


BAD_CSV = [
    ("empty", b"", "line 1: empty file"),
    ("comments only", b"# started on Mon\n\n", "only comments"),
    ("binary", b"\x7fELF\x02\x01\x01\x00\x00\x00" * 8, "binary data"),
    ("metric-only", b"%  tma_frontend_bound,%  tma_backend_bound,\n12.0,60.0,\n", "--metric-only"),
    ("negative count", b"1000,,cycles,5,100.00,,\n-10,,instructions,5,100.00,,\n", "line 2, column 1: count '-10' is negative"),
    ("mixed per-thread and aggregated", b"app-12,1000,,cycles,5,100.00,,\n1000,,cycles,5,100.00,,\n", "line 2"),
    ("cut short", b"1000,,cycles,5,100.00,,\n2000,,instructions,5,100.00,,\n30", "line 3: the file ends in the middle"),
]


@pytest.mark.parametrize("what,data,needle", BAD_CSV, ids=[b[0] for b in BAD_CSV])
def test_analyze_bad_csv_one_line_exit_2(tmp_path, what, data, needle):
    """Issue 15's bad-input list and issue 22's analyze cases: one line naming the line and the fix."""
    f = tmp_path / "in.csv"
    f.write_bytes(data)
    r = run_tmabpf(["analyze", str(f), "--cpu", "skylakex"])
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and needle in lines[0], r.stderr


def test_analyze_directory_one_line_exit_2(tmp_path):
    r = run_tmabpf(["analyze", str(tmp_path), "--cpu", "skylakex"])
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "is a directory" in r.stderr, r.stderr


def test_analyze_without_tma_events_prints_the_perf_command():
    r = run_tmabpf(["analyze", os.path.join(DATA, "per_cpu_raw.csv"), "--cpu", "sapphirerapids"])
    assert r.returncode == 2
    err = r.stderr.splitlines()
    assert "has none of the events TMA needs on sapphirerapids" in err[0]
    assert any(l.startswith("  read: ") and "cycles" in l for l in err), r.stderr
    cmd = next(l for l in err if "perf stat -x, -o" in l and " -e " in l)
    events = cmd.split(" -e ")[1].split()[0].split(",")
    assert "topdown.slots_p" in events and "topdown.backend_bound_slots" in events, cmd
    assert "slots" not in events and not any(e.startswith("topdown-") for e in events), cmd  # no pseudo events
    assert any("-M TopdownL1,TopdownL2" in l for l in err), r.stderr


@pytest.mark.parametrize("csv,kind", [("skx_per_thread.csv", "thread"), ("skx_per_cpu.csv", "CPU"),
                                      ("skx_per_core.csv", "core"), ("skx_per_socket_interval.csv", "socket")])
def test_analyze_per_row_files(csv, kind):
    """--per-thread, -A, --per-core, --per-socket: one tree per row key plus the total."""
    r = run_tmabpf(["analyze", os.path.join(DATA, csv), "--cpu", "skylakex", "--json"])
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    assert [x["kind"] for x in rows] == [kind, kind, "total"]
    total = rows[-1]["tma"]
    assert abs(rows[0]["tma"]["tma_backend_bound"] - 69) < 1e-9 and total["tma_ports_utilization"] is None
    assert "tma_microcode_sequencer" not in total  # neither computable nor an ancestor of a computable node
    assert rows[-1]["why_null"]["tma_ports_utilization"].startswith("missing: ")
    r = run_tmabpf(["analyze", os.path.join(DATA, csv), "--cpu", "skylakex"])
    assert r.returncode == 0 and f"2 {kind}s" in r.stdout and "\ntotal " in r.stdout, r.stdout


def test_analyze_every_level_and_perf_rules(tmp_path):
    """All level-3 nodes under Heavy_Operations from their events; an all-zero CSV gives
    tma_l1_bound = max(NaN, 0) = 0 and null nodes with 'division by zero' (perf 6.12 expr.y)."""
    ev = ["CPU_CLK_UNHALTED.THREAD", "IDQ_UOPS_NOT_DELIVERED.CORE", "UOPS_ISSUED.ANY", "UOPS_RETIRED.RETIRE_SLOTS",
          "INT_MISC.RECOVERY_CYCLES", "UOPS_RETIRED.MACRO_FUSED", "INST_RETIRED.ANY", "IDQ.MS_UOPS",
          "CYCLE_ACTIVITY.STALLS_MEM_ANY", "CYCLE_ACTIVITY.STALLS_L1D_MISS"]
    f = tmp_path / "l3.csv"
    f.write_text("".join(f"{(i + 1) * 10**8},,{e},1000,100.00,,\n" for i, e in enumerate(ev)))
    m = json.loads(run_tmabpf(["analyze", str(f), "--cpu", "skylakex", "--json"]).stdout)
    assert m["tma_microcode_sequencer"] is not None and m["tma_few_uops_instructions"] is not None, m
    z = tmp_path / "zero.csv"
    z.write_text("".join(f"0,,{e},1000,100.00,,\n" for e in ev))
    m = json.loads(run_tmabpf(["analyze", str(z), "--cpu", "skylakex", "--json"]).stdout)
    assert m["tma_l1_bound"] == 0 and m["tma_frontend_bound"] is None, m
    assert m["why_null"]["tma_frontend_bound"].startswith("division by zero"), m
